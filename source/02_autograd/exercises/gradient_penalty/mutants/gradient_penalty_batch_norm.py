"""The norm taken over the whole batch at once instead of per sample."""
CELL = "gradient_penalty"
KIND = "wrong-value"
NOTE = "The penalty uses one gradient norm per sample, averaged over the samples; a single norm over the whole batch's gradient is a different quantity."
FAILS = ['test_gradient_penalty_value', 'test_gradient_penalty_in_graph', 'test_gradient_penalty_double_backward']
SOURCE = '''
def gradient_penalty(critic, real, fake, alpha):
    """Return mean_i (||d critic(xhat)/d xhat_i||_2 - 1)^2 for xhat = alpha*real + (1-alpha)*fake, a 0-dim tensor in the critic's graph."""
    xhat = (alpha * real + (1 - alpha) * fake).detach().requires_grad_(True)
    scores = critic(xhat)
    (grads,) = torch.autograd.grad(scores.sum(), xhat, create_graph=True)
    return (grads.norm(2) - 1) ** 2
'''
