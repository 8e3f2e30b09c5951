"""Checks p.grad is None on the model itself without clearing first: stale gradients hide the unused head (and the test backward stays on the model)."""
CELL = "preflight"
KIND = "state"
NOTE = "A gradient left from an earlier step hides an unused parameter, and a forward/backward on the model itself writes .grad and, in training mode, updates BatchNorm statistics."
FAILS = ['test_preflight_unused']
#: the reference solution with these lines changed (old, new)
CHANGES = [
('''
    """Return the PREFLIGHT_CODES that apply to this (model, loader, distributed) setup, each once."""
''', ''),
('''
    probe = copy.deepcopy(model)  # the model itself keeps its grads, buffers and mode
    probe.zero_grad(set_to_none=True)
    probe(x).sum().backward()
    if any(p.requires_grad and p.grad is None for p in probe.parameters()):
''', '''
    model(x).sum().backward()
    if any(p.requires_grad and p.grad is None for p in model.parameters()):
'''),
]
