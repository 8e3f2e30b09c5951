"""Registers the counter with persistent=False: it is not saved, so a checkpoint restarts the warmup."""
KIND = "state"
NOTE = "A buffer registered with persistent=False is left out of state_dict(): a checkpoint does not save the call count, so a restored model restarts its warmup."
CELL = "warmup_scale_fixed"
FAILS = ["test_warmup_state"]
#: the reference solution with these lines changed (old, new)
CHANGES = [
('''
        self.register_buffer("step", torch.zeros((), dtype=torch.long))
''', '''
        self.register_buffer("step", torch.zeros((), dtype=torch.long), persistent=False)
'''),
('''
        self.step.add_(1)                # in place, in every mode: a tensor's value is data, not a guarded constant
''', '''
        self.step += 1
'''),
('''
        return out * torch.clamp(self.step.to(out.dtype) / self.warmup, max=1.0)   # the scale in out's dtype
''', '''
        return out * torch.clamp(self.step.to(out.dtype) / self.warmup, max=1.0)
'''),
]
