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
* :func:`deprecation_messages`: the exact FutureWarning text each TorchScript function emits;
* :func:`aoti_package`, :func:`libtorch_toolchain`, :func:`build_cpp` / :func:`start_cpp_build`,
  :func:`run_program` and
  :data:`CPP_LOADER_SOURCE`: leave Python, with an AOTInductor package and a LibTorch (C++) program;
* :func:`run_saved`: run a saved TorchScript (``.pt``) or ``torch.export``
  (``.pt2``) file in a fresh Python process that imports only ``torch``, to
  prove the file does not need the Python class that produced it;
* :func:`spread` and :func:`paired_ratio` (from :mod:`course.timing`): a median with its quartiles, and
  the round-by-round ratio of two interleaved timings; :func:`fold_bound_lines`: a freeze speed-up against
  what folding batch norm can give at most;
* :func:`shared_tensors`, :func:`graph_census`, :func:`draft_failures` and
  :func:`graph_tensor_bytes`: what an exported program shares with the live
  model, what freezing removed from a graph, what ``draft_export`` found (and
  where), and how many bytes a quantized graph really reads.
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

from course import timing
from course.timing import paired_ratio, spread  # noqa: F401  (moved there; Chapter 3 calls deploy.spread)

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
               sync: bool = False) -> dict[str, dict]:
    """Time several callables in interleaved rounds; return ``{name: spread + {"samples": [...]}}`` in milliseconds.

    A thin wrapper of :func:`course.timing.interleaved` (one call per sample,
    torch's thread setting left as it is): each round calls every function
    once, in turn, so a burst of load from another process slows all of them
    alike instead of one. ``warmup`` untimed rounds come first. Per name:
    ``median`` (the typical run), ``q1``/``q3`` (the middle half of the runs),
    ``min`` (the least disturbed run), ``max``, ``n`` and the raw ``samples``
    in round order (see :func:`spread`, :func:`paired_ratio` and
    :func:`course.timing.verdict`).
    """
    if repeats < 1:
        raise ValueError("repeats must be at least 1")
    do_sync = torch.cuda.synchronize if (sync and torch.cuda.is_available()) else None
    seconds = timing.interleaved(fns, rounds=repeats, warmup=warmup, number=1, sync=do_sync, threads=None)
    return {name: {**spread([1000.0 * t for t in v]), "samples": [1000.0 * t for t in v]}
            for name, v in seconds.items()}


def fold_bound_lines(before: list[float], frozen: list[float], removed_share: float,
                     before_name: str = "script") -> list[str]:
    """Print-ready lines: a freeze speed-up, measured in interleaved rounds, against what folding could give.

    ``before`` and ``frozen`` are paired samples (:func:`compare_ms`) of the module before and after
    ``torch.jit.freeze``; ``removed_share`` is the share of the operators' own time spent in the ops that
    freezing folds away (batch norm), so removing them can make the module at most ``1 / (1 - share)`` times
    faster. The lines print the round-by-round ratio (median [q1, q3]), that bound, and a verdict that
    follows from the spreads: :data:`course.timing.INCONCLUSIVE` when the two timings' middle halves
    overlap, "more than removing those ops allows" only when the ratio's lower quartile is above the bound.
    """
    if not 0 <= removed_share < 1:
        raise ValueError("removed_share must be in [0, 1)")
    ratio = paired_ratio(before, frozen)
    most = 1.0 / (1.0 - removed_share)
    lines = [f"{before_name} / (script + freeze), round by round: {timing.interval(ratio, 1.0, 2)}x (median [q1, q3])",
             f"freezing folds away ops that take {removed_share:.0%} of the operators' own time, so folding alone "
             f"can make the module at most {most:.2f}x faster"]
    word = timing.verdict(frozen, before)
    if word == "inconclusive":
        lines.append(f"measured: {timing.INCONCLUSIVE} (the middle halves of the two timings overlap)")
    elif word == "slower":
        lines.append("measured: script + freeze was slower in this run (the middle halves separate)")
    elif ratio["q1"] > most:
        lines.append("measured: faster by more than removing those ops allows: the rest is interpreter work that "
                     "freezing also removes (attribute lookups, branches), or load that did not hit the variants alike")
    else:
        lines.append("measured: faster, within what removing those ops allows")
    return lines


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


