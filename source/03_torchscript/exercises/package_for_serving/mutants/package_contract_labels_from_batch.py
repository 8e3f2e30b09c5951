"""Takes num_labels from the logits' first dimension (the batch symbol), not the last."""
CELL = "package_for_serving"
KIND = "wrong-value"
NOTE = "The logits are (batch, num_labels): the width of the last dimension is the number of labels; the first dimension is the batch, a symbol with no fixed size."
FAILS = ["test_serving_package"]
#: the reference solution with these lines changed (old, new)
CHANGES = [
('''
    ids = placeholders["input_ids"].meta["val"]                 # a FakeTensor: its sizes are symbols
''', '''
    ids = placeholders["input_ids"].meta["val"]
'''),
('''
                "num_labels": str(int(logits.shape[-1]))}
''', '''
                "num_labels": str(logits.shape[0])}
'''),
]
