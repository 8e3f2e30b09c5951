"""scores.backward(create_graph=True) and xhat.grad: the value is right, but the critic's own gradient lands in .grad."""
CELL = "gradient_penalty"
KIND = "graph"
NOTE = "backward() on the scores also adds their gradient into the critic's .grad, so the critic gets the scores' gradient besides the penalty's; the input gradient must be obtained without storing anything."
FAILS = ["test_gradient_penalty_double_backward"]
SOURCE = '''
def gradient_penalty(critic, real, fake, alpha):
    """Return mean_i (||d critic(xhat)/d xhat_i||_2 - 1)^2 for xhat = alpha*real + (1-alpha)*fake, a 0-dim tensor in the critic's graph."""
    xhat = (alpha * real + (1 - alpha) * fake).detach().requires_grad_(True)
    critic(xhat).sum().backward(create_graph=True)
    norms = xhat.grad.flatten(1).norm(2, dim=1)
    return ((norms - 1) ** 2).mean()
'''
