"""xhat built from fake without a detach (requires_grad_ only where it is a leaf): right value and critic gradients, but when fake = G(z) the penalty's gradient flows into the generator."""
CELL = "gradient_penalty"
KIND = "graph"
NOTE = "xhat built from fake keeps fake's history, so penalty.backward() reaches the generator through it; xhat has to be a fresh leaf, cut from the histories of real and fake."
FAILS = ['test_gradient_penalty_double_backward']
SOURCE = '''
def gradient_penalty(critic, real, fake, alpha):
    """Return mean_i (||d critic(xhat)/d xhat_i||_2 - 1)^2 for xhat = alpha*real + (1-alpha)*fake, a 0-dim tensor in the critic's graph."""
    xhat = alpha * real + (1 - alpha) * fake
    if not xhat.requires_grad:
        xhat.requires_grad_(True)
    (g,) = torch.autograd.grad(critic(xhat).sum(), xhat, create_graph=True)
    return ((g.flatten(1).norm(2, dim=1) - 1) ** 2).mean()
'''
