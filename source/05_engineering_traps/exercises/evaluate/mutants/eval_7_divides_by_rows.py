"""Divides the summed loss by the number of rows (len(y)): right for 1-D targets, wrong when each row has several labels."""
CELL = "evaluate"
KIND = "edge-case"
NOTE = "With per-position targets of shape (N, d1, ...) every position is a target: dividing by the number of rows instead of the number of target values overstates the mean."
FAILS = ["test_evaluate_value"]
#: the reference solution with these lines changed (old, new)
CHANGES = [
('''
    """Mean cross-entropy per target value in eval mode, without a graph; every module's mode is restored."""
''', ''),
('''
                n += y.numel()
''', '''
                n += len(y)
'''),
]
