"""Seeds every output with ones, ignoring grad_outputs (and never raises for a non-scalar output)."""
CELL = "run_backward"
KIND = "edge-case"
NOTE = 'grad_outputs is the vector of the vector-Jacobian product: a non-scalar output (or a scalar with its own grad_output) must be seeded with it, and ones stand in only for a one-element output that has none.'
FAILS = ['test_run_backward_grad_outputs']
#: the reference solution with these lines changed (old, new)
CHANGES = [
('''
        if seed is None:
            if out.numel() != 1:
                raise RuntimeError(f"grad can be implicitly created only for scalar outputs, not shape {tuple(out.shape)}")
            seed = torch.ones_like(out)
''', '''
        seed = torch.ones_like(out)                                  # grad_outputs ignored
'''),
]
