"""The "- 1" is missing: penalises the squared gradient norm instead of its distance to 1."""
CELL = "gradient_penalty"
KIND = "wrong-value"
NOTE = "The penalty pushes each sample's gradient norm toward 1 by penalising its distance to 1; squaring the norm alone pushes the gradient toward zero instead."
FAILS = ['test_gradient_penalty_value', 'test_gradient_penalty_in_graph', 'test_gradient_penalty_double_backward']
SOURCE = '''
def gradient_penalty(critic, real, fake, alpha):
    """Return mean_i (||d critic(xhat)/d xhat_i||_2 - 1)^2 for xhat = alpha*real + (1-alpha)*fake, a 0-dim tensor in the critic's graph."""
    xhat = (alpha * real + (1 - alpha) * fake).detach().requires_grad_(True)
    scores = critic(xhat)
    (grads,) = torch.autograd.grad(scores.sum(), xhat, create_graph=True)
    norms = grads.flatten(1).norm(2, dim=1)
    return (norms ** 2).mean()
'''
