"""Turns requires_grad back on for every parameter after wrapping, so the whole model trains."""
KIND = "graph"
NOTE = "The point of LoRA is that the base weights stay frozen and only the adapters learn; re-enabling gradients on every parameter turns it back into a full fine-tune that changes the pretrained weights."
CELL = "lora_fine_tune"
FAILS = ['test_lora_trainable', 'test_lora_base_frozen', 'test_lora_training']
#: the reference solution with these lines changed (old, new)
CHANGES = [
('''
    peft_model = get_peft_model(model, config)
''', '''
    peft_model = get_peft_model(model, config)
    peft_model.requires_grad_(True)
'''),
]
