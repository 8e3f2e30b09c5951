"""Forgets the min(1, ...): after the warmup the scale keeps growing."""
KIND = "wrong-value"
NOTE = "The scale is min(1, step / warmup): without the cap it keeps growing after the warmup instead of staying at 1."
CELL = "warmup_scale_fixed"
FAILS = ["test_warmup_values", "test_warmup_one_graph"]
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
        return out * (self.step.to(out.dtype) / self.warmup)
'''),
]
