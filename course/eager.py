"""Chapter 1 helpers: timing eager ops, generated images, and small plots.

Nothing here needs a GPU; on CUDA, :func:`time_call` synchronises so that
the numbers mean wall time, not launch time.
"""
from __future__ import annotations

import statistics
import time
from typing import Callable

import numpy as np
import torch
from PIL import Image


def time_call(fn: Callable[[], object], repeats: int = 50, warmup: int = 5,
              device: torch.device | str | None = None) -> float:
    """Return the median wall time of ``fn()`` in seconds over ``repeats`` calls (after ``warmup`` calls)."""
    sync = (lambda: torch.cuda.synchronize(device)) if device is not None and torch.device(device).type == "cuda" else (lambda: None)
    for _ in range(warmup):
        fn()
    sync()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        sync()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def op_time(numel: int, repeats: int = 50, device: torch.device | str = "cpu") -> float:
    """Return the median seconds of one eager ``torch.add(a, b, out=c)`` on ``numel`` float32 elements."""
    a = torch.randn(numel, device=device)
    b = torch.randn(numel, device=device)
    c = torch.empty_like(a)
    return time_call(lambda: torch.add(a, b, out=c), repeats=repeats, device=device)


def overhead_curve(sizes: list[int], repeats: int = 50, device: torch.device | str = "cpu") -> list[dict]:
    """Measure eager per-op time against tensor size.

    Returns one dict per size: ``numel``, ``seconds`` (median per op),
    ``overhead_s`` (the time of a 1-element op, our estimate of the fixed
    Python + dispatcher cost) and ``overhead_fraction`` (``overhead_s /
    seconds``, capped at 1): the share of the op's time that is framework
    overhead rather than arithmetic.
    """
    overhead = op_time(1, repeats=repeats, device=device)
    rows = []
    for n in sizes:
        t = op_time(int(n), repeats=repeats, device=device)
        rows.append({"numel": int(n), "seconds": t, "overhead_s": overhead,
                     "overhead_fraction": min(1.0, overhead / t)})
    return rows


def plot_overhead(rows: list[dict], title: str = "Eager overhead vs tensor size"):
    """Plot overhead fraction (and time per op, in microseconds) against size; return the figure."""
    import matplotlib.pyplot as plt

    n = [r["numel"] for r in rows]
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 3.2))
    ax1.semilogx(n, [100 * r["overhead_fraction"] for r in rows], "o-")
    ax1.set_xlabel("elements per tensor")
    ax1.set_ylabel("fixed overhead, % of op time")
    ax1.set_ylim(0, 105)
    ax1.grid(alpha=0.3)
    ax2.loglog(n, [1e6 * r["seconds"] for r in rows], "o-", label="measured time per op")
    ax2.axhline(1e6 * rows[0]["overhead_s"], color="gray", ls="--", label="1-element op (overhead)")
    ax2.set_xlabel("elements per tensor")
    ax2.set_ylabel("microseconds per op")
    ax2.legend(fontsize=8)
    ax2.grid(alpha=0.3)
    fig.suptitle(title)
    fig.tight_layout()
    plt.show()
    return fig


def sample_image(height: int = 48, width: int = 64, seed: int = 0) -> np.ndarray:
    """Return a smooth random RGB image as an HWC ``uint8`` NumPy array (gradients plus blobs, so resizing shows)."""
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[0:height, 0:width].astype(np.float64)
    img = np.zeros((height, width, 3))
    for c in range(3):
        fx, fy, phase = rng.uniform(0.5, 3.0), rng.uniform(0.5, 3.0), rng.uniform(0, 6.3)
        img[..., c] = 0.5 + 0.5 * np.sin(2 * np.pi * (fx * xx / width + fy * yy / height) + phase)
    for _ in range(3):
        cy, cx, r = rng.uniform(0, height), rng.uniform(0, width), rng.uniform(3, max(4, height / 4))
        blob = np.exp(-((yy - cy) ** 2 + (xx - cx) ** 2) / (2 * r * r))
        img[..., rng.integers(0, 3)] += blob
    return (np.clip(img, 0, 1) * 255).round().astype(np.uint8)


def as_three_kinds(arr: np.ndarray) -> tuple[Image.Image, np.ndarray, torch.Tensor]:
    """Return the same HWC uint8 image as a PIL image, an HWC NumPy array and a CHW uint8 tensor."""
    return Image.fromarray(arr), arr.copy(), torch.from_numpy(arr.copy()).permute(2, 0, 1).contiguous()


def show_images(images: list, titles: list[str], rows: int = 1):
    """Show PIL images, HWC arrays or CHW tensors (uint8 or float, any range) in a grid; return the figure."""
    import matplotlib.pyplot as plt

    cols = (len(images) + rows - 1) // rows
    fig, axes = plt.subplots(rows, cols, figsize=(2.6 * cols, 2.4 * rows), squeeze=False)
    for ax in axes.flat:
        ax.axis("off")
    for ax, img, title in zip(axes.flat, images, titles):
        if isinstance(img, Image.Image):
            data = np.asarray(img)
        elif isinstance(img, torch.Tensor):
            t = img.detach().cpu().float()
            t = (t - t.min()) / (t.max() - t.min() + 1e-12) if img.is_floating_point() else t / 255
            data = t.permute(1, 2, 0).numpy()
        else:
            data = img
        ax.imshow(data)
        ax.set_title(title, fontsize=8)
    fig.tight_layout()
    plt.show()
    return fig
