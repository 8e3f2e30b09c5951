"""Builds the model with pretrained=False and checkpoint_path ignored: the local weights are never loaded."""
KIND = "contract"
NOTE = "With pretrained=False the model keeps its random initialisation: the local weights file is never read, so nothing is fine-tuned from it."
CELL = "fine_tuner"
FAILS = ['test_capstone_build', 'test_capstone_training_step']
#: the reference solution with these lines changed (old, new)
CHANGES = [
('''
        self.model = timm.create_model(arch, pretrained=True, pretrained_cfg_overlay=dict(file=weights),
''', '''
        self.model = timm.create_model(arch, pretrained=False,
'''),
]
