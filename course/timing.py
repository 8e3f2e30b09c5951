"""Timings that admit their noise: interleaved rounds, a spread, and a verdict that follows from the spread.

On a shared machine a timing is a sample from a distribution that other
programs keep moving. Three habits make a comparison honest:

* :func:`interleaved` times several callables in **rounds**: each round runs
  every variant once, in turn, so a burst of load slows all of them alike
  instead of one of them;
* :func:`spread` summarises each variant's samples as a median with its
  quartiles (``q1``..``q3``, the middle half of the rounds), and
  :func:`paired_ratio` the round-by-round ratio of two variants;
* :func:`verdict` calls one variant faster or slower than another only when
  their middle halves do not overlap, and otherwise says
  ``"inconclusive"``: the difference is not larger than what the load did to
  either of them during this measurement. :func:`comparison` writes the line
  a notebook prints, with both medians, both spreads and that verdict.

Nothing here needs a GPU: pass ``sync`` (``torch.cuda.synchronize``) to
count queued device work.
"""
from __future__ import annotations

import math
import re
import statistics
import time
from typing import Callable, Iterable, Mapping

import torch

#: What a comparison says when the two spreads overlap.
INCONCLUSIVE = "inconclusive on this machine now"


def calibrate(fn: Callable[[], object], target_s: float = 1e-3, clock: Callable[[], float] | None = None,
              limit: int = 1_000_000) -> int:
    """Return how many calls of ``fn()`` take about ``target_s`` seconds (at least 1).

    Calls ``fn()`` 1, 2, 4, ... times in a row until a block lasts ``target_s``
    or longer; those calls also warm the variant up.
    """
    clock = clock or time.perf_counter
    number = 1
    while True:
        t0 = clock()
        for _ in range(number):
            fn()
        elapsed = clock() - t0
        if elapsed >= target_s or number >= limit:
            break
        number *= 2
    per_call = elapsed / number
    return max(1, min(limit, math.ceil(target_s / per_call) if per_call > 0 else limit))


def interleaved(fns: Mapping[str, Callable[[], object]], rounds: int = 20, warmup: int = 1,
                number: int | Mapping[str, int] | None = 1, target_s: float = 1e-3,
                sync: Callable[[], object] | None = None, threads: int | None = 1,
                clock: Callable[[], float] | None = None) -> dict[str, list[float]]:
    """Time several callables in interleaved rounds; return ``{name: [seconds per call, one per round]}``.

    Each round times every function once, in the order given: one sample is
    ``number`` calls in a row divided by ``number`` (``None``: each variant's
    own number from :func:`calibrate`, so that one sample lasts about
    ``target_s``; a dict gives each name its own). ``warmup`` untimed rounds
    come first. ``sync`` (for example ``torch.cuda.synchronize``) runs before
    and after each sample. ``threads``: torch's intra-op threads while timing
    (default 1, as :class:`torch.utils.benchmark.Timer` does; ``None`` leaves
    the setting alone); the previous setting is restored.
    """
    if rounds < 1:
        raise ValueError("rounds must be at least 1")
    clock = clock or time.perf_counter
    previous = torch.get_num_threads()
    if threads is not None:
        torch.set_num_threads(int(threads))
    try:
        for _ in range(max(0, int(warmup))):
            for fn in fns.values():
                fn()
        if isinstance(number, Mapping):
            numbers = {name: int(number[name]) for name in fns}
        elif number is None:
            numbers = {name: calibrate(fn, target_s, clock) for name, fn in fns.items()}
        else:
            numbers = {name: int(number) for name in fns}
        if any(n < 1 for n in numbers.values()):
            raise ValueError("number must be at least 1")
        samples: dict[str, list[float]] = {name: [] for name in fns}
        for _ in range(int(rounds)):
            for name, fn in fns.items():
                n = numbers[name]
                if sync is not None:
                    sync()
                t0 = clock()
                for _ in range(n):
                    fn()
                if sync is not None:
                    sync()
                samples[name].append((clock() - t0) / n)
        return samples
    finally:
        torch.set_num_threads(previous)


