"""Stores the hook's output itself and detaches only when returning: every stored output keeps its step's graph alive during the epoch."""
CELL = "train_and_record"
KIND = "graph"
NOTE = "A forward hook's output carries the autograd graph of its forward: every output stored as it is keeps that step's graph alive, so the live graph grows with the number of batches."
FAILS = ["test_record_no_graph"]
#: the reference solution with these lines changed (old, new)
CHANGES = [
('''
    """One epoch of cross-entropy training; returns (losses as floats, layer's outputs concatenated, no history)."""
''', ''),
('''
    handle = layer.register_forward_hook(lambda module, inputs, output: records.append(output.detach()))
''', '''
    handle = layer.register_forward_hook(lambda module, inputs, output: records.append(output))
'''),
('''
    return losses, torch.cat(records)
''', '''
    return losses, torch.cat(records).detach()
'''),
]