def deprecation_messages(calls: dict[str, Callable[[], object]]) -> dict[str, list[str]]:
    """Run each call with every warning recorded; return ``{name: [its FutureWarning messages, in order]}``.

    Each call runs inside its own ``warnings.catch_warnings(record=True)``
    with the ``"always"`` filter, so a message already shown elsewhere is
    recorded again. Warnings of other categories are not returned.
    """
    out: dict[str, list[str]] = {}
    for name, fn in calls.items():
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            fn()
        out[name] = [str(w.message) for w in caught if issubclass(w.category, FutureWarning)]
    return out


# --- Leaving Python: LibTorch (C++) loads a TorchScript file and an AOTInductor package --------------

#: A complete C++ program (LibTorch) that loads a TorchScript file with ``torch::jit::load`` and an
#: AOTInductor package with ``torch::inductor::AOTIModelPackageLoader``, runs both on the same
#: input, and prints one line per runtime: ``<runtime> ok <rows> <cols> v0 v1 ...`` or
#: ``<runtime> error <message>`` (newlines in the message written as ``|``). Usage: ``loader model.pt model.pt2 rows features``. The input
#: is ``sin(arange(rows * features)).reshape(rows, features)``, so Python can rebuild it exactly.
CPP_LOADER_SOURCE = r'''// Serve a model from C++: no Python interpreter in this process.
#include <torch/script.h>                                          // torch::jit::load (TorchScript)
#include <torch/csrc/inductor/aoti_package/model_package_loader.h> // AOTInductor packages
#include <cstdio>
#include <iostream>
#include <string>

static void print_result(const char* runtime, const torch::Tensor& y) {
  torch::Tensor c = y.contiguous().to(torch::kFloat32);
  std::printf("%s ok %lld %lld", runtime, (long long)c.size(0), (long long)c.size(1));
  const float* v = c.data_ptr<float>();
  for (int64_t i = 0; i < c.numel(); ++i) std::printf(" %.9g", v[i]);
  std::printf("\n");
}

static void print_error(const char* runtime, const std::exception& e) {
  std::string text = e.what();
  for (char& ch : text) if (ch == '\n') ch = '|';   // one line per runtime; Python splits it again
  std::printf("%s error %s\n", runtime, text.c_str());
}

int main(int argc, char** argv) {
  if (argc != 5) {
    std::cerr << "usage: loader model.pt model.pt2 rows features\n";
    return 2;
  }
  const int64_t rows = std::stoll(argv[3]), features = std::stoll(argv[4]);
  torch::NoGradGuard no_grad;
  torch::Tensor x = torch::arange(rows * features, torch::kFloat32).sin().reshape({rows, features});
  try {
    torch::jit::script::Module module = torch::jit::load(argv[1]);   // the TorchScript path
    print_result("torchscript", module.forward({x}).toTensor());
  } catch (const std::exception& e) {
    print_error("torchscript", e);
  }
  try {
    torch::inductor::AOTIModelPackageLoader loader(argv[2]);        // the AOTInductor path
    print_result("aoti", loader.run({x})[0]);
  } catch (const std::exception& e) {
    print_error("aoti", e);
  }
  return 0;
}
'''


@dataclass
class Toolchain:
    """A C++ compiler and the LibTorch headers and libraries that ship inside the torch wheel."""

    compiler: str | None       #: path of the C++ compiler (``$CXX``, else ``c++``/``g++``/``clang++``), or None
    include_dirs: list[str]    #: header folders (``torch/include`` and its ``torch/csrc/api/include``)
    library_dir: str           #: ``torch/lib`` (``libtorch.so``, ``libtorch_cpu.so``, ``libc10.so``)
    missing: str               #: why a LibTorch program cannot be built here ("" when it can)

    @property
    def usable(self) -> bool:
        """True when a compiler and every needed header and library were found."""
        return not self.missing


