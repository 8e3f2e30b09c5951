"""Never lists the head in modules_to_save: the new head stays frozen at its random initialisation."""
KIND = "edge-case"
NOTE = "A new head has nothing pretrained to adapt, and LoRA freezes everything it does not add: unless the head is trained in full it stays random, and it is missing from the trainable count."
CELL = "lora_fine_tune"
FAILS = ['test_lora_trainable', 'test_lora_training']
#: the reference solution with these lines changed (old, new)
CHANGES = [
('''
    if head is not None:
        predicted += sum(p.numel() for p in model.get_submodule(head).parameters())
''', ''),
('''
                        modules_to_save=None if head is None else [head])
''', '''
                        modules_to_save=None)
'''),
]
