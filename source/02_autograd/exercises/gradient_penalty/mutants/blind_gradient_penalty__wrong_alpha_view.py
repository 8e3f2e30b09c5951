"""Reshapes alpha to (B, 1) 'to be sure it broadcasts': for real/fake of rank > 2 (images) alpha no longer lines up with the batch dimension (an error, or a wrong mix when H == B). (written blind, from the release alone)."""
CELL = 'gradient_penalty'
KIND = 'edge-case'
NOTE = "alpha comes shaped (B, 1, ..., 1) to broadcast against samples of any rank; reshaping it to (B, 1) lines it up with the wrong dimensions once real and fake have more than two."
FAILS = ['test_gradient_penalty_double_backward', 'test_gradient_penalty_in_graph', 'test_gradient_penalty_value']
SOURCE = '''
def gradient_penalty(critic, real, fake, alpha):
    """Return mean_i (||d critic(xhat)/d xhat_i||_2 - 1)^2 for xhat = alpha*real + (1-alpha)*fake, a 0-dim tensor in the critic's graph."""
    alpha = alpha.view(-1, 1)
    xhat = (alpha * real + (1 - alpha) * fake).detach().requires_grad_(True)
    (g,) = torch.autograd.grad(critic(xhat).sum(), xhat, create_graph=True)
    return ((g.flatten(1).norm(2, dim=1) - 1) ** 2).mean()
'''
