"""Keeps a copy of the old scale for the product and updates with lerp_ (in place), statistics from a flattened view."""
CELL = "scale_and_track"
SOURCE = '''
def scale_and_track_(x: torch.Tensor, scale: torch.Tensor, momentum: float = 0.1) -> torch.Tensor:
    """Return x * scale (the scale before the update), then update scale in place toward mean |x| per feature."""
    old = scale.detach().clone()
    with torch.no_grad():
        flat = x.reshape(-1, x.shape[-1])
        scale.lerp_(flat.abs().mean(dim=0).to(scale.dtype), momentum)
    return x * old
'''
