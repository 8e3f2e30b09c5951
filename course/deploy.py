"""Helpers for chapter 3 (TorchScript and ``torch.export``): warnings, round trips, timing, a clean subprocess.

* :data:`JIT_DEPRECATION_MESSAGE` and :func:`filter_jit_deprecation`: the
  exact ``FutureWarning`` that torch 2.x emits for ``torch.jit.script``,
  ``trace``, ``freeze``, ``save`` and ``load``, filtered by category *and*
  message (never a blanket ignore);
* :func:`jit_roundtrip` and :func:`export_roundtrip`: save and load back,
  through memory or a file, and report the size in bytes;
* :func:`timings_ms`, :func:`median_ms` and :func:`compare_ms`: wall-clock timing in milliseconds,
  and :func:`num_threads` to time with a fixed number of CPU threads;
* :func:`quiet_logs`: hide torch's log lines (not warnings) while a cell shows an expected error;
* :func:`run_saved`: run a saved TorchScript (``.pt``) or ``torch.export``
  (``.pt2``) file in a fresh Python process that imports only ``torch``, to
  prove the file does not need the Python class that produced it.
"""
from __future__ import annotations

import contextlib
import io
import json
import logging
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator

import torch

#: Category of the TorchScript deprecation warning in torch 2.x.
JIT_DEPRECATION_CATEGORY = FutureWarning

#: Regex matching the start of the TorchScript deprecation messages, e.g.
#: "`torch.jit.script` is deprecated. Please switch to `torch.compile` or `torch.export`."
#: and "`torch.jit.freeze` is deprecated. Please use `torch.compile` instead."
JIT_DEPRECATION_MESSAGE = r"`torch\.jit\.\w+` is deprecated\. Please (switch to|use) `torch\.(compile|export)`"


def is_jit_deprecation(message: str) -> bool:
    """Return True when ``message`` is one of torch's TorchScript deprecation messages."""
    return re.match(JIT_DEPRECATION_MESSAGE, str(message)) is not None


def filter_jit_deprecation() -> tuple:
    """Ignore the TorchScript ``FutureWarning`` (that category, that message only); return the filter installed.

    Other ``FutureWarning`` messages, and every other warning, still show.
    Calling it twice installs the filter once (``warnings`` replaces an
    identical filter). The returned tuple is the entry of ``warnings.filters``.
    """
    warnings.filterwarnings("ignore", category=JIT_DEPRECATION_CATEGORY, message=JIT_DEPRECATION_MESSAGE)
    return warnings.filters[0]


def jit_roundtrip(module: torch.jit.ScriptModule, path: str | os.PathLike | None = None
                  ) -> tuple[torch.jit.ScriptModule, int]:
    """Save ``module`` with ``torch.jit.save`` and load it back; return (loaded module, size in bytes).

    With ``path=None`` the bytes go through an in-memory ``io.BytesIO``;
    otherwise they are written to ``path`` (the file is kept).
    """
    if path is None:
        buffer = io.BytesIO()
        torch.jit.save(module, buffer)
        size = len(buffer.getvalue())
        buffer.seek(0)
        return torch.jit.load(buffer), size
    torch.jit.save(module, str(path))
    return torch.jit.load(str(path)), os.path.getsize(path)


def export_roundtrip(program: torch.export.ExportedProgram, path: str | os.PathLike | None = None
                     ) -> tuple[torch.export.ExportedProgram, int]:
    """Save with ``torch.export.save`` and load back; return (loaded ExportedProgram, size in bytes).

    With ``path=None`` the archive goes through an ``io.BytesIO``; otherwise
    it is written to ``path`` (conventionally a ``.pt2`` file, kept).
    """
    if path is None:
        buffer = io.BytesIO()
        torch.export.save(program, buffer)
        size = len(buffer.getvalue())
        buffer.seek(0)
        return torch.export.load(buffer), size
    torch.export.save(program, str(path))
    return torch.export.load(str(path)), os.path.getsize(path)


def timings_ms(fn: Callable[[], object], repeats: int = 20, warmup: int = 3, sync: bool = False) -> list[float]:
    """Call ``fn()`` ``warmup`` times untimed, then ``repeats`` times; return each call's wall time in milliseconds.

    With ``sync=True`` and CUDA available, ``torch.cuda.synchronize()`` runs
    before and after each timed call, so queued GPU work is counted.
    """
    if repeats < 1:
        raise ValueError("repeats must be at least 1")
    do_sync = sync and torch.cuda.is_available()
    for _ in range(max(0, warmup)):
        fn()
    out = []
    for _ in range(repeats):
        if do_sync:
            torch.cuda.synchronize()
        t0 = time.perf_counter()
        fn()
        if do_sync:
            torch.cuda.synchronize()
        out.append((time.perf_counter() - t0) * 1000.0)
    return out


def median_ms(fn: Callable[[], object], repeats: int = 20, warmup: int = 3, sync: bool = False) -> float:
    """Return the median wall time of ``fn()`` in milliseconds (see :func:`timings_ms`).

    The median, not the mean, so that one call slowed by another process on a
    shared machine does not move the figure much.
    """
    return float(statistics.median(timings_ms(fn, repeats=repeats, warmup=warmup, sync=sync)))


