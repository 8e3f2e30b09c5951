"""norm(2, dim=1) without flattening: right for (B, features), wrong for images (B, C, H, W)."""
CELL = "gradient_penalty"
KIND = "edge-case"
NOTE = "Each sample's norm is taken over all its other dimensions together; a norm over dim 1 alone is right for (B, features) but gives one norm per pixel for images (B, C, H, W)."
FAILS = ['test_gradient_penalty_value', 'test_gradient_penalty_in_graph', 'test_gradient_penalty_double_backward']
SOURCE = '''
def gradient_penalty(critic, real, fake, alpha):
    """Return mean_i (||d critic(xhat)/d xhat_i||_2 - 1)^2 for xhat = alpha*real + (1-alpha)*fake, a 0-dim tensor in the critic's graph."""
    xhat = (alpha * real + (1 - alpha) * fake).detach().requires_grad_(True)
    (grads,) = torch.autograd.grad(critic(xhat).sum(), xhat, create_graph=True)
    norms = grads.norm(2, dim=1)
    return ((norms - 1) ** 2).mean()
'''
