"""Never clears the gradients: each step adds the new gradient to all the earlier ones."""
KIND = "graph"
NOTE = "Adapters are ordinary parameters: their .grad accumulates across backward calls unless it is cleared every step, so later steps follow the sum of all earlier gradients."
CELL = "lora_fine_tune"
FAILS = ['test_lora_training']
#: the reference solution with these lines changed (old, new)
CHANGES = [
('''
        optimizer.zero_grad()
''', ''),
]
