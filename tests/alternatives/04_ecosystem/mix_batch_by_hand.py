"""Mixup/CutMix written by hand with a torch.Generator and a random permutation as the partner (not x.flip(0))."""
CELL = "mix_batch"
SOURCE = '''
def mix_batch(images, labels, num_classes, seed):
    """Return (mixed images, soft targets (B, num_classes)) from timm's Mixup+CutMix with label smoothing 0.1."""
    g = torch.Generator().manual_seed(int(seed))
    rng = np.random.RandomState(seed)
    b, _, h, w = images.shape
    perm = torch.randperm(b, generator=g)
    off = 0.1 / num_classes
    smooth = torch.full((b, num_classes), off)
    smooth[torch.arange(b), labels] = 1 - 0.1 + off
    out = images.clone()
    if rng.rand() < 0.5:
        lam = float(rng.beta(0.8, 0.8))
        out = lam * images + (1 - lam) * images[perm]
    else:
        lam = float(rng.beta(1.0, 1.0))
        ch, cw = int(h * (1 - lam) ** 0.5), int(w * (1 - lam) ** 0.5)
        cy, cx = int(rng.randint(h)), int(rng.randint(w))
        y0, y1 = max(cy - ch // 2, 0), min(cy + ch // 2, h)
        x0, x1 = max(cx - cw // 2, 0), min(cx + cw // 2, w)
        out[:, :, y0:y1, x0:x1] = images[perm][:, :, y0:y1, x0:x1]
        lam = 1 - (y1 - y0) * (x1 - x0) / (h * w)
    return out, (lam * smooth + (1 - lam) * smooth[perm]).float()
'''
