"""grad_outputs=ones_like(scores) instead of summing, fake detached alone, and torch.linalg.vector_norm per sample."""
CELL = "gradient_penalty"
SOURCE = '''
def gradient_penalty(critic, real, fake, alpha):
    """Return mean_i (||d critic(xhat)/d xhat_i||_2 - 1)^2 for xhat = alpha*real + (1-alpha)*fake, a 0-dim tensor in the critic's graph."""
    xhat = alpha * real + (1 - alpha) * fake.detach()
    xhat.requires_grad_(True)
    scores = critic(xhat)
    grads = torch.autograd.grad(outputs=scores, inputs=xhat, grad_outputs=torch.ones_like(scores),
                                create_graph=True, retain_graph=True)[0]
    norms = torch.linalg.vector_norm(grads.reshape(grads.size(0), -1), ord=2, dim=1)
    return torch.mean((norms - 1.0) ** 2)
'''
