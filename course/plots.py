"""Small matplotlib helpers shared by the chapters."""
from __future__ import annotations

import torch


def mismatch(expected: torch.Tensor, got: torch.Tensor, title: str = "result"):
    """Draw "target" next to "yours" (and their difference) for a 1-D or 2-D tensor; return the figure.

    Other ranks are flattened to 2-D (rows = first dimension). Returns ``None``
    when the shapes differ, since there is nothing to overlay.
    """
    import matplotlib.pyplot as plt

    e = expected.detach().cpu().double()
    g = got.detach().cpu().double()
    if e.shape != g.shape:
        return None
    if e.dim() == 0:
        e, g = e.reshape(1), g.reshape(1)
    if e.dim() > 2:
        e, g = e.reshape(e.shape[0], -1), g.reshape(g.shape[0], -1)
    fig, axes = plt.subplots(1, 3, figsize=(10, 2.8))
    panels = [("target", e), ("yours", g), ("yours - target", g - e)]
    for ax, (name, data) in zip(axes, panels):
        if data.dim() == 1:
            ax.bar(range(data.numel()), data.numpy())
        else:
            im = ax.imshow(data.numpy(), cmap="coolwarm" if name.startswith("yours -") else "viridis")
            fig.colorbar(im, ax=ax, fraction=0.046)
        ax.set_title(name)
    fig.suptitle(f"{title}: target vs yours")
    fig.tight_layout()
    plt.show()
    return fig


def bar_chart(labels: list[str], values: list[float], ylabel: str, title: str = ""):
    """Draw a labelled bar chart (values printed on the bars); return the figure."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(max(4, 0.8 * len(labels)), 3))
    bars = ax.bar(labels, values)
    for bar, v in zip(bars, values):
        ax.annotate(f"{v:.3g}", (bar.get_x() + bar.get_width() / 2, bar.get_height()),
                    ha="center", va="bottom", fontsize=8)
    ax.set_ylabel(ylabel)
    if title:
        ax.set_title(title)
    ax.tick_params(axis="x", rotation=30)
    fig.tight_layout()
    plt.show()
    return fig
