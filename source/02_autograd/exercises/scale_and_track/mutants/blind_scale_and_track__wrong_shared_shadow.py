"""Reuses one module-level shadow copy of scale for the product (refilled with copy_ each call, to avoid an allocation): two calls before one backward share it, and backward raises 'modified by an inplace operation'. (written blind, from the release alone)."""
CELL = 'scale_and_track'
KIND = 'state'
NOTE = "A copy for the product reused across calls is overwritten in place by the next call, so a graph that saved it fails its version check; each call's product needs a copy of its own."
FAILS = ['test_track_backward']
SOURCE = '''
_SHADOW = None

def scale_and_track_(x: torch.Tensor, scale: torch.Tensor, momentum: float = 0.1) -> torch.Tensor:
    """Return x * scale (the scale before the update), then update scale in place toward mean |x| per feature."""
    global _SHADOW
    if _SHADOW is None or _SHADOW.shape != scale.shape or _SHADOW.dtype != scale.dtype:
        _SHADOW = scale.detach().clone()
    else:
        _SHADOW.copy_(scale)
    y = x * _SHADOW
    m = x.detach().abs().reshape(-1, x.shape[-1]).mean(0)
    with torch.no_grad():
        scale.mul_(1 - momentum).add_(momentum * m)
    return y
'''
