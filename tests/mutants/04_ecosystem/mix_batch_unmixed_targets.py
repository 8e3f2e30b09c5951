"""Mixes the images but returns the smoothed targets of the original labels (targets not mixed)."""
CELL = "mix_batch"
FAILS = ["test_mix_batch_targets_match_images"]
SOURCE = '''
def mix_batch(images, labels, num_classes, seed):
    """Return (mixed images, soft targets (B, num_classes)) from timm's Mixup+CutMix with label smoothing 0.1."""
    from timm.data import Mixup
    np.random.seed(seed)
    mixer = Mixup(mixup_alpha=0.8, cutmix_alpha=1.0, label_smoothing=0.1, num_classes=num_classes)
    mixed, _ = mixer(images.clone(), labels.clone())
    off = 0.1 / num_classes
    targets = torch.full((len(labels), num_classes), off)
    targets[torch.arange(len(labels)), labels] = 1 - 0.1 + off
    return mixed, targets
'''
