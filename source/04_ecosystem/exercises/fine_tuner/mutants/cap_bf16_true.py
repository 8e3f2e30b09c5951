"""precision="bf16-true" instead of "bf16-mixed": the logits are bfloat16 either way, but the weights themselves become bfloat16 (found by a blind test: the first hidden test missed it)."""
KIND = "contract"
NOTE = "bf16-true casts the weights themselves to bfloat16; the bf16-mixed run asked for keeps float32 weights and runs only the computation in bfloat16 under autocast."
CELL = "fine_tuner"
FAILS = ['test_capstone_fit']
#: the reference solution with these lines changed (old, new)
CHANGES = [
('''
    trainer = L.Trainer(**E.trainer_kwargs(max_epochs=-1, max_steps=max_steps, precision="bf16-mixed"))
''', '''
    trainer = L.Trainer(**E.trainer_kwargs(max_epochs=-1, max_steps=max_steps, precision="bf16-true"))
'''),
]
