"""Removes hooks with layer._forward_hooks.clear(): someone else's hook on the layer is gone too."""
CELL = "train_and_record"
KIND = "mutation"
NOTE = "Clearing the layer's whole hook dictionary also removes hooks that others registered; only the hook this function added should go, and registering it returns what identifies it."
FAILS = ["test_record_hooks"]
#: the reference solution with these lines changed (old, new)
CHANGES = [
('''
    """One epoch of cross-entropy training; returns (losses as floats, layer's outputs concatenated, no history)."""
''', ''),
('''
    handle = layer.register_forward_hook(lambda module, inputs, output: records.append(output.detach()))
''', '''
    layer.register_forward_hook(lambda module, inputs, output: records.append(output.detach()))
'''),
('''
        handle.remove()
''', '''
        layer._forward_hooks.clear()
'''),
]
