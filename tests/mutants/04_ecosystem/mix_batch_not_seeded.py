"""Never seeds NumPy (only torch): timm's Mixup draws lam and the mode from np.random, so results vary."""
CELL = "mix_batch"
FAILS = ["test_mix_batch_deterministic"]
SOURCE = '''
def mix_batch(images, labels, num_classes, seed):
    """Return (mixed images, soft targets (B, num_classes)) from timm's Mixup+CutMix with label smoothing 0.1."""
    from timm.data import Mixup
    torch.manual_seed(seed)
    mixer = Mixup(mixup_alpha=0.8, cutmix_alpha=1.0, label_smoothing=0.1, num_classes=num_classes)
    return mixer(images.clone(), labels.clone())
'''
