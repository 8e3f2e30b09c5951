"""timm's Mixup in mode="elem": a different lam (and mode) per image, seeded through NumPy."""
CELL = "mix_batch"
SOURCE = '''
def mix_batch(images, labels, num_classes, seed):
    """Return (mixed images, soft targets (B, num_classes)) from timm's Mixup+CutMix with label smoothing 0.1."""
    from timm.data import Mixup
    np.random.seed(seed)
    mixer = Mixup(mixup_alpha=0.8, cutmix_alpha=1.0, label_smoothing=0.1, num_classes=num_classes, mode="elem")
    x, t = mixer(images.clone(), labels.clone())
    return x, t.float()
'''
