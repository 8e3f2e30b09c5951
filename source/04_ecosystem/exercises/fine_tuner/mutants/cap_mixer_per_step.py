"""Builds a new E.LocalMixup(num_classes, seed=mix_seed) inside every training_step: every step draws the same mix."""
KIND = "state"
NOTE = "A seeded mixer is seeded once and then keeps its generator's state: seeding it again (or building a new one) at every step makes every step draw the same mix."
CELL = "fine_tuner"
FAILS = ['test_capstone_training_step']
#: the reference solution with these lines changed (old, new)
CHANGES = [
('''
        mixed, targets = self.mixup(images, labels)
''', '''
        mixed, targets = E.LocalMixup(self.hparams.num_classes, seed=self.hparams.mix_seed)(images, labels)
'''),
]
