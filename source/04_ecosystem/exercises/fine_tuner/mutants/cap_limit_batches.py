"""One epoch of at most max_steps batches (max_epochs=1, limit_train_batches=max_steps): right only when an epoch has at least max_steps batches (found by a blind test)."""
KIND = "edge-case"
NOTE = "Capping the batches of a single epoch bounds the number of steps but does not reach it: when the loader has fewer batches than max_steps, training stops early. The run must stop on the optimizer step count."
CELL = "fine_tuner"
FAILS = ['test_capstone_fit']
#: the reference solution with these lines changed (old, new)
CHANGES = [
('''
    trainer = L.Trainer(**E.trainer_kwargs(max_epochs=-1, max_steps=max_steps, precision="bf16-mixed"))
''', '''
    trainer = L.Trainer(**E.trainer_kwargs(max_epochs=1, limit_train_batches=max_steps, precision="bf16-mixed"))
'''),
]
