"""Does nothing: returns an empty dict without running fn."""
KIND = "do-nothing"
NOTE = "The answer does not do the work the statement asks for yet: it never runs fn under a mode, so no matrix product is counted."
CELL = "matmul_flops"
FAILS = ["test_matmul_flops_values", "test_matmul_flops_backward", "test_matmul_flops_own_mode", "test_matmul_flops_fresh"]
SOURCE = '''
def matmul_flops(fn, *args):
    return {}
'''
