"""Correct: y from a private copy of scale; statistic from x.detach() with an explicit 1-D branch; the buffer updated in place with lerp_ under no_grad. (written blind, from the release alone)."""
CELL = 'scale_and_track'
SOURCE = '''
def scale_and_track_(x: torch.Tensor, scale: torch.Tensor, momentum: float = 0.1) -> torch.Tensor:
    """Return x * scale (the scale before the update), then update scale in place toward mean |x| per feature."""
    y = x * scale.detach().clone()                    # backward keeps the scale of this call
    values = x.detach().abs()
    m = values if values.dim() == 1 else values.mean(dim=tuple(range(values.dim() - 1)))
    with torch.no_grad():
        scale.lerp_(m.to(scale.dtype), momentum)      # scale + momentum * (m - scale), in the caller's tensor
    return y
'''
