"""Hard-codes the warmup of the visible example (3) instead of using the argument."""
KIND = "overfit"
NOTE = "The warmup length is the constructor's argument: a number fixed from the visible example gives the wrong scale for any other warmup."
CELL = "warmup_scale_fixed"
FAILS = ["test_warmup_values", "test_warmup_one_graph", "test_warmup_state"]
#: the reference solution with these lines changed (old, new)
CHANGES = [
('''
        self.step.add_(1)                # in place, in every mode: a tensor's value is data, not a guarded constant
''', '''
        self.step += 1
'''),
('''
        return out * torch.clamp(self.step.to(out.dtype) / self.warmup, max=1.0)   # the scale in out's dtype
''', '''
        return out * torch.clamp(self.step.to(out.dtype) / 3, max=1.0)
'''),
]
