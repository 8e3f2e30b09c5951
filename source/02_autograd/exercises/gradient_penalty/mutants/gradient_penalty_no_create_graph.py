"""No create_graph=True: the value is right but the penalty is a constant, so the critic gets no gradient from it."""
CELL = "gradient_penalty"
KIND = "graph"
NOTE = "Without create_graph=True the gradient itself is not recorded, so to autograd the penalty is a constant: the critic gets no gradient from it."
FAILS = ["test_gradient_penalty_in_graph", "test_gradient_penalty_double_backward"]
#: the reference solution with these lines changed (old, new)
CHANGES = [
('''
    (grads,) = torch.autograd.grad(scores.sum(), xhat, create_graph=True)
''', '''
    (grads,) = torch.autograd.grad(scores.sum(), xhat)
'''),
]
