"""The project's own GPU check: every chapter run as a student on this machine's torch, errors allowed.

    make gpu-check [CHAPTERS="01_dynamic_graphs 05b_distributed"] [GPU_PYTHON=/path/to/python]
    python tools/gpu_check.py [CHAPTER ...] [--out .bench/gpu-check] [--timeout 900]    (CHAPTER: 01 or 01_dynamic_graphs)

Each chapter's source notebook runs in a fresh kernel of its own, as a student's notebook with the reference
answers would (solutions in, hidden tests out: ``course.grading.authoring.notebooks.execute``, the runner of
``python -m course.grading run`` and benchmarks/stall.py), with ``allow_errors``: every cell runs even after one
fails. The kernel is the interpreter that runs this script (nbclient starts ``python3`` as ``sys.executable``), so
its torch is the one tested: nothing is installed or replaced. ``--requirements`` prints the course's pins without
torch's own packages, for an interpreter that keeps its torch (README, "For contributors").

A **CUDA cell** is a code cell after which CUDA is initialised in that kernel (``torch.cuda.is_initialized()``)
and which either initialised it or grew the caching allocator's cumulative count of CUDA allocations
(``torch.cuda.memory_stats()['allocation.all.allocated']``). An IPython startup file (a private ``IPYTHONDIR``)
records that around every cell; it never initialises CUDA itself, so a CPU-only run, or a chapter that stays on
the CPU, reports 0. Work done on a GPU by child processes (DDP ranks) is not counted.

It writes ``OUT/report.json`` (OUT: ``.bench/gpu-check/``, git-ignored) (every chapter, every code cell: index, seconds, error, CUDA) and ``OUT/report.md``
(a table per chapter), and prints one line per chapter ("01_dynamic_graphs: 0 failing cells, 3 CUDA cells,
41.2 s"). Exit status 1 when a cell failed or a kernel died.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

ERROR_CHARS = 200  # an error's first line, capped, in the report
TORCH_PACKAGES = ("torch", "torchvision", "torchaudio", "triton")

# Runs in the kernel before the first cell (IPYTHONDIR/profile_default/startup/). It reads torch only when the
# chapter has imported it, and asks CUDA nothing before the chapter initialised it.
STARTUP = '''\
def _course_gpu_check():
    import json, os, sys
    ip, log = get_ipython(), os.environ.get("COURSE_GPU_CHECK_LOG")
    if ip is None or not log:
        return
    state = {}

    def cuda_state():
        torch = sys.modules.get("torch")
        try:
            if torch is None or not torch.cuda.is_initialized():
                return False, 0
            return True, int(torch.cuda.memory_stats().get("allocation.all.allocated", 0))
        except Exception:
            return False, 0

    def pre(info):
        state["before"] = cuda_state()

    def post(result):
        (was, a0), (now, a1) = state.pop("before", (False, 0)), cuda_state()
        row = {"count": result.execution_count, "initialised": now, "cuda": bool(now and (not was or a1 > a0)),
               "allocations": a1 - a0}
        with open(log, "a") as f:
            f.write(json.dumps(row) + "\\n")

    ip.events.register("pre_run_cell", pre)
    ip.events.register("post_run_cell", post)


_course_gpu_check()
del _course_gpu_check
'''


def torch_info(python: str = sys.executable) -> dict:
    """The kernel interpreter's torch: version, CUDA build, whether a GPU is visible and its name (a child process,
    so this process never touches CUDA)."""
    code = ("import json, torch; a = torch.cuda.is_available(); print(json.dumps({'torch': torch.__version__, "
            "'cuda_build': torch.version.cuda, 'cuda_available': a, "
            "'device': torch.cuda.get_device_name(0) if a else None}))")
    proc = subprocess.run([python, "-c", code], capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        return {"torch": None, "error": proc.stderr.strip().splitlines()[-1:] or ["?"]}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def first_line(text: str, cap: int = ERROR_CHARS) -> str:
    """The first non-empty line of ``text``, at most ``cap`` characters (an ellipsis marks a cut)."""
    line = next((ln.strip() for ln in str(text).splitlines() if ln.strip()), "")
    return line if len(line) <= cap else line[: cap - 1] + "…"


def cell_error(cell) -> str | None:
    """'Name: message' (first line, capped) of a code cell's first error output, or None."""
    for out in cell.get("outputs", []):
        if out.get("output_type") == "error":
            return first_line(f"{out.get('ename', 'Error')}: {out.get('evalue', '')}")
    return None


