"""Chapter 1 helpers: timing eager ops (where the per-op cost goes), generated images, and small plots.

Timings use :class:`torch.utils.benchmark.Timer`, which warms up, repeats,
reports a median, and synchronises an accelerator before reading the clock.
Nothing here needs a GPU; on CUDA the same functions time CUDA tensors.
"""
from __future__ import annotations

import logging
import time
from contextlib import nullcontext
from typing import Callable

import numpy as np
import torch
from PIL import Image

# torch.utils.benchmark imports torch.utils.cpp_extension, which logs a warning on a CUDA build
# without a CUDA runtime (as on this course's CPU machines). It is noise for a timing lesson.
logging.getLogger("torch.utils.cpp_extension").setLevel(logging.ERROR)
from torch.utils.benchmark import Timer  # noqa: E402

#: The four ways of running one op that :func:`grad_mode_costs` compares.
MODES = ("plain", "requires_grad", "no_grad", "inference_mode")


def timer_seconds(fn: Callable[[], object], min_run_time: float = 0.05, num_threads: int = 1) -> float:
    """Return the median seconds per call of ``fn()``, measured by ``torch.utils.benchmark.Timer``.

    ``blocked_autorange`` picks how many calls go in one timed block, runs
    blocks for at least ``min_run_time`` seconds and returns the median block
    time divided by the calls per block. Like Timer itself, it runs torch on
    ``num_threads`` threads (default 1), so a number does not depend on how
    many cores the machine has or how torch splits the op between them. It
    still depends on the CPU (a core's speed, its vector units and caches)
    and on what else runs on the machine: another program on the same core,
    caches it shares and the clock frequency all change it. Compare numbers
    taken together, on one machine, and keep the best of a few rounds.
    """
    m = Timer("fn()", globals={"fn": fn}, num_threads=int(num_threads)).blocked_autorange(min_run_time=min_run_time)
    return float(m.median)


def _operands(numel: int, requires_grad: bool, device) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(0)
    a = torch.randn(numel, generator=g).to(device).requires_grad_(requires_grad)
    b = torch.randn(numel, generator=g).to(device).requires_grad_(requires_grad)
    return a, b


def op_loop(op: str, numel: int, mode: str, inner: int = 100, device: torch.device | str = "cpu") -> Callable[[], None]:
    """Return a function that runs ``inner`` eager ops ``a <op> b`` on ``numel``-element float32 tensors.

    ``op`` is ``"add"`` or ``"mul"``. ``mode`` is one of :data:`MODES`:
    ``"plain"`` (no input requires grad), ``"requires_grad"`` (both inputs
    do, so every op records a backward node), ``"no_grad"`` (inputs require
    grad, the loop runs under ``torch.no_grad()``) and ``"inference_mode"``
    (the same under ``torch.inference_mode()``). The grad-mode context is
    entered once around the whole loop, so its own cost is spread over
    ``inner`` ops. Results are dropped at once, as in a real forward pass.
    """
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
    fn = {"add": torch.add, "mul": torch.mul}[op]
    a, b = _operands(int(numel), mode != "plain", device)
    context = {"no_grad": torch.no_grad, "inference_mode": torch.inference_mode}.get(mode, nullcontext)
    rng = range(int(inner))

    def run() -> None:
        with context():
            for _ in rng:
                fn(a, b)
    return run