def libtorch_toolchain() -> Toolchain:
    """Find a C++ compiler and the LibTorch headers/libraries of the installed torch; return a :class:`Toolchain`.

    Nothing is downloaded: the torch wheel already holds ``include/`` and
    ``lib/``. ``missing`` says what is absent (no compiler, a CPU-only
    wheel without headers, ...).
    """
    import shutil

    root = Path(torch.__file__).resolve().parent
    include = [str(root / "include"), str(root / "include" / "torch" / "csrc" / "api" / "include")]
    libdir = str(root / "lib")
    compiler = None
    for candidate in [os.environ.get("CXX"), "c++", "g++", "clang++"]:
        if candidate and shutil.which(candidate):
            compiler = shutil.which(candidate)
            break
    missing = []
    if compiler is None:
        missing.append("no C++ compiler on PATH (set CXX or install g++)")
    for header in ("torch/script.h", "torch/csrc/inductor/aoti_package/model_package_loader.h"):
        if not (root / "include" / header).is_file():
            missing.append(f"header {header} is not in {root / 'include'}")
    for lib in ("libtorch.so", "libtorch_cpu.so", "libc10.so"):
        if not (root / "lib" / lib).is_file():
            missing.append(f"{lib} is not in {libdir}")
    return Toolchain(compiler=compiler, include_dirs=include, library_dir=libdir, missing="; ".join(missing))


def cpp_command(source: str | os.PathLike, binary: str | os.PathLike, toolchain: Toolchain) -> list[str]:
    """Return the compiler command line that builds ``source`` into ``binary`` against LibTorch.

    C++20 (LibTorch's headers require it), ``-O1``, the wheel's include
    folders, and ``-ltorch -ltorch_cpu -lc10`` with an rpath to ``torch/lib``
    so the program finds the libraries without ``LD_LIBRARY_PATH``.
    """
    if toolchain.compiler is None:
        raise RuntimeError(toolchain.missing or "no C++ compiler")
    cmd = [toolchain.compiler, "-std=c++20", "-O1", str(source), "-o", str(binary)]
    cmd += [f"-I{d}" for d in toolchain.include_dirs]
    cmd += [f"-L{toolchain.library_dir}", "-ltorch", "-ltorch_cpu", "-lc10", f"-Wl,-rpath,{toolchain.library_dir}"]
    return cmd


@dataclass
class CppBuild:
    """A LibTorch build running in the background (see :func:`start_cpp_build`)."""

    process: subprocess.Popen  #: the compiler process
    binary: Path               #: where the program will be
    log: Path                  #: the compiler's output (stdout and stderr)
    started: float             #: ``time.perf_counter()`` when the compiler started
    finished: float | None = None  #: ``time.perf_counter()`` when the compiler exited (set by a watcher thread)

    def __post_init__(self) -> None:
        import threading

        # The clock stops when the compiler exits, whenever wait() is called: a wait() that comes after
        # other work (an AOTInductor compile, say) must not count that work as build time.
        def watch() -> None:
            self.process.wait()
            self.finished = time.perf_counter()

        self._watcher = threading.Thread(target=watch, daemon=True)
        self._watcher.start()

    @property
    def seconds(self) -> float | None:
        """The build's own wall time in seconds (compiler start to exit), or None while it still runs."""
        return None if self.finished is None else self.finished - self.started

    def wait(self, timeout: float = 900.0) -> float:
        """Wait for the compiler; return the build's own wall time in seconds (start to the compiler's exit).

        The time does not include any wait between the compiler's exit and
        this call. Raises ``RuntimeError`` with the compiler's last output
        lines if the build failed.
        """
        self.process.wait(timeout=timeout)
        self._watcher.join(timeout=5.0)
        if self.finished is None:  # the watcher cannot lag behind wait() by more than a moment
            self.finished = time.perf_counter()
        if self.process.returncode != 0:
            raise RuntimeError(f"the C++ build failed ({self.process.returncode}):\n"
                               f"{self.log.read_text(errors='replace')[-3000:]}")
        return self.finished - self.started


def start_cpp_build(source_text: str, binary: str | os.PathLike, toolchain: Toolchain | None = None) -> CppBuild:
    """Write ``source_text`` next to ``binary`` (``.cpp``) and start compiling it against LibTorch; return a :class:`CppBuild`.

    The compiler runs in the background (its output goes to ``<binary>.log``),
    so other work can go on meanwhile; call ``.wait()`` for the result.
    Raises ``RuntimeError`` if the toolchain is unusable.
    """
    toolchain = toolchain or libtorch_toolchain()
    if not toolchain.usable:
        raise RuntimeError(f"cannot build a LibTorch program here: {toolchain.missing}")
    binary = Path(binary)
    source = binary.with_suffix(".cpp")
    source.write_text(source_text)
    log = binary.with_suffix(".log")
    with open(log, "wb") as fh:
        started = time.perf_counter()
        process = subprocess.Popen(cpp_command(source, binary, toolchain), stdout=fh, stderr=subprocess.STDOUT)
    return CppBuild(process=process, binary=binary, log=log, started=started)


