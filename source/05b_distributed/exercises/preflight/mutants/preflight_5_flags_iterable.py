"""Flags any loader without a DistributedSampler, even an IterableDataset (which shards itself and has no sampler to set)."""
CELL = "preflight"
KIND = "edge-case"
NOTE = "An IterableDataset has no sampler to set and must shard itself: only map-style datasets need a DistributedSampler under distributed training."
FAILS = ['test_preflight_clean', 'test_preflight_loader']
#: the reference solution with these lines changed (old, new)
CHANGES = [
('''
    """Return the PREFLIGHT_CODES that apply to this (model, loader, distributed) setup, each once."""
''', ''),
('''
    if (distributed and not isinstance(loader.dataset, torch.utils.data.IterableDataset)
            and not isinstance(loader.sampler, DistributedSampler)):
''', '''
    if distributed and not isinstance(loader.sampler, DistributedSampler):
'''),
('''
    probe = copy.deepcopy(model)  # the model itself keeps its grads, buffers and mode
''', '''
    probe = copy.deepcopy(model)
'''),
]
