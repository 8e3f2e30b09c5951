"""Finds the head by name (starts with 'head' or 'fc'): a ConvNeXt's head.norm gets the head lr, an EfficientNet's 'classifier' does not."""
KIND = "overfit"
NOTE = "A name prefix does not identify the classifier: a ConvNeXt's head also holds a norm layer, and other models name their classifier differently. The model's own classifier module says which parameters it holds."
CELL = "make_optimizer"
FAILS = ["test_make_optimizer_lr"]
#: the reference solution with these lines changed (old, new)
CHANGES = [
('''
    head = {id(p) for p in model.get_classifier().parameters()} if hasattr(model, "get_classifier") else set()
''', '''
    head = {id(p) for n, p in model.named_parameters() if n.startswith(("head", "fc"))}
'''),
]
