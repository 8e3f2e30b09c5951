"""Forgets the sampler check: under DDP every rank would train on the whole dataset."""
CELL = "preflight"
KIND = "contract"
NOTE = "The sampler check is missing: under distributed training, a map-style dataset without a DistributedSampler makes every rank iterate over the whole dataset."
FAILS = ['test_preflight_loader']
#: the reference solution with these lines changed (old, new)
CHANGES = [
('''
    """Return the PREFLIGHT_CODES that apply to this (model, loader, distributed) setup, each once."""
''', ''),
('''
    if (distributed and not isinstance(loader.dataset, torch.utils.data.IterableDataset)
            and not isinstance(loader.sampler, DistributedSampler)):
        issues.append("sampler_not_distributed")
''', ''),
('''
    probe = copy.deepcopy(model)  # the model itself keeps its grads, buffers and mode
''', '''
    probe = copy.deepcopy(model)
'''),
]
