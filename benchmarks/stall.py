"""Run one chapter N times back to back, in student and grading mode, and look for stalls.

    python benchmarks/stall.py 03_torchscript --runs 20

Each run executes the source notebook in a fresh kernel (``course.grading.authoring.notebooks.execute``,
as the chapter tests do). From each cell's execution timestamps it records how long the cell
ran and the gap before it started. A *stall* is a cell, or a gap between cells, over
``--stall-seconds`` (60 by default): the symptom Chapter 3's first edition showed (about 300 s
after the widget cell). It prints the run-time quartiles per mode and every stall, and exits 1
if a run failed or stalled. Results go to ``.bench/stall-<chapter>.json``.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from course.grading.authoring import notebooks  # noqa: E402


def run(chapter: str, grading: bool, n: int, stall_seconds: float) -> dict:
    path = notebooks.notebook_path(chapter)
    runs = []
    for i in range(n):
        t0 = time.time()
        try:
            secs, nb = notebooks.execute(path, grading=grading, timeout=600)
            err, cells = None, notebooks.cell_times(nb)
        except Exception as e:  # noqa: BLE001 - recorded and reported
            secs, err, cells = time.time() - t0, f"{type(e).__name__}: {str(e)[:300]}", []
        stalls = [c for c in cells if max(c[1], c[2]) > stall_seconds]
        slowest = max((max(c[1], c[2]) for c in cells), default=0.0)
        runs.append({"i": i, "seconds": round(secs, 1), "error": err, "stalls": stalls, "slowest_cell": slowest})
        print(f"  {'grading' if grading else 'student'} run {i + 1}/{n}: {secs:6.1f} s, slowest cell or gap "
              f"{slowest:5.1f} s{'  STALL ' + str(stalls) if stalls else ''}{'  ERROR ' + err if err else ''}",
              flush=True)
    return {"mode": "grading" if grading else "student", "runs": runs}


def summarise(block: dict) -> str:
    secs = [r["seconds"] for r in block["runs"] if not r["error"]]
    q = statistics.quantiles(secs, n=4) if len(secs) > 1 else [secs[0]] * 3 if secs else [0, 0, 0]
    worst = max((r["slowest_cell"] for r in block["runs"]), default=0)
    stalls = sum(bool(r["stalls"]) for r in block["runs"])
    errors = sum(bool(r["error"]) for r in block["runs"])
    return (f"{block['mode']:>7}: {len(block['runs'])} runs, {errors} failed, {stalls} stalled; run time "
            f"min {min(secs, default=0):.1f} / median {statistics.median(secs) if secs else 0:.1f} / "
            f"max {max(secs, default=0):.1f} s (quartiles {q[0]:.1f}-{q[2]:.1f}); slowest cell or gap {worst:.1f} s")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("chapter")
    p.add_argument("--runs", type=int, default=20)
    p.add_argument("--mode", choices=["both", "student", "grading"], default="both")
    p.add_argument("--stall-seconds", type=float, default=60.0)
    args = p.parse_args(argv)
    modes = {"both": [False, True], "student": [False], "grading": [True]}[args.mode]
    blocks = [run(args.chapter, g, args.runs, args.stall_seconds) for g in modes]
    print(f"\n{args.chapter}, {args.runs} back-to-back runs per mode (stall = a cell or gap > {args.stall_seconds:g} s):")
    for b in blocks:
        print("  " + summarise(b))
    out = REPO / ".bench" / f"stall-{args.chapter}.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(blocks, indent=1))
    bad = any(r["error"] or r["stalls"] for b in blocks for r in b["runs"])
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
