"""Computes the scale as long / int, a float32 tensor whatever the module's dtype: float64 outputs are off in the 8th digit."""
KIND = "edge-case"
NOTE = "An integer tensor divided by a Python int gives a tensor of the default dtype (float32): the scale is then rounded to float32 even when the module computes in float64."
CELL = "warmup_scale_fixed"
FAILS = ["test_warmup_values"]
#: the reference solution with these lines changed (old, new)
CHANGES = [
('''
        self.step.add_(1)                # in place, in every mode: a tensor's value is data, not a guarded constant
        out = self.lin(x)
        return out * torch.clamp(self.step.to(out.dtype) / self.warmup, max=1.0)   # the scale in out's dtype
''', '''
        self.step += 1
        return self.lin(x) * torch.clamp(self.step / self.warmup, max=1.0)
'''),
]
