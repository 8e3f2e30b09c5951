"""Always wraps q_proj and v_proj, the usual Llama choice, whatever target_modules says."""
KIND = "overfit"
NOTE = "Which layers get adapters is the caller's choice and depends on the architecture's own module names; a list copied from one model's recipe wraps the wrong layers or none at all."
CELL = "lora_fine_tune"
FAILS = ['test_lora_trainable', 'test_lora_base_frozen', 'test_lora_training', 'test_lora_merge']
#: the reference solution with these lines changed (old, new)
CHANGES = [
('''
    config = LoraConfig(r=r, lora_alpha=2 * r, lora_dropout=0.0, target_modules=list(target_modules),
''', '''
    config = LoraConfig(r=r, lora_alpha=2 * r, lora_dropout=0.0, target_modules=["q_proj", "v_proj"],
'''),
]
