"""``make bench``: measure what the test suite only guards with tripwires.

1. **Chapters.** For each chapter: student mode (the student's notebook with
   correct answers, top to bottom in a fresh kernel, as a student runs it)
   and grading mode (one submission through the judge: the sandboxed run of
   the submission plus the reference run), against the budgets (120 s and
   60 s on 2 cores).
2. **Class grading.** A class of at least 16 submissions over two chapters
   (reference solutions, the untouched release, mutants, alternatives,
   attacks, damaged notebooks) is graded three ways in one run: stock
   sequential ``nbgrader autograde`` (in-kernel, ``COURSE_GRADING=stock``),
   ``grade-class --jobs 1`` and ``grade-class --jobs 2`` (judge and sandbox).
   It prints the throughput ratio against stock, the judge's per-submission
   overhead over a bare nbclient execution of the same notebook (targets:
   >= 3x stock on 2 cores; overhead <= 1.5x), where a submission's time goes
   (the sandboxed run's phases, and how many demonstration cells the grader
   did not run, see course/grading/run/needed.py), and whether stock in-kernel
   nbgrader and the judge give the same score to every grade cell of the
   honest work (solutions, mutants, alternatives): the parity check that the
   test suite ran before, moved here to keep the suite fast.
3. **Kernel start** (``benchmarks/kernel_start.py``): a sandboxed kernel's
   start to its first cell with torch imported, as grading starts one, and
   forked from a process that imported torch once into the same kind of
   sandbox (not used by grading: the lever for the test suite's time).

Results are printed and saved to ``.bench/latest.json`` (git-ignored).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from course.grading.authoring import demo, notebooks, trial
from course.grading.nbgrader import wrapper as nbgrader_io
from course.grading.judge import references  # noqa: E402
from course.grading.run.worker import run_submission  # noqa: E402
from nbgrader.utils import is_grade  # noqa: E402

STUDENT_BUDGET, GRADING_BUDGET = 120.0, 60.0


def bare_execute(nb_path: Path, env_extra: dict[str, str]) -> float:
    """Seconds to execute a notebook with nbclient in its folder, nothing else (the overhead baseline)."""
    from nbclient import NotebookClient

    from course.grading.run.worker import strip_hidden_tests
    nb = notebooks.read(nb_path)
    for c in nb.cells:
        if c.cell_type == "code" and is_grade(c):
            c.source = strip_hidden_tests(c.source)
    old = dict(os.environ)
    env = nbgrader_io.env(env_extra)
    os.environ.clear()
    os.environ.update(env)
    try:
        t0 = time.perf_counter()
        NotebookClient(nb, timeout=600, kernel_name="python3", allow_errors=True,
                       resources={"metadata": {"path": str(nb_path.parent)}}).execute()
        return time.perf_counter() - t0
    finally:
        os.environ.clear()
        os.environ.update(old)


def bench_chapters(chapters: list[str], seed: int) -> list[dict]:
    rows = []
    for ch in chapters:
        student, executed = notebooks.execute(notebooks.notebook_path(ch), grading=False, timeout=900)
        from course.grading.judge.verdicts import load
        judge = load(ch, REPO)
        t0 = time.perf_counter()
        references._CACHE.clear()
        references.compute(ch, REPO, seed, judge=judge)
        ref_seconds = time.perf_counter() - t0
        nb = references.reference_notebook(ch, REPO)
        t0 = time.perf_counter()
        files = references._stage_files(REPO / "source" / ch)  # the chapter's files, without judge.py
        result = run_submission(nb, ch, "bench", judge.codes(), seed, files=files, course_root=REPO)
        sub_seconds = time.perf_counter() - t0
        graded = ref_seconds + sub_seconds
        rows.append({"chapter": ch, "student_s": round(student, 1), "graded_s": round(graded, 1),
                     "submission_s": round(sub_seconds, 1), "reference_s": round(ref_seconds, 1),
                     "probe_failures": sum(1 for r in result.results.values() if not r.get("ok"))})
        print(f"{ch:<24} student {student:6.1f} s (budget {STUDENT_BUDGET:g})   graded {graded:6.1f} s "
              f"= submission {sub_seconds:5.1f} + reference {ref_seconds:5.1f} (budget {GRADING_BUDGET:g})"
              f"{'   OVER BUDGET' if student > STUDENT_BUDGET or graded > GRADING_BUDGET else ''}", flush=True)
        print(f"{'':<24} slowest cells in student mode: {notebooks.slowest_cells(executed)}", flush=True)
    return rows


def build_class(work: Path, chapters: list[str]) -> tuple[Path, int]:
    course = trial.make_course(work / "course", chapters, REPO)  # with each chapter's exercises and known answers
    n = 0
    for ch in chapters:
        rel = trial.generate(course, ch, course / "gradebook.db")
        subs = [s for s in trial.plan(ch, course, tamper=False, attacks=True)
                if not s.student.startswith("attack-") or s.student in ("attack-blank-later-cells",
                                                                         "attack-swallow-exceptions")]
        trial.write_submissions(course, ch, subs, rel)
        damaged = demo.write_damaged(course, ch, rel)
        keep = {"damaged-invalid-json", "damaged-renamed", "damaged-stripped-metadata"}
        import shutil
        for student in damaged:
            if student not in keep:
                shutil.rmtree(course / "submitted" / student / ch)
        n += len(subs) + len(keep)
    for d in (course / "submitted").iterdir():
        if not any(d.iterdir()):
            d.rmdir()
    return course, n


def bench_class(chapters: list[str], seed: int) -> dict:
    import shutil
    env = nbgrader_io.env({"COURSE_JUDGE_SEED": str(seed)})
    out: dict = {"chapters": chapters}
    base = Path(tempfile.mkdtemp(prefix="bench-class-"))
    course, n = build_class(base / "a", chapters)
    out["submissions"] = n
    print(f"class: {n} submissions over {', '.join(chapters)}", flush=True)
    # Stock sequential nbgrader, in-kernel.
    t0 = time.perf_counter()
    codes = []
    for ch in chapters:
        codes.append(subprocess.run([str(Path(sys.executable).parent / "nbgrader"), "autograde", ch, "--force"],
                                    cwd=course, env=dict(env, COURSE_GRADING="stock"), capture_output=True,
                                    text=True).returncode)
    out["stock_s"] = time.perf_counter() - t0
    # Stock nbgrader skips (and reports) the notebooks it cannot read; count what it really graded.
    out["stock_graded"] = sum(1 for ch in chapters for _ in (course / "autograded").glob(f"*/{ch}/*.ipynb"))
    stock_scores = {ch: trial.read_scores(course / "gradebook.db", ch, ch) for ch in chapters}
    print(f"  stock nbgrader autograde (sequential, in-kernel): {out['stock_s']:.1f} s, graded "
          f"{out['stock_graded']} of {n} (exit codes {codes})", flush=True)
    for jobs in (1, 2):
        shutil.rmtree(course / ".judge", ignore_errors=True)
        shutil.rmtree(course / "autograded", ignore_errors=True)
        t0 = time.perf_counter()
        proc = subprocess.run([sys.executable, "-m", "course.grading", "grade-class", *chapters, "--jobs", str(jobs),
                               "--force", "--no-progress", "--seed", str(seed)], cwd=course, env=env,
                              capture_output=True, text=True)
        out[f"jobs{jobs}_s"] = time.perf_counter() - t0
        if proc.returncode != 0:
            print(proc.stdout[-3000:], proc.stderr[-3000:])
        print(f"  grade-class --jobs {jobs} (judge + sandbox): {out[f'jobs{jobs}_s']:.1f} s", flush=True)
        for line in proc.stdout.splitlines():
            if line.lstrip().startswith("staging "):
                print(f"    its pipeline: {line.strip()[:300]}")
    out["where"] = where_time_goes(course, chapters)
    # Parity on honest work: stock in-kernel nbgrader and the judge, cell by cell.
    differ = []
    for ch in chapters:
        judged = trial.read_scores(course / "gradebook.db", ch, ch)
        for student, cells in stock_scores[ch].items():
            if not student.startswith(("solution", "mutants", "alternatives")):
                continue
            for cell, (score, _) in cells.items():
                js = judged.get(student, {}).get(cell, (None,))[0]
                if js != score:
                    differ.append(f"{ch} {student} {cell}: stock {score:g}, judge {js}")
    out["parity_differences"] = differ
    print(f"  stock nbgrader and the judge on honest work: {'the same score on every grade cell' if not differ else f'{len(differ)} differences'}")
    for line in differ[:20]:
        print("   ", line)
    # Overhead: the judge's per-submission run against a bare nbclient execution of the same notebook.
    worker, bare = [], []
    for ch in chapters:
        reports = json.loads(json.dumps({p.stem: json.loads(p.read_text())
                                         for p in (course / ".judge" / "reports" / ch).glob("*.json")}))
        for student in ("solution", "mutants-1", "alternatives-1"):
            nb_path = course / "submitted" / student / ch / f"{ch}.ipynb"
            if student in reports and nb_path.exists():
                scratch = Path(tempfile.mkdtemp(prefix="bench-bare-"))
                shutil.copy(nb_path, scratch / nb_path.name)
                bare.append(bare_execute(scratch / nb_path.name, {"NBGRADER_EXECUTION": "autograde"}))
                worker.append(reports[student]["seconds"])
    out["worker_mean_s"] = statistics.mean(worker)
    out["bare_mean_s"] = statistics.mean(bare)
    out["overhead"] = out["worker_mean_s"] / out["bare_mean_s"]
    out["throughput_vs_stock"] = out["stock_s"] / out["jobs2_s"]
    print(f"  throughput of grade-class --jobs 2 against stock: {out['throughput_vs_stock']:.2f}x (target >= 3x)")
    print(f"  per submission: judge worker {out['worker_mean_s']:.1f} s, bare nbclient {out['bare_mean_s']:.1f} s: "
          f"overhead {out['overhead']:.2f}x (target <= 1.5x)")
    shutil.rmtree(base, ignore_errors=True)
    return out


def where_time_goes(course: Path, chapters: list[str]) -> dict:
    """Where a submission's time goes, from the judge's reports of the last grade-class run: each phase of the
    sandboxed run (worker.py's ``phases``), summed over the class, with its share and its mean per submission."""
    totals: dict[str, float] = {}
    per: dict[str, list[float]] = {}
    skipped: list[int] = []
    n = 0
    for ch in chapters:
        for p in sorted((course / ".judge" / "reports" / ch).glob("*.json")):
            report = json.loads(p.read_text())
            phases = report.get("phases") or {}
            if not phases:
                continue
            n += 1
            skipped.append(len(report.get("skipped") or []))
            for k, v in phases.items():
                totals[k] = totals.get(k, 0.0) + v
                per.setdefault(k, []).append(v)
    whole = sum(totals.values()) or 1.0
    print(f"  where a submission's time goes ({n} sandboxed runs, {whole:.1f} s in all):")
    for k, v in sorted(totals.items(), key=lambda kv: -kv[1]):
        spread = f" +- {statistics.stdev(per[k]):.2f}" if len(per[k]) > 1 else ""
        print(f"    {k:<20} {v:7.1f} s  {100 * v / whole:5.1f}%   mean {statistics.mean(per[k]):5.2f}{spread} s")
    if skipped:
        print(f"    demonstration cells not run by the grader: mean {statistics.mean(skipped):.1f} per submission "
              f"(min {min(skipped)}, max {max(skipped)})")
    return {"runs": n, "seconds": totals, "skipped_cells": skipped}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="make bench", description=__doc__.split("\n")[0])
    p.add_argument("--chapters", nargs="*", default=None, help="chapters to time (default: all)")
    p.add_argument("--class-chapters", nargs="*", default=["01_dynamic_graphs", "02_autograd"])
    p.add_argument("--skip-chapters", action="store_true")
    p.add_argument("--skip-class", action="store_true")
    p.add_argument("--skip-kernel-start", action="store_true")
    p.add_argument("--seed", type=int, default=20261202)
    args = p.parse_args(argv)
    results: dict = {"cores": os.cpu_count(), "when": time.strftime("%Y-%m-%d %H:%M:%S")}
    if not args.skip_chapters:
        results["chapters"] = bench_chapters(args.chapters or notebooks.chapters(REPO), args.seed)
    if not args.skip_class:
        results["class"] = bench_class(args.class_chapters, args.seed)
    if not args.skip_kernel_start:
        import kernel_start
        print("\n== kernel start: cold, and forked from a process that imported torch (benchmarks/kernel_start.py)")
        results["kernel_start"] = kernel_start.main([])
    d = REPO / ".bench"
    d.mkdir(exist_ok=True)
    (d / "latest.json").write_text(json.dumps(results, indent=1))
    print(f"saved {d / 'latest.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