def _inner_for(numel: int) -> int:
    return max(1, min(100, 1_000_000 // max(1, int(numel))))


def grad_mode_costs(numel: int = 1, ops: tuple[str, ...] = ("add", "mul"), modes: tuple[str, ...] = MODES,
                    rounds: int = 3, min_run_time: float = 0.05,
                    device: torch.device | str = "cpu") -> dict[str, dict[str, float]]:
    """Return ``{op: {mode: seconds per op}}`` for eager ``a <op> b`` on ``numel`` elements.

    Every (op, mode) pair is timed ``rounds`` times, interleaved, and the
    smallest median is kept: on a shared machine, load only ever adds time,
    so the minimum is the least disturbed estimate.
    """
    inner = _inner_for(numel)
    best = {op: {mode: float("inf") for mode in modes} for op in ops}
    loops = {(op, mode): op_loop(op, numel, mode, inner, device) for op in ops for mode in modes}
    for _ in range(int(rounds)):
        for (op, mode), fn in loops.items():
            best[op][mode] = min(best[op][mode], timer_seconds(fn, min_run_time) / inner)
    return best


def cost_ladder(rounds: int = 3, min_run_time: float = 0.05,
                device: torch.device | str = "cpu") -> list[tuple[str, float]]:
    """Return ``[(layer, seconds per op)]``: where the time of one 1-element ``torch.mul`` goes.

    Each entry is the cost of a cumulative setting (all in seconds per op):

    1. ``python``: a Python ``for`` loop calling an empty Python function;
    2. ``into C++``: calling ``a.dim()``, a tensor method that enters C++ and
       returns, without the dispatcher;
    3. ``op, inference_mode``: ``torch.mul(a, b)`` under ``inference_mode``:
       argument parsing, the dispatcher (autograd layers skipped), the output
       allocation and the CPU kernel;
    4. ``op, no_grad``: the same under ``no_grad`` on inputs that require
       grad: the autograd layer runs, checks the grad mode, records nothing;
    5. ``op, requires_grad``: grad mode on: a ``MulBackward0`` node is
       created and both inputs are saved for backward.

    The differences between consecutive rows are the cost of each layer.
    """
    a, _ = _operands(1, False, device)

    def empty() -> None:
        return None

    rng = range(100)

    def python_calls() -> None:
        for _ in rng:
            empty()

    def into_cpp() -> None:
        for _ in rng:
            a.dim()

    loops = [("python", python_calls), ("into C++", into_cpp),
             ("op, inference_mode", op_loop("mul", 1, "inference_mode", 100, device)),
             ("op, no_grad", op_loop("mul", 1, "no_grad", 100, device)),
             ("op, requires_grad", op_loop("mul", 1, "requires_grad", 100, device))]
    best = {name: float("inf") for name, _ in loops}
    for _ in range(int(rounds)):
        for name, fn in loops:
            best[name] = min(best[name], timer_seconds(fn, min_run_time) / 100)
    return [(name, best[name]) for name, _ in loops]


def size_sweep(sizes: list[int], op: str = "mul", modes: tuple[str, ...] = ("no_grad", "requires_grad"),
               rounds: int = 2, min_run_time: float = 0.05, device: torch.device | str = "cpu") -> list[dict]:
    """Time ``a <op> b`` against tensor size, in each of ``modes``.

    Returns one dict per size: ``numel``, and for each mode the seconds per
    op (key: the mode's name) and ``<mode>_fixed_share``: the time of the
    same op on 1 element divided by this size's time, capped at 1. That share
    is the part of the op's time that does not grow with the tensor: parsing,
    dispatch, allocation, autograd bookkeeping.
    """
    sizes = [int(n) for n in sizes]
    base = grad_mode_costs(1, ops=(op,), modes=modes, rounds=rounds, min_run_time=min_run_time, device=device)[op]
    rows = []
    for n in sizes:
        costs = base if n == 1 else grad_mode_costs(n, ops=(op,), modes=modes, rounds=rounds,
                                                    min_run_time=min_run_time, device=device)[op]
        row: dict = {"numel": n}
        for mode in modes:
            row[mode] = costs[mode]
            row[f"{mode}_fixed_share"] = min(1.0, base[mode] / costs[mode])
        rows.append(row)
    return rows


def launch_vs_finish(n: int = 2048, repeats: int = 5, device: torch.device | str = "cpu") -> dict[str, float]:
    """Time one ``n x n`` matmul three ways; return seconds per matmul (medians over ``repeats``).

    All three run torch on one CPU thread (as :func:`timer_seconds` does), so
    that on a CPU they measure the same thing.

    * ``no_sync``: ``time.perf_counter()`` around the call only. On CUDA the
      call returns as soon as the kernel is queued (asynchronous execution),
      so this measures the launch, not the work;
    * ``sync``: the same with ``torch.cuda.synchronize()`` before reading the
      clock, which waits for the GPU to finish (on the CPU there is nothing
      to wait for and both agree);
    * ``timer``: ``torch.utils.benchmark.Timer``, which synchronises for you.
    """
    dev = torch.device(device)
    a = torch.randn(n, n, device=dev)
    is_cuda = dev.type == "cuda"
    sync = torch.cuda.synchronize if is_cuda else (lambda: None)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        a @ a
        sync()
        no_sync, with_sync = [], []
        for _ in range(int(repeats)):
            sync()
            t0 = time.perf_counter()
            a @ a
            no_sync.append(time.perf_counter() - t0)
            sync()
            t0 = time.perf_counter()
            a @ a
            sync()
            with_sync.append(time.perf_counter() - t0)
    finally:
        torch.set_num_threads(threads)
    med = lambda xs: sorted(xs)[len(xs) // 2]  # noqa: E731
    return {"no_sync": med(no_sync), "sync": med(with_sync), "timer": timer_seconds(lambda: a @ a, 0.05)}


def cache_sizes() -> dict[str, int]:
    """Return the CPU's data caches as ``{"L1d": bytes, "L2": bytes, "L3": bytes}``, read from Linux's sysfs.

    Each size is that of the cache level as the first CPU sees it (an L3 shared by several cores counts once).
    Returns ``{}`` where the operating system does not say (macOS, Windows, some containers).
    """
    from pathlib import Path

    out: dict[str, int] = {}
    base = Path("/sys/devices/system/cpu/cpu0/cache")
    for index in sorted(base.glob("index*")):
        try:
            level = (index / "level").read_text().strip()
            kind = (index / "type").read_text().strip()
            size = (index / "size").read_text().strip().upper()
        except OSError:
            continue
        if kind not in ("Data", "Unified"):
            continue
        factor = {"K": 2**10, "M": 2**20, "G": 2**30}.get(size[-1:], 1)
        digits = size.rstrip("KMG")
        if not digits.isdigit():
            continue
        out[f"L{level}" + ("d" if kind == "Data" else "")] = int(digits) * factor
    return out


def plot_costs(ladder: list[tuple[str, float]], rows: list[dict], mode: str = "no_grad",
               caches: dict[str, int] | None = None, title: str = "Where eager time goes"):
    """Left: the cost ladder of one tiny op (microseconds). Right: nanoseconds per element against size; return the figure.

    The right panel shows ``rows[i][mode] / numel`` (from :func:`size_sweep`) on log-log axes. For each entry of
    ``caches`` (bytes, as :func:`cache_sizes` returns) a dashed line marks the size at which ``a``, ``b`` and the
    result of ``a * b`` (three float32 tensors, 12 bytes per element) outgrow that cache: the knee where the time
    per element stops falling and rises.
    """
    import matplotlib.pyplot as plt

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 3.6))
    names = [name for name, _ in ladder]
    ax1.barh(names[::-1], [1e6 * s for _, s in ladder][::-1], color="tab:blue")
    ax1.set_xlabel("microseconds per op (cumulative)")
    ax1.set_title("one 1-element torch.mul", fontsize=9)
    ax1.grid(alpha=0.3, axis="x")
    n = [r["numel"] for r in rows]
    ax2.loglog(n, [1e9 * r[mode] / r["numel"] for r in rows], "o-", color="tab:red", label=f"a * b under {mode}")
    for i, (level, size) in enumerate(sorted((caches or {}).items(), key=lambda kv: kv[1])):
        at = size / 12
        if min(n) <= at <= max(n):
            ax2.axvline(at, ls="--", color="grey", lw=1)
            ax2.text(at, 0.97 - 0.1 * i, f" {level} full", transform=ax2.get_xaxis_transform(), fontsize=8,
                     color="grey", va="top")
    ax2.set_xlabel("elements per tensor")
    ax2.set_ylabel("nanoseconds per element")
    ax2.legend(fontsize=8, loc="lower left")
    ax2.grid(alpha=0.3, which="both")
    ax2.set_title("time per element: falls, levels off in cache, rises past it", fontsize=9)
    fig.suptitle(title)
    fig.tight_layout()
    plt.show()
    return fig


def hook_every_node(output: torch.Tensor) -> tuple[list[str], list[str]]:
    """Put a hook on every node of ``output``'s recorded graph; return ``(recorded, ran)``: lists of node type names.

    ``recorded`` lists each node reachable from ``output.grad_fn`` once; ``ran`` starts empty and gets a node's
    name each time the engine runs that node during a later ``backward()`` or ``torch.autograd.grad`` call.
    """
    recorded: list[str] = []
    ran: list[str] = []
    stack, seen = [output.grad_fn], set()
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        recorded.append(type(node).__name__)
        node.register_hook(lambda grad_inputs, grad_outputs, name=type(node).__name__: ran.append(name))
        stack.extend(next_node for next_node, _ in node.next_functions)
    return recorded, ran


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
