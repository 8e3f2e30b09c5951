"""Takes `missing` from load_state_dict(strict=False) on the rebuilt dict: without _metadata, num_batches_tracked is never reported missing."""
KIND = "wrong-value"
NOTE = "load_state_dict(strict=False) on a rebuilt dict is not a full list of what was not loaded (a dict without _metadata counts as an old checkpoint, so absent buffers go unreported); the model's own keys are."
CELL = "load_checkpoint_flexible"
FAILS = ["test_load_unseen_formats"]
#: the reference solution with these lines changed (old, new)
CHANGES = [
('''
    with torch.no_grad():
        for name, value in cleaned.items():
            own[name].copy_(value)
    return LoadReport(loaded=sorted(cleaned), skipped=sorted(skipped), missing=sorted(set(own) - set(cleaned)))
''', '''
    result = model.load_state_dict(cleaned, strict=False)
    return LoadReport(loaded=sorted(cleaned), skipped=sorted(skipped), missing=sorted(result.missing_keys))
'''),
]
