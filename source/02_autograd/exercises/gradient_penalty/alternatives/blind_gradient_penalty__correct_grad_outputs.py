"""Correct: xhat as a fresh leaf built under no_grad (lerp), grad_outputs=ones_like(scores) instead of a sum, per-sample norm with vector_norm over all non-batch dims. (written blind, from the release alone)."""
CELL = 'gradient_penalty'
SOURCE = '''
def gradient_penalty(critic, real, fake, alpha):
    """Return mean_i (||d critic(xhat)/d xhat_i||_2 - 1)^2 for xhat = alpha*real + (1-alpha)*fake, a 0-dim tensor in the critic's graph."""
    with torch.no_grad():
        xhat = torch.lerp(fake, real, alpha)          # fake + alpha * (real - fake), no history
    xhat.requires_grad_(True)
    scores = critic(xhat)
    (g,) = torch.autograd.grad(scores, xhat, grad_outputs=torch.ones_like(scores), create_graph=True)
    norms = torch.linalg.vector_norm(g, ord=2, dim=tuple(range(1, g.dim())))
    return ((norms - 1) ** 2).mean()
'''