def chapter_report(name: str, nb, seconds: float, cuda_rows: list[dict], kernel_error: str | None = None) -> dict:
    """The report of one executed (or partly executed) notebook: a row per code cell and the chapter's totals.

    Each cell row: ``cell`` (index among all cells, as nbclient and the tests count), ``seconds`` it ran,
    ``error`` (None when it passed), ``cuda`` (see the module docstring) and ``ran`` (False for a cell the kernel
    never reached).
    """
    from course.grading.authoring import notebooks

    times = {i: ran for i, ran, _gap in notebooks.cell_times(nb)}
    cuda_by_count = {r["count"]: r for r in cuda_rows if r.get("count") is not None}
    cells = []
    for i, c in enumerate(nb.cells):
        if c.cell_type != "code" or not c.source.strip():
            continue
        count = c.get("execution_count")
        ran = count is not None
        row = cuda_by_count.get(count, {}) if ran else {}
        cells.append({"cell": i, "ran": ran, "execution_count": count, "seconds": times.get(i, 0.0) if ran else None,
                      "error": cell_error(c) if ran else None, "cuda": bool(row.get("cuda", False)),
                      "cuda_allocations": int(row.get("allocations", 0))})
    failing = [c for c in cells if c["error"]]
    return {"chapter": name, "seconds": round(seconds, 1), "kernel_error": kernel_error,
            "failing_cells": len(failing), "cuda_cells": sum(c["cuda"] for c in cells),
            "not_run": sum(not c["ran"] for c in cells), "code_cells": len(cells),
            # cells the CUDA recorder saw: fewer than the cells that ran means its CUDA count cannot be trusted
            "recorded_cells": sum(c["ran"] and c.get("execution_count") in cuda_by_count for c in cells),
            "cells": cells}


def run_notebook(path: Path, name: str | None = None, timeout: int = 900) -> dict:
    """Execute ``path`` as a student with errors allowed, in a kernel with the CUDA recorder; return its report."""
    from course.grading.authoring import notebooks

    name = name or path.stem
    with tempfile.TemporaryDirectory(prefix="gpu-check-") as tmp:
        startup = Path(tmp, "ipython", "profile_default", "startup")
        startup.mkdir(parents=True)
        (startup / "00-course-gpu-check.py").write_text(STARTUP)
        log = Path(tmp, "cuda.jsonl")
        saved = {k: os.environ.get(k) for k in ("IPYTHONDIR", "COURSE_GPU_CHECK_LOG", "PYTHONPATH")}
        os.environ["IPYTHONDIR"] = str(Path(tmp, "ipython"))
        os.environ["COURSE_GPU_CHECK_LOG"] = str(log)
        # This clone's course/ first, whatever the interpreter has installed.
        os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), saved["PYTHONPATH"]) if p)
        t0, kernel_error = time.perf_counter(), None
        try:
            seconds, nb = notebooks.execute(path, grading=False, timeout=timeout, allow_errors=True)
        except Exception as exc:  # noqa: BLE001 - a dead kernel or a timeout: report what ran
            seconds, kernel_error = time.perf_counter() - t0, first_line(f"{type(exc).__name__}: {exc}")
            nb = getattr(exc, "partial_notebook", None)
            if nb is None:
                nb = notebooks.read(path)
        finally:
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
        rows = [json.loads(ln) for ln in log.read_text().splitlines() if ln.strip()] if log.exists() else []
    return chapter_report(name, nb, seconds, rows, kernel_error)