def compare_ms(fns: dict[str, Callable[[], object]], repeats: int = 20, warmup: int = 3,
               sync: bool = False) -> dict[str, dict[str, float]]:
    """Time several callables in interleaved rounds; return ``{name: {"median": ms, "min": ms}}`` in milliseconds.

    Each round calls every function once, in turn, so a burst of load from
    another process slows all of them alike instead of one. ``warmup``
    untimed rounds come first. ``min`` is the least disturbed run,
    ``median`` the typical one.
    """
    if repeats < 1:
        raise ValueError("repeats must be at least 1")
    samples: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(max(0, warmup)):
        for fn in fns.values():
            fn()
    for _ in range(repeats):
        for name, fn in fns.items():
            samples[name].extend(timings_ms(fn, repeats=1, warmup=0, sync=sync))
    return {name: {"median": float(statistics.median(v)), "min": float(min(v))} for name, v in samples.items()}


@contextlib.contextmanager
def num_threads(n: int | None) -> Iterator[int]:
    """Within the block, run torch's CPU ops on ``n`` intra-op threads (``None``: leave as is); yield the count in use.

    For timing on a shared machine: a multi-threaded op waits for its slowest
    thread, so one busy core can make it many times slower, while one thread
    gives steadier figures. The previous count is restored on exit.
    """
    previous = torch.get_num_threads()
    if n is not None:
        if n < 1:
            raise ValueError("n must be at least 1")
        torch.set_num_threads(n)
    try:
        yield torch.get_num_threads()
    finally:
        torch.set_num_threads(previous)


# The child process: only the standard library and torch. It never imports
# `course` or the notebook, so whatever it runs came from the saved file.
_CHILD = r'''
import json, sys, time, warnings
warnings.filterwarnings("ignore", category=FutureWarning, message=sys.argv[5])
import torch
path, inp, out, kind = sys.argv[1:5]
x = torch.load(inp)
t0 = time.perf_counter()
if kind == "torchscript":
    model = torch.jit.load(path)
else:
    model = torch.export.load(path).module()
load_ms = (time.perf_counter() - t0) * 1000.0
with torch.no_grad():
    y = model(x)
torch.save(y, out)
print(json.dumps({
    "load_ms": load_ms,
    "course_imported": any(m == "course" or m.startswith("course.") for m in sys.modules),
    "main_names": sorted(n for n in vars(sys.modules["__main__"]) if not n.startswith("_")),
    "torch": torch.__version__,
}))
'''


@dataclass
class SavedRun:
    """What :func:`run_saved` observed in the child process."""

    output: torch.Tensor   #: the model's output for the input given
    load_ms: float         #: time to load the file in the child, in milliseconds
    seconds: float         #: wall time of the whole child process (interpreter start and ``import torch`` included), in seconds
    course_imported: bool  #: whether any ``course`` module was imported in the child (it should be False)
    main_names: list[str]  #: the public names defined in the child's ``__main__`` (no model class among them)
    torch_version: str     #: ``torch.__version__`` in the child


def run_saved(path: str | os.PathLike, example: torch.Tensor, kind: str = "torchscript",
              timeout: float = 180.0) -> SavedRun:
    """Run a saved model on ``example`` in a fresh ``python -I`` process that imports only torch; return a :class:`SavedRun`.

    ``kind`` is ``"torchscript"`` (a file from ``torch.jit.save``) or
    ``"export"`` (a ``.pt2`` from ``torch.export.save``). ``-I`` (isolated
    mode) ignores ``PYTHONPATH`` and does not put the working directory on
    ``sys.path``, and the child runs in a temporary folder. Raises
    ``RuntimeError`` with the child's stderr if it fails.
    """
    if kind not in ("torchscript", "export"):
        raise ValueError("kind must be 'torchscript' or 'export'")
    path = Path(path).resolve()
    with tempfile.TemporaryDirectory(prefix="course-deploy-") as tmp:
        inp, out = Path(tmp) / "input.pt", Path(tmp) / "output.pt"
        torch.save(example.detach().cpu(), inp)
        t0 = time.perf_counter()
        proc = subprocess.run([sys.executable, "-I", "-c", _CHILD, str(path), str(inp), str(out), kind,
                               JIT_DEPRECATION_MESSAGE],
                              cwd=tmp, capture_output=True, text=True, timeout=timeout)
        seconds = time.perf_counter() - t0
        if proc.returncode != 0:
            raise RuntimeError(f"child process failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
        info = json.loads(proc.stdout.strip().splitlines()[-1])
        output = torch.load(out)
    return SavedRun(output=output, load_ms=float(info["load_ms"]), seconds=seconds,
                    course_imported=bool(info["course_imported"]), main_names=list(info["main_names"]),
                    torch_version=str(info["torch"]))


@contextlib.contextmanager
def quiet_logs(level: int = logging.WARNING) -> Iterator[io.StringIO]:
    """Within the block, drop log records at ``level`` and below and capture ``sys.stderr``; yield the captured text buffer.

    When an export fails, ``torch.export`` logs hints and prints the partial
    graph to ``sys.stderr``; a cell that means to show the exception itself
    uses this to keep the output readable (the text stays available in the
    yielded ``io.StringIO``). Python ``warnings`` are not affected. Logging
    and ``sys.stderr`` are restored on exit, even after an exception.
    """
    previous = logging.root.manager.disable
    captured = io.StringIO()
    logging.disable(level)
    try:
        with contextlib.redirect_stderr(captured):
            yield captured
    finally:
        logging.disable(previous)
