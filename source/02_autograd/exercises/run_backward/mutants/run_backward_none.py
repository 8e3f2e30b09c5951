"""Returns None for every input."""
CELL = "run_backward"
KIND = "do-nothing"
NOTE = 'run_backward computes nothing: every entry is None.'
FAILS = ['test_run_backward_scalar', 'test_run_backward_grad_outputs', 'test_run_backward_inputs', 'test_run_backward_own_engine']
SOURCE = '''
def run_backward(outputs, inputs, grad_outputs=None):
    """Nothing computed."""
    ins = [inputs] if isinstance(inputs, torch.Tensor) else list(inputs)
    return tuple(None for _ in ins)
'''
