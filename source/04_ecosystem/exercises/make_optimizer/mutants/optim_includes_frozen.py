"""Never skips frozen parameters: requires_grad=False tensors sit in the optimizer's groups."""
KIND = "contract"
NOTE = "Frozen parameters (requires_grad=False) do not belong in the optimizer: it is built over the trainable parameters only."
CELL = "make_optimizer"
FAILS = ["test_make_optimizer_frozen"]
#: the reference solution with these lines changed (old, new)
CHANGES = [
('''
        if not p.requires_grad:
            continue
''', ''),
]