def summary_line(ch: dict) -> str:
    """'01_dynamic_graphs: 0 failing cells, 3 CUDA cells, 41.2 s' (and the kernel's fate when it died)."""
    line = f"{ch['chapter']}: {ch['failing_cells']} failing cells, {ch['cuda_cells']} CUDA cells, {ch['seconds']:.1f} s"
    ran = ch["code_cells"] - ch["not_run"]
    if ch.get("recorded_cells", ran) < ran:
        line += f" (the CUDA recorder saw only {ch['recorded_cells']} of {ran} cells)"
    if ch["kernel_error"]:
        line += f"; kernel stopped ({ch['kernel_error']}), {ch['not_run']} cells never ran"
    return line


def markdown(report: dict) -> str:
    """The report as markdown: the machine, a summary table, then per chapter its failing and CUDA cells and a
    table of every code cell."""
    info = report["torch"]
    out = [f"# GPU check ({report['date']})", "",
           f"torch {info.get('torch')}, CUDA build {info.get('cuda_build')}, CUDA available: "
           f"{info.get('cuda_available')}{', ' + info['device'] if info.get('device') else ''}; "
           f"Python {report['python']}", "",
           "| chapter | failing cells | CUDA cells | cells never run | seconds |", "|---|---|---|---|---|"]
    for ch in report["chapters"]:
        out.append(f"| {ch['chapter']} | {ch['failing_cells']} | {ch['cuda_cells']} | {ch['not_run']} | "
                   f"{ch['seconds']:.1f} |")
    for ch in report["chapters"]:
        out += ["", f"## {ch['chapter']}", "", summary_line(ch), ""]
        if ch["kernel_error"]:
            out += [f"Kernel: {ch['kernel_error']}", ""]
        out += ["| cell | seconds | CUDA | error |", "|---|---|---|---|"]
        for c in ch["cells"]:
            secs = "never ran" if not c["ran"] else f"{c['seconds']:.2f}"
            err = (c["error"] or "").replace("|", "\\|")
            out.append(f"| {c['cell']} | {secs} | {'yes' if c['cuda'] else ''} | {err} |")
    return "\n".join(out) + "\n"


def write(report: dict, out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / "report.json").write_text(json.dumps(report, indent=1))
    (out / "report.md").write_text(markdown(report))


def requirements() -> list[str]:
    """The course's pinned requirements (pyproject's dependencies and the test extra) without torch's own
    packages: what an interpreter that keeps its own torch installs to run this check."""
    import tomllib

    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    reqs = list(project["dependencies"]) + list(project.get("optional-dependencies", {}).get("test", []))
    name = lambda r: r.split(";")[0].split("[")[0].split("=")[0].split("<")[0].split(">")[0].strip().lower()  # noqa: E731
    return [r for r in reqs if name(r) not in TORCH_PACKAGES]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("chapters", nargs="*", help="default: every chapter")
    p.add_argument("--out", type=Path, default=REPO / ".bench" / "gpu-check")
    p.add_argument("--timeout", type=int, default=900, help="seconds one cell may run")
    p.add_argument("--requirements", action="store_true",
                   help="print the course's pins without torch's packages (for pip install -r) and exit")
    args = p.parse_args(argv)
    if args.requirements:
        print("\n".join(requirements()))
        return 0
    from course.grading.authoring import notebooks  # nbgrader and nbformat: not needed for --requirements

    info = torch_info()
    print(f"torch {info.get('torch')} (CUDA available: {info.get('cuda_available')}"
          f"{', ' + info['device'] if info.get('device') else ''}) from {sys.executable}", flush=True)
    report = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "python": sys.executable,
              "torch": info, "chapters": []}
    names = notebooks.chapters()
    for name in [next((n for n in names if n == c or n.startswith(c + "_")), c) for c in args.chapters] or names:
        ch = run_notebook(notebooks.notebook_path(name), name, timeout=args.timeout)
        report["chapters"].append(ch)
        write(report, args.out)  # after every chapter, so a long run can be read as it goes
        print(summary_line(ch), flush=True)
    print(f"report: {args.out / 'report.md'}, {args.out / 'report.json'}")
    return 1 if any(ch["failing_cells"] or ch["kernel_error"] for ch in report["chapters"]) else 0


if __name__ == "__main__":
    raise SystemExit(main())
