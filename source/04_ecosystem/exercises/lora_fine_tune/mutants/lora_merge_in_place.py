"""Merges the returned adapter model itself: its adapters vanish and the caller's base weights are overwritten."""
KIND = "mutation"
NOTE = "merge_and_unload writes the adapters into the weights of the model it is called on and removes them, so the adapter model and the caller's frozen weights are gone; merge a copy."
CELL = "lora_fine_tune"
FAILS = ['test_lora_trainable', 'test_lora_base_frozen', 'test_lora_training', 'test_lora_merge']
#: the reference solution with these lines changed (old, new)
CHANGES = [
('''
    merged = copy.deepcopy(peft_model).merge_and_unload().eval()
''', '''
    merged = peft_model.merge_and_unload().eval()
'''),
]
