"""Passes the caller's batch straight to Mixup, which overwrites it in place."""
CELL = "mix_batch"
FAILS = ["test_mix_batch_deterministic"]
SOURCE = '''
def mix_batch(images, labels, num_classes, seed):
    """Return (mixed images, soft targets (B, num_classes)) from timm's Mixup+CutMix with label smoothing 0.1."""
    from timm.data import Mixup
    np.random.seed(seed)
    mixer = Mixup(mixup_alpha=0.8, cutmix_alpha=1.0, label_smoothing=0.1, num_classes=num_classes)
    return mixer(images, labels)
'''
