"""Takes the norm over dim 1 only (g.norm(2, dim=1)): right for (B, features), but for images (B, C, H, W) it gives one norm per pixel over the channels, not one per sample. (written blind, from the release alone)."""
CELL = 'gradient_penalty'
KIND = 'edge-case'
NOTE = "Each sample's norm is taken over all its other dimensions together; a norm over dim 1 alone is right for (B, features) but gives one norm per pixel for images (B, C, H, W)."
FAILS = ['test_gradient_penalty_double_backward', 'test_gradient_penalty_in_graph', 'test_gradient_penalty_value']
SOURCE = '''
def gradient_penalty(critic, real, fake, alpha):
    """Return mean_i (||d critic(xhat)/d xhat_i||_2 - 1)^2 for xhat = alpha*real + (1-alpha)*fake, a 0-dim tensor in the critic's graph."""
    xhat = (alpha * real + (1 - alpha) * fake).detach().requires_grad_(True)
    (g,) = torch.autograd.grad(critic(xhat).sum(), xhat, create_graph=True)
    return ((g.norm(2, dim=1) - 1) ** 2).mean()
'''
