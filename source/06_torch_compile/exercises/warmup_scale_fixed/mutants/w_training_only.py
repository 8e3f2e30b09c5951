"""Advances the step only in training mode: calls made after .eval() do not count."""
KIND = "edge-case"
NOTE = "The step counts every forward call, in training and in evaluation mode alike: calls made after .eval() advance the warmup too."
CELL = "warmup_scale_fixed"
FAILS = ["test_warmup_values"]
#: the reference solution with these lines changed (old, new)
CHANGES = [
('''
        self.step.add_(1)                # in place, in every mode: a tensor's value is data, not a guarded constant
''', '''
        if self.training:
            self.step += 1
'''),
('''
        return out * torch.clamp(self.step.to(out.dtype) / self.warmup, max=1.0)   # the scale in out's dtype
''', '''
        return out * torch.clamp(self.step.to(out.dtype) / self.warmup, max=1.0)
'''),
]