def spread(samples: Iterable[float]) -> dict[str, float]:
    """Summarise timings: ``{"median", "q1", "q3", "min", "max", "n"}`` in the samples' own unit.

    ``q1`` and ``q3`` are the quartiles (``statistics.quantiles``, inclusive
    method), so ``q1..q3`` holds the middle half of the runs: the spread to
    report beside a median. With one sample every field is that sample.
    """
    v = [float(s) for s in samples]
    if not v:
        raise ValueError("no samples")
    if len(v) == 1:
        q1 = q3 = v[0]
    else:
        q1, _, q3 = statistics.quantiles(v, n=4, method="inclusive")
    return {"median": float(statistics.median(v)), "q1": float(q1), "q3": float(q3),
            "min": float(min(v)), "max": float(max(v)), "n": len(v)}


def paired_ratio(numerator: list[float], denominator: list[float]) -> dict[str, float]:
    """The round-by-round ratio ``numerator[i] / denominator[i]`` summarised with :func:`spread`.

    :func:`interleaved` times its variants in rounds, so the i-th samples of
    two variants ran side by side, under the same load; their ratio per round
    is a fairer "speed-up" than a ratio of two medians, and its quartiles say
    how much it swung during the measurement.
    """
    if len(numerator) != len(denominator) or not numerator:
        raise ValueError("need two equally long, non-empty lists of paired samples")
    return spread([a / b for a, b in zip(numerator, denominator)])


def _summary(x) -> dict[str, float]:
    return x if isinstance(x, Mapping) else spread(x)


def verdict(a, b) -> str:
    """``"faster"``, ``"slower"`` or ``"inconclusive"``: how ``a`` compares with ``b`` (times: less is faster).

    ``a`` and ``b`` are lists of samples or :func:`spread` summaries.
    ``"faster"`` only when ``a``'s middle half lies wholly below ``b``'s
    (``a.q3 < b.q1``), ``"slower"`` only when wholly above; when the two
    ranges overlap, the difference is within this measurement's noise.
    """
    sa, sb = _summary(a), _summary(b)
    if sa["q3"] < sb["q1"]:
        return "faster"
    if sa["q1"] > sb["q3"]:
        return "slower"
    return "inconclusive"


def interval(x, scale: float = 1.0, digits: int = 3) -> str:
    """``"median [q1, q3]"`` of samples or a summary, each multiplied by ``scale`` (1e6: seconds -> us)."""
    s = _summary(x)
    return f"{scale * s['median']:.{digits}f} [{scale * s['q1']:.{digits}f}, {scale * s['q3']:.{digits}f}]"


def comparison(name_a: str, a, name_b: str, b, unit: str = "us", scale: float = 1e6, digits: int = 3) -> str:
    """One printable line: both medians with their middle halves, the ratio of medians and :func:`verdict`.

    For example ``"frozen 1.204 [1.180, 1.250] ms vs eager 1.731 [1.650, 1.800] ms: frozen is faster
    (0.70x the time)"``, or ``"...: inconclusive on this machine now (the middle halves overlap)"``.
    """
    sa, sb = _summary(a), _summary(b)
    head = (f"{name_a} {interval(sa, scale, digits)} {unit} vs {name_b} {interval(sb, scale, digits)} {unit}: ")
    word = verdict(sa, sb)
    if word == "inconclusive":
        return head + f"{INCONCLUSIVE} (the middle halves overlap)"
    return head + f"{name_a} is {word} ({sa['median'] / sb['median']:.2f}x the time)"


_INTERVAL = re.compile(r"(-?\d+(?:\.\d+)?) \[(-?\d+(?:\.\d+)?), (-?\d+(?:\.\d+)?)\]")


def parse_intervals(line: str) -> list[tuple[float, float, float]]:
    """The ``(median, q1, q3)`` triples that :func:`interval` wrote into ``line``, in order (for tests)."""
    return [(float(m), float(lo), float(hi)) for m, lo, hi in _INTERVAL.findall(line)]


def consistent(line: str) -> bool:
    """Whether a :func:`comparison` line's verdict follows from the two ranges it prints (rounded as printed).

    "faster" needs the first printed range at or below the second (``q3_a <= q1_b``), "slower" the
    reverse, and "inconclusive" needs the printed ranges to touch or overlap. Rounding to the printed digits
    is monotone, so a verdict that followed from the exact numbers always passes.
    """
    found = parse_intervals(line)
    if len(found) < 2:
        return False
    (_, a1, a3), (_, b1, b3) = found[:2]
    if INCONCLUSIVE in line:
        return a3 >= b1 and b3 >= a1
    if " is faster " in line:
        return a3 <= b1
    if " is slower " in line:
        return a1 >= b3
    return False
