"""Gets g from scores.backward(create_graph=True) and xhat.grad, then critic.zero_grad() to remove the scores' gradient: right penalty, but every gradient the critic held before the call (the Wasserstein loss's, accumulated micro-batches) is wiped. (written blind, from the release alone)."""
CELL = 'gradient_penalty'
KIND = 'contract'
NOTE = "Taking the input gradient with backward() writes into the critic's .grad, and zeroing it afterwards also wipes gradients it held before the call; the penalty must leave .grad untouched."
FAILS = ['test_gradient_penalty_double_backward']
SOURCE = '''
def gradient_penalty(critic, real, fake, alpha):
    """Return mean_i (||d critic(xhat)/d xhat_i||_2 - 1)^2 for xhat = alpha*real + (1-alpha)*fake, a 0-dim tensor in the critic's graph."""
    xhat = (alpha * real + (1 - alpha) * fake).detach().requires_grad_(True)
    scores = critic(xhat)
    scores.sum().backward(create_graph=True)
    g = xhat.grad
    critic.zero_grad(set_to_none=True)        # the scores' own gradient must not stay in the critic
    return ((g.flatten(1).norm(2, dim=1) - 1) ** 2).mean()
'''
