"""Chapter 1 helpers: timing eager ops (where the per-op cost goes) and small plots; generated images for
Chapter 4's preprocessing section (:func:`sample_image`, :func:`as_three_kinds`, :func:`show_images`).

Comparisons (:func:`op_costs`, :func:`size_sweep`, :func:`fresh_vs_preallocated`)
time their variants in interleaved rounds with :mod:`course.timing` and report
medians with their spreads; a verdict ("costs X us", "slower") is printed only
when the spreads separate. :func:`timer_seconds` wraps
:class:`torch.utils.benchmark.Timer` for single measurements. Nothing here needs
a GPU; on CUDA the same functions time CUDA tensors (and synchronise).
"""
from __future__ import annotations

import logging
import mmap
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

from course import timing  # noqa: E402

#: The four ways of running one op that :func:`op_costs` compares.
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


#: The rungs of the cost ladder of one 1-element ``torch.mul``: (key in :func:`op_costs`, label), cheapest first.
LADDER = (("python", "Python: loop + empty function call"),
          ("into C++", "+ enter C++ and return (a.dim())"),
          ("mul, inference_mode", "+ parse, dispatch, allocate, kernel"),
          ("mul, no_grad", "+ autograd layer, records nothing"),
          ("mul, requires_grad", "+ create MulBackward0, save inputs"))

#: What a layer whose cost is within the noise is called.
BELOW_NOISE = "below this machine's noise"


def op_costs(rounds: int = 30, numel: int = 1, ops: tuple[str, ...] = ("add", "mul"), modes: tuple[str, ...] = MODES,
             ladder: bool = True, target_s: float = 1e-3, device: torch.device | str = "cpu") -> dict[str, list[float]]:
    """ONE interleaved measurement of one small op, every way it runs; return ``{variant: [seconds per op, per round]}``.

    The variants are ``"<op>, <mode>"`` for each op (``"add"``, ``"mul"``) and
    mode of :data:`MODES` (``a <op> b`` on ``numel`` elements, see
    :func:`op_loop`) and, with ``ladder=True``, the two rungs below an op:

    1. ``python``: a Python ``for`` loop calling an empty Python function;
    2. ``into C++``: calling ``a.dim()``, a tensor method that enters C++ and
       returns, without the dispatcher.

    Every variant is timed once per round, in turn (:func:`course.timing.interleaved`
    on one thread, each sample about ``target_s`` seconds), so load from other
    programs hits all of them alike, and every table and bar drawn from the
    result (:data:`LADDER`, :func:`ladder_lines`, :func:`mode_table_lines`,
    :func:`plot_costs`) reads the same samples. Summarise with
    :func:`course.timing.spread`.
    """
    inner = _inner_for(numel)
    loops: dict[str, Callable[[], None]] = {}
    if ladder:
        a, _ = _operands(1, False, device)

        def empty() -> None:
            return None

        rng = range(inner)

        def python_calls() -> None:
            for _ in rng:
                empty()

        def into_cpp() -> None:
            for _ in rng:
                a.dim()

        loops.update({"python": python_calls, "into C++": into_cpp})
    for op in ops:
        for mode in modes:
            loops[f"{op}, {mode}"] = op_loop(op, numel, mode, inner, device)
    sync = torch.cuda.synchronize if torch.device(device).type == "cuda" else None
    samples = timing.interleaved(loops, rounds=rounds, warmup=1, number=None, target_s=target_s, sync=sync)
    return {name: [t / inner for t in v] for name, v in samples.items()}


def cost_ladder(costs: dict[str, list[float]]) -> list[tuple[str, dict[str, float]]]:
    """Return ``[(rung, spread in seconds)]`` for the rungs of :data:`LADDER`, read from :func:`op_costs`'s samples.

    Each rung is a cumulative setting; the difference between consecutive
    rungs is the cost of one layer. :func:`ladder_lines` prints them with
    their spreads and says which layers rise above the noise.
    """
    return [(key, timing.spread(costs[key])) for key, _ in LADDER]


