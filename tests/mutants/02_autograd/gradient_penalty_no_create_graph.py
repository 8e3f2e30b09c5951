"""No create_graph=True: the value is right but the penalty is a constant, so the critic gets no gradient from it."""
CELL = "gradient_penalty"
KIND = "graph"
NOTE = "Without create_graph=True the gradient itself is not recorded, so to autograd the penalty is a constant: the critic gets no gradient from it."
FAILS = ["test_gradient_penalty_in_graph", "test_gradient_penalty_double_backward"]
SOURCE = '''
def gradient_penalty(critic, real, fake, alpha):
    """Return mean_i (||d critic(xhat)/d xhat_i||_2 - 1)^2 for xhat = alpha*real + (1-alpha)*fake, a 0-dim tensor in the critic's graph."""
    xhat = (alpha * real + (1 - alpha) * fake).detach().requires_grad_(True)
    scores = critic(xhat)
    (grads,) = torch.autograd.grad(scores.sum(), xhat)
    norms = grads.flatten(1).norm(2, dim=1)
    return ((norms - 1) ** 2).mean()
'''
