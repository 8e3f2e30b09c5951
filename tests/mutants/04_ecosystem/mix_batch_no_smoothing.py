"""One-hot targets without label smoothing (label_smoothing=0)."""
CELL = "mix_batch"
FAILS = ["test_mix_batch_smoothing_floor", "test_mix_batch_targets_match_images"]
SOURCE = '''
def mix_batch(images, labels, num_classes, seed):
    """Return (mixed images, soft targets (B, num_classes)) from timm's Mixup+CutMix with label smoothing 0.1."""
    from timm.data import Mixup
    np.random.seed(seed)
    random.seed(seed)
    torch.manual_seed(seed)
    mixer = Mixup(mixup_alpha=0.8, cutmix_alpha=1.0, label_smoothing=0.0, num_classes=num_classes)
    return mixer(images.clone(), labels.clone())
'''