def layer_verdict(lower, upper) -> str:
    """What one layer costs, from the rung below (``lower``) and the rung with the layer (``upper``).

    ``"costs X us"`` when ``upper``'s middle half lies wholly above
    ``lower``'s (X: the difference of the medians), :data:`BELOW_NOISE` when
    the two overlap, and ``"cheaper than the row above by X us"`` when the rung
    with the layer was measured faster (the ranges separate the other way).
    """
    lo, up = timing.spread(lower) if not isinstance(lower, dict) else lower, \
        timing.spread(upper) if not isinstance(upper, dict) else upper
    diff = 1e6 * (up["median"] - lo["median"])
    word = timing.verdict(lo, up)
    if word == "faster":
        return f"costs {diff:.3f} us"
    if word == "slower":
        return f"cheaper than the row above by {-diff:.3f} us"
    return f"{BELOW_NOISE} (the middle halves overlap)"


def ladder_lines(costs: dict[str, list[float]]) -> list[str]:
    """The ladder as printed lines: each rung's median [q1, q3] in microseconds per op, and its layer's verdict."""
    lines = []
    previous = None
    for key, label in LADDER:
        line = f"  {label:<38} {timing.interval(costs[key], 1e6)} us"
        if previous is not None:
            line += f"   this layer: {layer_verdict(costs[previous], costs[key])}"
        lines.append(line)
        previous = key
    return lines


def mode_table_lines(costs: dict[str, list[float]], ops: tuple[str, ...] = ("add", "mul"),
                     modes: tuple[str, ...] = MODES) -> list[str]:
    """The four-ways table (median [q1, q3] us per op, one row per op) and, per op, whether recording a node shows.

    The recording line compares ``requires_grad`` with ``no_grad`` through
    :func:`course.timing.comparison`: "requires_grad is slower" only when the
    two middle halves separate, otherwise "inconclusive on this machine now".
    """
    width = 24
    lines = [f"  {'':<5}" + "".join(f"{mode:>{width}}" for mode in modes)]
    for op in ops:
        lines.append(f"  {op:<5}" + "".join(f"{timing.interval(costs[f'{op}, {mode}'], 1e6):>{width}}" for mode in modes))
    for op in ops:
        if "requires_grad" in modes and "no_grad" in modes:
            lines.append(f"recording one {op} node: " + timing.comparison(
                "requires_grad", costs[f"{op}, requires_grad"], "no_grad", costs[f"{op}, no_grad"]))
    return lines


def size_sweep(sizes: list[int], op: str = "mul", modes: tuple[str, ...] = ("no_grad", "requires_grad"),
               rounds: int = 10, target_s: float = 1e-3, device: torch.device | str = "cpu") -> list[dict]:
    """Time ``a <op> b`` against tensor size, in each of ``modes``, all sizes in one interleaved measurement.

    Returns one dict per size: ``numel``; for each mode the median seconds per
    op (key: the mode's name), its quartiles (``<mode>_q1``, ``<mode>_q3``), the
    samples (``<mode>_samples``) and ``<mode>_fixed_share``: the median time of
    the same op on the smallest size divided by this size's, capped at 1. For a
    1-element smallest size, that share is the part of the op's time that does
    not grow with the tensor: parsing, dispatch, allocation, autograd bookkeeping.
    """
    sizes = [int(n) for n in sizes]
    loops = {}
    for n in sizes:
        inner = _inner_for(n)
        for mode in modes:
            loops[(n, mode)] = (op_loop(op, n, mode, inner, device), inner)
    sync = torch.cuda.synchronize if torch.device(device).type == "cuda" else None
    samples = timing.interleaved({key: fn for key, (fn, _) in loops.items()}, rounds=rounds, warmup=1, number=None,
                                 target_s=target_s, sync=sync)
    rows = []
    base = {mode: timing.spread([t / loops[(sizes[0], mode)][1] for t in samples[(sizes[0], mode)]])["median"]
            for mode in modes}
    for n in sizes:
        row: dict = {"numel": n}
        for mode in modes:
            per_op = [t / loops[(n, mode)][1] for t in samples[(n, mode)]]
            s = timing.spread(per_op)
            row[mode], row[f"{mode}_q1"], row[f"{mode}_q3"] = s["median"], s["q1"], s["q3"]
            row[f"{mode}_samples"] = per_op
            row[f"{mode}_fixed_share"] = min(1.0, base[mode] / s["median"])
        rows.append(row)
    return rows


