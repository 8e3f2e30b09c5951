"""Leaves lora_alpha at PEFT's default (8): right only when r = 4, as in the visible test."""
KIND = "wrong-value"
NOTE = "The adapter's output is scaled by lora_alpha / r. Leaving alpha at the library default changes that scale for every rank but one, so the same steps train a different model."
CELL = "lora_fine_tune"
FAILS = ['test_lora_training']
#: the reference solution with these lines changed (old, new)
CHANGES = [
('''
    config = LoraConfig(r=r, lora_alpha=2 * r, lora_dropout=0.0, target_modules=list(target_modules),
''', '''
    config = LoraConfig(r=r, lora_dropout=0.0, target_modules=list(target_modules),
'''),
]
