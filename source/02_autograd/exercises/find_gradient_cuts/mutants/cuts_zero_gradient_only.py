"""Flags only terms whose gradient is missing or zero (with a value that changes): a wrong nonzero gradient passes."""
CELL = "find_gradient_cuts"
KIND = "wrong-value"
NOTE = "A cut does not always zero the gradient: cut on one of several paths, the gradient is nonzero but wrong. Compare autograd's gradient with the derivative of the values, not with zero."
FAILS = ['test_find_cuts_partial', 'test_find_cuts_segmentation', 'test_find_cuts_side_effects']
#: the reference solution with these lines changed (old, new)
CHANGES = [
('''
    step = 1e-6
''', ''),
('''
        if grad is None:
            grad = torch.zeros_like(base)
''', '''
        if grad is not None and bool((grad != 0).any()):
            continue
'''),
('''
                e[i] = step
''', '''
                e[i] = 1e-6
'''),
('''
                flat[i] = (term(base + e) - term(base - e)) / (2 * step)
        if not torch.allclose(grad, numeric, rtol=1e-3, atol=1e-6):
''', '''
                flat[i] = (term(base + e) - term(base - e)) / 2e-6
        if bool((numeric.abs() > 1e-6).any()):
'''),
]