def _minor_faults() -> int | None:
    try:
        import resource
    except ImportError:             # not on Windows
        return None
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt


def fresh_vs_preallocated(numel: int, rounds: int = 10, device: torch.device | str = "cpu") -> dict:
    """Time ``torch.mul(a, b)`` (a new output every call) against ``torch.mul(a, b, out=c)`` (one preallocated output).

    Interleaved rounds under ``no_grad`` on one thread. Returns ``{"new output": [seconds per call], "out=":
    [...], "faults": {"new output": f, "out=": f}}`` where ``f`` is the number of minor page faults per call
    (memory the operating system hands out on first touch; ``None`` where the OS does not count them), measured
    over a few extra calls of each.
    """
    dev = torch.device(device)
    g = torch.Generator().manual_seed(0)
    a, b = torch.randn(int(numel), generator=g).to(dev), torch.randn(int(numel), generator=g).to(dev)
    out = torch.empty(int(numel), device=dev)
    fns = {"new output": lambda: torch.mul(a, b), "out=": lambda: torch.mul(a, b, out=out)}
    sync = torch.cuda.synchronize if dev.type == "cuda" else None
    with torch.no_grad():
        samples = timing.interleaved(fns, rounds=rounds, warmup=1, number=None, target_s=1e-3, sync=sync)
        faults = {}
        for name, fn in fns.items():
            before = _minor_faults()
            for _ in range(3):
                fn()
            after = _minor_faults()
            faults[name] = None if before is None else (after - before) / 3
    return {**samples, "faults": faults}


def fresh_memory_lines(result: dict, numel: int) -> list[str]:
    """Print-ready lines for :func:`fresh_vs_preallocated`: ns per element with spreads, page faults, the verdict.

    The verdict names fresh memory from the operating system only when the new-output runs are slower with
    separate middle halves (:func:`course.timing.verdict`); otherwise it says "inconclusive on this machine now".
    """
    line = timing.comparison("new output", result["new output"], "out=", result["out="], unit="ns per element",
                             scale=1e9 / int(numel))
    lines = [f"{int(numel):,} elements: " + line]
    faults = result.get("faults", {})
    if faults.get("new output") is not None:
        lines.append(f"minor page faults per call: new output {faults['new output']:,.0f}, "
                     f"out= {faults['out=']:,.0f} (one fault per {mmap.PAGESIZE // 1024} KiB page the OS hands out on first "
                     f"touch; {int(numel) * 4 // mmap.PAGESIZE:,} pages hold one float32 output)")
    if timing.verdict(result["new output"], result["out="]) == "slower":
        if faults.get("new output") is None:
            lines.append("so at this size a new output costs extra (this OS does not count page faults, so the "
                         "cell cannot say whether fresh memory from the operating system is the reason)")
        elif faults["new output"] > faults["out="]:
            lines.append("so at this size a new output costs extra: its memory comes fresh from the operating system "
                         "(page faults), which a preallocated out= skips")
        else:
            lines.append("so at this size a new output costs extra, though not in page faults: the allocator reused "
                         "memory it already had")
    elif timing.verdict(result["new output"], result["out="]) == "faster":
        lines.append("so at this size a new output was measured cheaper than writing into out=")
    else:
        lines.append(f"so whether a new output costs extra at this size is {timing.INCONCLUSIVE}")
    return lines


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


