"""Counts only the head's weight matrix, forgetting its bias (a Llama score head has none, a BERT classifier has one)."""
KIND = "wrong-value"
NOTE = "modules_to_save trains every parameter of the head, its bias included; a count taken from the weight's shape alone is right only for heads built without a bias."
CELL = "lora_fine_tune"
FAILS = ['test_lora_trainable']
#: the reference solution with these lines changed (old, new)
CHANGES = [
('''
        predicted += sum(p.numel() for p in model.get_submodule(head).parameters())
''', '''
        predicted += model.get_submodule(head).weight.numel()
'''),
]
