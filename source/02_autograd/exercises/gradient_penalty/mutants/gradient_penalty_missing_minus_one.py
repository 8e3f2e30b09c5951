"""The "- 1" is missing: penalises the squared gradient norm instead of its distance to 1."""
CELL = "gradient_penalty"
KIND = "wrong-value"
NOTE = "The penalty pushes each sample's gradient norm toward 1 by penalising its distance to 1; squaring the norm alone pushes the gradient toward zero instead."
FAILS = ['test_gradient_penalty_value', 'test_gradient_penalty_in_graph', 'test_gradient_penalty_double_backward']
#: the reference solution with these lines changed (old, new)
CHANGES = [
('''
    return ((norms - 1) ** 2).mean()
''', '''
    return (norms ** 2).mean()
'''),
]
