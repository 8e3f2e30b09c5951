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
    """Draw a labelled bar chart (values printed on the bars); return the figure.

    Long labels are wrapped onto several lines and the figure widens with them, so that neighbouring labels
    never overlap (``label_overlaps`` checks it).
    """
    import textwrap

    import matplotlib.pyplot as plt

    wrapped = [textwrap.fill(str(label), 14, break_long_words=False) for label in labels]
    widest = max((len(line) for w in wrapped for line in w.splitlines()), default=1)
    lines = max((w.count("\n") + 1 for w in wrapped), default=1)
    fig, ax = plt.subplots(figsize=(max(4.0, (0.085 * widest + 0.3) * len(labels) + 1.2), 2.7 + 0.18 * lines))
    bars = ax.bar(range(len(labels)), values)
    ax.set_xticks(range(len(labels)), wrapped, fontsize=8)
    for bar, v in zip(bars, values):
        ax.annotate(f"{v:.3g}", (bar.get_x() + bar.get_width() / 2, bar.get_height()),
                    ha="center", va="bottom", fontsize=8)
    ax.margins(y=0.15)  # room for the value above the tallest bar
    ax.set_ylabel(ylabel)
    if title:
        ax.set_title(title)
    fig.tight_layout()
    plt.show()
    return fig


