"""Returns torch.autograd.grad's answer (retain_graph=True): the right values, from the engine instead of the student's own walk."""
CELL = "run_backward"
KIND = "contract"
NOTE = "The exercise is to run the nodes yourself; torch.autograd.grad runs the autograd engine, which runs the nodes' pre-hooks (a node called directly does not)."
FAILS = ['test_run_backward_own_engine']
SOURCE = '''
def run_backward(outputs, inputs, grad_outputs=None):
    """Let the engine do it."""
    ins = [inputs] if isinstance(inputs, torch.Tensor) else list(inputs)
    return torch.autograd.grad(outputs, ins, grad_outputs, allow_unused=True, retain_graph=True)
'''