def plot_costs(ladder: list[tuple[str, object]], rows: list[dict], mode: str = "no_grad",
               caches: dict[str, int] | None = None, title: str = "Where eager time goes",
               preallocated: tuple[int, list[float]] | None = None):
    """Left: the cost ladder of one tiny op (microseconds). Right: nanoseconds per element against size; return the figure.

    ``ladder`` is :func:`cost_ladder`'s ``[(rung, spread)]`` (or ``[(rung, seconds)]``): each bar is a rung's
    median, its whisker the middle half of the rounds (q1 to q3), the same numbers :func:`ladder_lines` prints.
    The right panel shows ``rows[i][mode] / numel`` (from :func:`size_sweep`) on log-log axes, with the
    q1..q3 range as error bars where the rows have it. ``preallocated``: ``(numel, [seconds per call])`` of the
    same op into a preallocated ``out=`` (:func:`fresh_vs_preallocated`), drawn as one more point. For each entry
    of ``caches`` (bytes, as :func:`cache_sizes` returns) a dashed line marks the size at which ``a``, ``b`` and
    the result of ``a * b`` (three float32 tensors, 12 bytes per element) outgrow that cache.
    """
    import matplotlib.pyplot as plt

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 3.6))
    names = [name for name, _ in ladder]
    summaries = [v if isinstance(v, dict) else {"median": v, "q1": v, "q3": v} for _, v in ladder]
    med = [1e6 * s["median"] for s in summaries]
    err = [[1e6 * (s["median"] - s["q1"]) for s in summaries], [1e6 * (s["q3"] - s["median"]) for s in summaries]]
    ax1.barh(names[::-1], med[::-1], xerr=[e[::-1] for e in err], color="tab:blue", capsize=3,
             error_kw={"elinewidth": 1})
    ax1.set_xlabel("microseconds per op (cumulative; median, whisker q1-q3)")
    ax1.set_title("one 1-element torch.mul", fontsize=9)
    ax1.grid(alpha=0.3, axis="x")
    n = [r["numel"] for r in rows]
    y = [1e9 * r[mode] / r["numel"] for r in rows]
    if all(f"{mode}_q1" in r for r in rows):
        yerr = [[1e9 * (r[mode] - r[f"{mode}_q1"]) / r["numel"] for r in rows],
                [1e9 * (r[f"{mode}_q3"] - r[mode]) / r["numel"] for r in rows]]
        ax2.errorbar(n, y, yerr=yerr, fmt="o-", color="tab:red", capsize=2, label=f"a * b under {mode}")
    else:
        ax2.loglog(n, y, "o-", color="tab:red", label=f"a * b under {mode}")
    if preallocated is not None:
        size, samples = preallocated
        s = timing.spread(samples)
        ax2.errorbar([size], [1e9 * s["median"] / size],
                     yerr=[[1e9 * (s["median"] - s["q1"]) / size], [1e9 * (s["q3"] - s["median"]) / size]],
                     fmt="s", color="tab:green", capsize=2, label="the same into a preallocated out=")
    ax2.set_xscale("log")
    ax2.set_yscale("log")
    for i, (level, size) in enumerate(sorted((caches or {}).items(), key=lambda kv: kv[1])):
        at = size / 12
        if min(n) <= at <= max(n):
            ax2.axvline(at, ls="--", color="grey", lw=1)
            ax2.text(at, 0.97 - 0.1 * i, f" {level} full", transform=ax2.get_xaxis_transform(), fontsize=8,
                     color="grey", va="top")
    ax2.set_xlabel("elements per tensor")
    ax2.set_ylabel("nanoseconds per element")
    ax2.legend(fontsize=8, loc="upper center")
    ax2.grid(alpha=0.3, which="both")
    ax2.set_title("time per element against size (median, bars q1-q3)", fontsize=9)
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