def label_overlaps(fig) -> int:
    """How many pairs of neighbouring x tick labels of the figure's first axes overlap once drawn."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    boxes = [t.get_window_extent(renderer) for t in fig.axes[0].get_xticklabels() if t.get_text()]
    return sum(a.overlaps(b) for a, b in zip(boxes, boxes[1:]))


def _rendered(result):
    """What a live view shows for one render: a figure becomes a PNG image, anything else its text."""
    from IPython.display import Image, Pretty

    import matplotlib.figure
    import matplotlib.pyplot as plt

    if isinstance(result, matplotlib.figure.Figure):
        import io
        buf = io.BytesIO()
        result.savefig(buf, format="png", bbox_inches="tight", dpi=90)
        plt.close(result)
        return Image(data=buf.getvalue(), format="png")
    return Pretty(str(result))


def live_view(render, controls: dict):
    """Show ``render(**values)`` once, then redraw it *in place* whenever a control changes; return the handle.

    ``controls`` maps keyword names to ipywidgets (sliders, dropdowns). ``render`` returns a matplotlib figure
    (shown as an image) or text. The first view is an ordinary output with a display id, so it shows in a
    static copy of the notebook (nbconvert, Formgrader, a headless run) and no widget frontend is needed for it;
    a change replaces that same output (``update_display``) instead of drawing a second copy below it, and
    never waits on a widget message, so a run without a browser cannot stall on it.
    """
    from IPython.display import display
    import ipywidgets as widgets

    def values():
        return {name: w.value for name, w in controls.items()}

    display(widgets.HBox(list(controls.values())))
    handle = display(_rendered(render(**values())), display_id=True)

    def _changed(_change) -> None:
        handle.update(_rendered(render(**values())))

    for w in controls.values():
        w.observe(_changed, names="value")
    return handle


def storage_cells(t: torch.Tensor) -> dict[int, list[tuple[int, ...]]]:
    """Map each storage position (counted in elements) that ``t`` reads to the indices of ``t`` that read it.

    The position of ``t[idx]`` is ``t.storage_offset() + sum(i * s for i, s in zip(idx, t.stride()))``, the
    formula every strided tensor follows. An expanded tensor (stride 0) reads one position at several indices.
    """
    import itertools

    cells: dict[int, list[tuple[int, ...]]] = {}
    for idx in itertools.product(*(range(n) for n in t.shape)):
        where = t.storage_offset() + sum(i * s for i, s in zip(idx, t.stride()))
        cells.setdefault(where, []).append(idx)
    return cells


def storage_picture(views: dict[str, torch.Tensor], max_cells: int = 64):
    """Draw, for each named tensor, the storage it sits on as a row of cells; return the figure.

    Every cell is one storage element, numbered from 0. The cells a tensor reads are coloured by the element's
    first index and labelled with its index (``1,2`` is ``t[1, 2]``); the cells it does not read stay grey. Two
    arrows start at the first element: one step along the last dimension (``stride[-1]``) and one along the first
    (``stride[0]``). The tensors may sit on different storages of at most ``max_cells`` elements each.
    """
    import matplotlib.pyplot as plt
    from matplotlib.patches import FancyArrowPatch, Rectangle

    sizes = {name: t.untyped_storage().nbytes() // t.element_size() for name, t in views.items()}
    if max(sizes.values(), default=0) > max_cells:
        raise ValueError(f"storage_picture draws storages of up to {max_cells} elements, got {max(sizes.values())}")
    width = max(sizes.values(), default=1)
    fig, axes = plt.subplots(len(views), 1, figsize=(max(6.0, 0.55 * width + 1.0), 1.55 * len(views)), squeeze=False)
    colours = plt.get_cmap("tab10")
    for ax, (name, t) in zip(axes[:, 0], views.items()):
        cells = storage_cells(t)
        for pos in range(sizes[name]):
            idxs = cells.get(pos, [])
            colour = colours(idxs[0][0] % 10) if idxs and t.dim() else ("#9ecae1" if idxs else "#eeeeee")
            ax.add_patch(Rectangle((pos, 0), 1, 1, facecolor=colour, edgecolor="black", alpha=0.55 if idxs else 1.0))
            label = ",".join(map(str, idxs[0])) if idxs else ""
            if len(idxs) > 1:
                label += f"\n(+{len(idxs) - 1})"
            ax.text(pos + 0.5, 0.5, label, ha="center", va="center", fontsize=7)
            ax.text(pos + 0.5, -0.3, str(pos), ha="center", va="center", fontsize=6, color="grey")
        top = 1.6
        if t.numel() and t.dim():
            start = t.storage_offset()
            for dim, text, bend in [(t.dim() - 1, "stride[-1]", 0.3)] + ([(0, "stride[0]", 0.5)] if t.dim() > 1 else []):
                step = t.stride(dim)
                if t.shape[dim] < 2:
                    continue
                if step == 0:
                    top += 0.4
                    ax.text(start, top - 0.2, f"{text} = 0: every step stays in the same cell", fontsize=7, va="center")
                    continue
                apex = 1.0 + bend * step / 2 + 0.2         # where the arc of this arrow peaks, and a little above
                top = max(top, apex + 0.3)
                ax.add_patch(FancyArrowPatch((start + 0.5, 1.0), (start + step + 0.5, 1.0),
                                             connectionstyle=f"arc3,rad=-{bend}", arrowstyle="->",
                                             mutation_scale=10, color="black"))
                ax.text(start + 0.5 + step / 2, apex, f"{text} = {step}", ha="center", va="center", fontsize=7,
                        bbox={"facecolor": "white", "edgecolor": "none", "pad": 0.5})
        ax.set_xlim(-0.2, width + 0.2)
        ax.set_ylim(-0.6, top)
        ax.axis("off")
        ax.set_title(f"{name}: shape {tuple(t.shape)}, stride {t.stride()}, storage offset {t.storage_offset()}",
                     fontsize=9, loc="left")
    fig.tight_layout()
    return fig


def compile_timeline(events: list[dict], n_calls: int, title: str = "compiles and recompiles, call by call"):
    """Draw a recompile timeline: call index on x, compile id ("frame/entry") on y; return the figure.

    ``events`` holds one dict per compiled graph, in order: ``{"call": int, "compile_id": "0/1",
    "reason": str, "dynamic": bool}``. ``call`` is the index of the call that compiled it, ``reason`` why
    (the failed guard of a recompile, or "first call"), ``dynamic`` whether the graph took a size or value as
    a symbol. Each graph gets a marker (filled: static, hollow: dynamic) labelled with its reason; a grey tick
    on the bottom row marks every call, so calls that compiled nothing show as ticks with no marker above them.
    """
    import textwrap

    import matplotlib.pyplot as plt

    ids = sorted({e["compile_id"] for e in events}, key=lambda s: tuple(int(p) for p in s.split("/")))
    row = {cid: i + 1 for i, cid in enumerate(ids)}
    fig, ax = plt.subplots(figsize=(max(6.0, 1.1 * n_calls + 3.0), 1.2 + 0.55 * (len(ids) + 1)))
    ax.scatter(range(n_calls), [0] * n_calls, marker="|", s=200, color="grey")
    for e in events:
        y = row[e["compile_id"]]
        ax.scatter([e["call"]], [y], s=70, marker="o", edgecolors="C0", linewidths=1.5,
                   facecolors="none" if e["dynamic"] else "C0", zorder=3)
        ax.annotate(textwrap.shorten(e["reason"], 110, placeholder="..."), (e["call"], y), xytext=(8, -3),
                    textcoords="offset points", fontsize=7)
    ax.set_yticks(range(len(ids) + 1), ["calls"] + [f"compile {cid}" for cid in ids])
    ax.set_xticks(range(n_calls))
    ax.set_xlim(-0.5, n_calls + 4.5)     # room for the last labels
    ax.set_ylim(-0.7, len(ids) + 0.7)
    ax.set_xlabel("call index")
    ax.set_title(f"{title} (filled: static graph, hollow: dynamic)", fontsize=9)
    fig.tight_layout()
    plt.show()
    return fig


def block_kinds(allowed: torch.Tensor, block: int) -> torch.Tensor:
    """Classify each ``block`` x ``block`` tile of a 2-D boolean mask; return an int tensor of tiles.

    ``allowed[q, k]`` says whether query ``q`` may attend to key ``k``. A tile is 0 when it allows no pair
    (an attention kernel can skip it), 1 when it allows some (the mask must be applied inside it) and 2 when
    it allows every pair (no mask needed). The last tile of a row or column may be smaller than ``block``.
    """
    if allowed.dim() != 2 or allowed.dtype != torch.bool:
        raise ValueError(f"want a 2-D bool mask, got {allowed.dtype} of shape {tuple(allowed.shape)}")
    q, k = allowed.shape
    rows, cols = -(-q // block), -(-k // block)
    if rows == 0 or cols == 0:
        return torch.zeros(rows, cols, dtype=torch.int64)
    # padded with "not allowed" to whole tiles: each tile's count of allowed pairs, against the pairs it really has
    padded = torch.nn.functional.pad(allowed.to(torch.int64), (0, cols * block - k, 0, rows * block - q))
    count = padded.view(rows, block, cols, block).sum(dim=(1, 3))
    height = torch.full((rows,), block, dtype=torch.int64)
    width = torch.full((cols,), block, dtype=torch.int64)
    height[-1], width[-1] = q - (rows - 1) * block, k - (cols - 1) * block
    return torch.where(count == height[:, None] * width[None, :], 2, (count > 0).to(torch.int64))


def block_mask_picture(masks: dict[str, torch.Tensor], block: int, title: str = ""):
    """Draw attention masks with their block grid; return the figure.

    ``masks`` maps a name to a 2-D bool mask (query on y, key on x). Each panel shows the allowed pairs in
    dark, the tiles of :func:`block_kinds` as a tint (grey: skipped, none allowed; orange: partial, masked
    inside; green: full, no mask) and, in its title, the share of tiles skipped.
    """
    import matplotlib.pyplot as plt
    from matplotlib.colors import ListedColormap

    fig, axes = plt.subplots(1, len(masks), figsize=(3.2 * len(masks), 3.4), squeeze=False)
    tint = ListedColormap(["#d9d9d9", "#fdae6b", "#a1d99b"])
    for ax, (name, allowed) in zip(axes[0], masks.items()):
        kinds = block_kinds(allowed, block)
        q, k = allowed.shape
        ax.imshow(kinds.numpy(), cmap=tint, vmin=0, vmax=2, extent=(0, kinds.shape[1] * block,
                                                                      kinds.shape[0] * block, 0))
        ax.imshow(allowed.numpy(), cmap=ListedColormap([(0, 0, 0, 0), (0.1, 0.1, 0.3, 0.85)]),
                  extent=(0, k, q, 0), interpolation="nearest")
        for edge in range(0, max(q, k) + 1, block):
            ax.axhline(edge, color="white", lw=0.8)
            ax.axvline(edge, color="white", lw=0.8)
        skipped = float((kinds == 0).float().mean()) * 100
        ax.set_title(f"{name}\n{skipped:.0f}% of tiles skipped", fontsize=9)
        ax.set_xlabel("key index")
        ax.set_ylabel("query index")
        ax.set_xlim(0, k)
        ax.set_ylim(q, 0)
    if title:
        fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    plt.show()
    return fig