def build_cpp(source_text: str, binary: str | os.PathLike, toolchain: Toolchain | None = None,
              timeout: float = 900.0) -> float:
    """Write ``source_text`` next to ``binary`` (``.cpp``), compile and link it against LibTorch; return seconds.

    Raises ``RuntimeError`` with the compiler's last output lines if the
    toolchain is unusable or the build fails.
    """
    return start_cpp_build(source_text, binary, toolchain).wait(timeout=timeout)


def run_program(args: list[str], extra_env: dict[str, str] | None = None, timeout: float = 120.0
                ) -> tuple[str, float]:
    """Run a program with an almost empty environment; return (its stdout, wall seconds).

    The environment holds only ``PATH=/usr/bin:/bin`` plus ``extra_env``: no
    ``PYTHONPATH``, no virtual environment, no ``LD_LIBRARY_PATH``. Raises
    ``RuntimeError`` with its stderr if it exits with an error.
    """
    env = {"PATH": "/usr/bin:/bin", **(extra_env or {})}
    t0 = time.perf_counter()
    proc = subprocess.run([str(a) for a in args], capture_output=True, text=True, env=env, timeout=timeout)
    seconds = time.perf_counter() - t0
    if proc.returncode != 0:
        raise RuntimeError(f"{Path(str(args[0])).name} failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    return proc.stdout, seconds


def parse_loader_output(text: str) -> dict[str, torch.Tensor | str]:
    """Parse :data:`CPP_LOADER_SOURCE`'s output; return ``{runtime: output tensor}`` or ``{runtime: error text}``."""
    out: dict[str, torch.Tensor | str] = {}
    for line in text.splitlines():
        parts = line.split(" ", 2)
        if len(parts) < 2:
            continue
        runtime, status = parts[0], parts[1]
        if status == "ok":
            fields = parts[2].split()
            rows, cols = int(fields[0]), int(fields[1])
            out[runtime] = torch.tensor([float(v) for v in fields[2:]], dtype=torch.float32).reshape(rows, cols)
        elif status == "error":
            out[runtime] = parts[2].replace("|", "\n") if len(parts) > 2 else ""
    return out


def loader_input(rows: int, features: int) -> torch.Tensor:
    """Return the input :data:`CPP_LOADER_SOURCE` builds: ``sin(arange(rows * features))`` as a (rows, features) float32 tensor."""
    return torch.arange(rows * features, dtype=torch.float32).sin().reshape(rows, features)


def linked_libraries(binary: str | os.PathLike) -> list[str]:
    """Return the names of the shared libraries ``binary`` loads (from ``ldd``); empty if ``ldd`` is unavailable."""
    import shutil

    ldd = shutil.which("ldd")
    if ldd is None:
        return []
    proc = subprocess.run([ldd, str(binary)], capture_output=True, text=True)
    names = []
    for line in proc.stdout.splitlines():
        name = line.strip().split(" ", 1)[0]
        if name:
            names.append(Path(name).name)
    return names


def aoti_package(program: torch.export.ExportedProgram, path: str | os.PathLike) -> float:
    """Compile ``program`` ahead of time with AOTInductor into the package ``path`` (``.pt2``); return seconds.

    Uses one compile thread: Inductor otherwise starts a pool of compile
    worker processes, which is not worth it for a tiny model and keeps
    processes around after the cell. The package holds a compiled shared
    library plus the weights; :func:`torch._inductor.aoti_load_package`
    (Python) or ``AOTIModelPackageLoader`` (C++) runs it.
    """
    import torch._inductor
    import torch._inductor.config as inductor_config

    t0 = time.perf_counter()
    with inductor_config.patch(compile_threads=1):
        torch._inductor.aoti_compile_and_package(program, package_path=str(path))
    return time.perf_counter() - t0


def error_line(text: str) -> str:
    """Return the line of an error message that names the error (``SomethingError: ...``), else its first line."""
    lines = [line.strip() for line in str(text).splitlines() if line.strip()]
    named = [line for line in lines if re.match(r"^[A-Za-z_.]*(Error|Exception): ", line)]
    if named:
        return named[-1]
    return lines[0] if lines else ""


# --- What a program holds: shared weights, graph census, draft-export reports, bytes read ------------

def shared_tensors(program: torch.export.ExportedProgram, model: torch.nn.Module) -> list[str]:
    """Names of ``program.state_dict`` entries that share memory with one of ``model``'s parameters or buffers.

    ``torch.export`` lifts parameters and buffers into the program's
    ``state_dict`` *by reference*: an entry listed here is the caller's own
    tensor, so an in-place update of the model (an optimizer step,
    ``load_state_dict``, ``.double()``) changes what the program computes.
    A program exported from a deep copy, or loaded from a file, lists none.
    """
    live = {t.untyped_storage().data_ptr() for t in list(model.parameters()) + list(model.buffers())
            if t.numel() > 0}
    return [name for name, t in program.state_dict.items()
            if isinstance(t, torch.Tensor) and t.numel() > 0 and t.untyped_storage().data_ptr() in live]


def graph_census(module: torch.jit.ScriptModule, kinds: tuple[str, ...] = (
        "prim::GetAttr", "aten::batch_norm", "aten::conv2d", "aten::_convolution", "aten::linear",
        "prim::If", "prim::Constant")) -> dict[str, int]:
    """Count nodes of each kind in a TorchScript module's inlined ``forward`` graph; return ``{kind: count, "total": n}``.

    What freezing changes shows here: attribute reads (``prim::GetAttr``)
    become constants, ``batch_norm`` after a convolution is folded into it,
    and the ``self.training`` branches (``prim::If``) disappear.
    """
    nodes = list(module.inlined_graph.nodes())
    out = {k: 0 for k in kinds}
    for n in nodes:
        if n.kind() in out:
            out[n.kind()] += 1
    out["total"] = len(nodes)
    return out


def draft_failures(program: torch.export.ExportedProgram) -> list[dict[str, object]]:
    """The failures that ``torch.export.draft_export`` recorded; one dict per failure.

    Each dict has ``type`` (e.g. ``"GUARD_ADDED"``, ``"DATA_DEPENDENT_ERROR"``),
    ``expr`` (the guard or expression), and the innermost *user* frame:
    ``file``, ``line`` and ``code`` (``None`` when torch recorded no user
    frame). Read from ``program._report`` directly, because on torch 2.14
    ``str(report)`` raises ``IndexError`` when a failure has an empty user
    stack. An empty list means draft export found nothing to report.
    """
    report = getattr(program, "_report", None)
    if report is None:
        return []
    names = dict(getattr(report, "str_to_filename", {}) or {})
    try:  # the report maps only the files first seen by this export; the process-wide table has the rest
        from torch._logging.structured import INTERN_TABLE
        for text, number in INTERN_TABLE.items():
            names.setdefault(number, text)
    except ImportError:  # pragma: no cover - a torch without the table
        pass
    out = []
    for failure in report.failures:
        data = getattr(failure, "data", {}) or {}
        stack = data.get("user_stack") or []
        frame = stack[-1] if stack else {}
        filename = frame.get("filename")
        out.append({"type": getattr(failure.failure_type, "name", str(failure.failure_type)),
                    "expr": str(data.get("expr", data.get("reason", ""))),
                    "file": names.get(filename, filename) if frame else None,
                    "line": frame.get("line"), "code": frame.get("loc")})
    return out


def graph_tensor_bytes(module: torch.fx.GraphModule) -> dict[str, int]:
    """Bytes of the tensors an FX graph module *reads* (``get_attr`` nodes), by dtype, plus ``"total"``.

    After PT2E quantization the module still carries the original float
    weights as attributes although its graph no longer reads them: counting
    ``state_dict()`` would include them. This counts only what the graph uses.
    """
    out: dict[str, int] = {}
    seen: set[str] = set()
    for node in module.graph.nodes:
        if node.op != "get_attr" or node.target in seen:
            continue
        seen.add(node.target)
        obj = module
        for part in str(node.target).split("."):
            obj = getattr(obj, part)
        if isinstance(obj, torch.Tensor):
            key = str(obj.dtype).replace("torch.", "")
            out[key] = out.get(key, 0) + obj.numel() * obj.element_size()
    out["total"] = sum(out.values())
    return out
