"""Grade a whole class: ``python -m course.grading grade-class CHAPTER... [--jobs N] [--force]`` (``make grade-class``).

Four phases, per chapter:

1. **Stage** every ``submitted/<student>/<chapter>/`` into ``.judge/staged/``
   through :mod:`course.grading.repair` (renamed notebooks, deleted,
   duplicated, re-typed or moved cells, stripped metadata, invalid JSON, huge
   outputs). The student's submitted file is never modified.
2. **Run** the staged submissions in parallel (``--jobs``, default: the number
   of cores), each in its own sandbox (:mod:`course.grading.worker`), with a
   progress bar. Each run is saved under ``.judge/runs/<chapter>/<student>/``:
   the executed notebook and the probes' raw results, which are read back
   later only with ``torch.load(weights_only=True)``. A submission whose staged
   notebook, hidden tests, seed and course helpers are unchanged since its
   last graded run is skipped (``--force`` regrades it).
3. **Record**: one ``nbgrader autograde`` for the chapter, over the staged
   folder, with the judge's preprocessors reading those saved runs. This is
   the only writer of the gradebook (so parallel runs cannot corrupt it), and
   it also writes ``autograded/`` as usual.
4. **Report**: a per-student table (score per chapter, flags: tampering
   suspected, timed out, crashed, damaged, repaired, sandbox degraded), and
   with ``--feedback`` a file per student, ``feedback/<student>/<chapter>/grader.md``,
   with the judge's message per test (the hidden tests' code only with
   ``--show-tests``).

Beyond one machine, the worker phase maps onto an existing executor: each
task is a pure function of (staged folder, chapter, seed) that writes one
run folder, so Dask distributed (``client.map``) or one Kubernetes Job per
chunk of students can run it; the record phase stays a single writer, or the
gradebook moves to PostgreSQL (``--db postgresql://...``).
"""
from __future__ import annotations

import argparse
import concurrent.futures as cf
import hashlib
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import nbformat

from course.grading import references, repair
from course.grading.judge import load
from course.grading.sandbox import GiB, Limits, detect
from course.grading.wire import loads
from course.grading.worker import WorkerResult, nb_meta, run_submission, strip_hidden_tests


def notebook_key(nb) -> str:
    """A hash of what is executed: every cell's type and source (hidden regions removed) and grade_id."""
    h = hashlib.sha256()
    for c in nb.cells:
        src = strip_hidden_tests(c.source) if nb_meta(c).get("grade") else c.source
        h.update(f"{c.cell_type}\0{nb_meta(c).get('grade_id', '')}\0{src}\0".encode())
    return h.hexdigest()[:24]


def sanitize(nb, chapter: str, notebook: str, db_url: str):
    """What nbgrader does to a submission before executing it (outputs cleared, locked and test cells restored)."""
    from nbgrader.preprocessors import (CheckCellMetadata, ClearOutput, DeduplicateIds, OverwriteCells,
                                        OverwriteKernelspec)
    resources = {"nbgrader": {"db_url": db_url, "assignment": chapter, "notebook": notebook}}
    for pp in (ClearOutput, DeduplicateIds, OverwriteKernelspec, OverwriteCells, CheckCellMetadata):
        nb, resources = pp().preprocess(nb, resources)
    return nb


def run_dir(root: Path, chapter: str, student: str) -> Path:
    return references.judge_dir(root) / "runs" / chapter / student


def save_run(folder: Path, result: WorkerResult, key: str, input_key: str, seed: int) -> None:
    """Save a worker's result: the executed notebook as JSON, each probe's raw bytes as written in the sandbox."""
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    records = {}
    for i, (test, rec) in enumerate(result.results.items()):
        raw = result.raw.get(test)
        if raw is not None:
            (folder / f"probe-{i}.pt").write_bytes(raw)
            records[test] = {"file": f"probe-{i}.pt"}
        else:
            records[test] = {k: v for k, v in rec.items() if k in ("ok", "error", "where")}
    meta = {"key": key, "input_key": input_key, "seed": seed, "records": records, "kernel_status": result.kernel_status,
            "flags": result.flags, "events": result.events, "decoy_hits": result.decoy_hits, "sandbox": result.sandbox,
            "seconds": result.seconds, "restarts": result.restarts, "peak_memory": result.peak_memory,
            "graded": False}
    (folder / "notebook.ipynb").write_text(nbformat.writes(result.notebook))
    (folder / "meta.json").write_text(json.dumps(meta))


def load_precomputed(base: Path, chapter: str, student: str, nb, seed: int) -> WorkerResult | None:
    """The saved run of this exact sanitized notebook and seed, or ``None`` (then the judge runs it itself)."""
    folder = Path(base) / chapter / student
    try:
        meta = json.loads((folder / "meta.json").read_text())
    except (OSError, ValueError):
        return None
    if meta.get("key") != notebook_key(nb) or meta.get("seed") != seed:
        return None
    result = WorkerResult(notebook=nbformat.reads((folder / "notebook.ipynb").read_text(), as_version=4))
    for test, rec in meta["records"].items():
        if "file" in rec:
            try:
                result.results[test] = loads((folder / rec["file"]).read_bytes())
            except (OSError, ValueError) as err:
                result.results[test] = {"ok": False, "error": str(err)}
        else:
            result.results[test] = rec
    for name in ("kernel_status", "flags", "events", "decoy_hits", "sandbox", "seconds", "restarts", "peak_memory"):
        setattr(result, name, meta[name])
    return result


def _course_hash(root: Path, chapter: str, seed: int) -> str:
    judge = load(chapter, root)
    return references.cache_key(chapter, root, seed, judge)


def _work(task: dict) -> dict:
    """One submission's worker phase (runs in a pool process): sanitize, run in the sandbox, save."""
    t0 = time.perf_counter()
    staged = Path(task["staged"])
    nb_path = staged / task["notebook_file"]
    nb = nbformat.read(str(nb_path), as_version=4)
    nb = sanitize(nb, task["chapter"], Path(task["notebook_file"]).stem, task["db_url"])
    key = notebook_key(nb)
    root = Path(task["root"])
    judge = load(task["chapter"], root)
    limits = Limits(**task["limits"])
    result = run_submission(nb, task["chapter"], task["student"], judge.codes(), task["seed"], files=staged,
                            limits=limits, course_root=root, threads=task["threads"])
    save_run(run_dir(root, task["chapter"], task["student"]), result, key, task["input_key"], task["seed"])
    return {"student": task["student"], "chapter": task["chapter"], "seconds": time.perf_counter() - t0,
            "flags": result.flags}


def _already_graded(root: Path, db_url: str, chapter: str, student: str, input_key: str) -> bool:
    try:
        meta = json.loads((run_dir(root, chapter, student) / "meta.json").read_text())
    except (OSError, ValueError):
        return False
    if meta.get("input_key") != input_key or not meta.get("graded"):
        return False
    from nbgrader.api import Gradebook, MissingEntry
    try:
        with Gradebook(db_url) as gb:
            gb.find_submission(chapter, student)
    except MissingEntry:
        return False
    return (root / "autograded" / student / chapter).is_dir()


def students_of(root: Path, chapter: str) -> list[str]:
    sub = root / "submitted"
    return sorted(d.name for d in sub.iterdir() if (d / chapter).is_dir()) if sub.is_dir() else []


def collect_zip(root: Path, chapter: str, archive: Path, regexp: str) -> None:
    """Unpack an LMS download with ``nbgrader zip_collect`` into ``submitted/``."""
    dest = root / "downloaded" / chapter / "archive"
    dest.mkdir(parents=True, exist_ok=True)
    shutil.copy2(archive, dest / archive.name)
    from course.grading.planner import bin_path_env
    import subprocess
    cmd = [str(Path(sys.executable).parent / "nbgrader"), "zip_collect", chapter, "--force",
           f"--FileNameCollectorPlugin.named_regexp={regexp}"]
    proc = subprocess.run(cmd, cwd=root, env=bin_path_env(), capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"nbgrader zip_collect failed:\n{proc.stdout[-2000:]}\n{proc.stderr[-4000:]}")


def grade_class(root: Path, chapters: list[str], jobs: int | None = None, force: bool = False,
                db_url: str | None = None, seed: int = 0, limits: Limits | None = None, feedback: bool = False,
                show_tests: bool = False, progress: bool = True, log=print) -> dict:
    """Grade every submission of ``chapters``; return ``{chapter: {student: report}}`` plus timings under ``"_timing"``."""
    from tqdm import tqdm

    from course.grading.autograde import read_reports, run_nbgrader_autograde

    root = Path(root).resolve()
    jobs = jobs or os.cpu_count() or 1
    limits = limits or Limits()
    db_url = db_url or f"sqlite:///{root / 'gradebook.db'}"
    seed = seed or references.course_seed(root)
    staged_root = references.judge_dir(root) / "staged"
    out: dict = {"_timing": {}}
    repairs: dict[tuple[str, str], repair.Repair] = {}
    tasks, skipped = [], []
    for chapter in chapters:
        release_nb = next((root / "release" / chapter).glob("*.ipynb"))
        course_key = _course_hash(root, chapter, seed)
        for student in students_of(root, chapter):
            staged = staged_root / student / chapter
            rep = repair.stage(root / "submitted" / student / chapter, staged, chapter, release_nb, student)
            repairs[(chapter, student)] = rep
            input_key = hashlib.sha256((staged / release_nb.name).read_bytes()
                                       + f"{course_key}|{seed}".encode()).hexdigest()[:24]
            task = {"staged": str(staged), "notebook_file": release_nb.name, "chapter": chapter, "student": student,
                    "db_url": db_url, "root": str(root), "seed": seed, "input_key": input_key,
                    "limits": limits.__dict__, "threads": 1 if jobs > 1 else None}
            if not force and _already_graded(root, db_url, chapter, student, input_key):
                skipped.append((chapter, student))
            else:
                tasks.append(task)
    log(f"{len(tasks)} submission(s) to grade, {len(skipped)} unchanged and already graded (--force regrades them); "
        f"{jobs} job(s); {'sandbox: bubblewrap' if not detect().degraded else 'WARNING: no sandbox: ' + detect().why}")
    t0 = time.perf_counter()
    # References first (trusted, once per chapter), then the student runs in parallel.
    ref_dir = Path(tempfile.mkdtemp(prefix="judge-refs-"))
    os.chmod(ref_dir, 0o700)
    ref_files = {}
    for chapter in chapters:
        if any(t["chapter"] == chapter for t in tasks):
            records = references.compute(chapter, root, seed, limits)
            ref_files[chapter] = ref_dir / f"{chapter}.pt"
            references.save(records, ref_files[chapter])
    out["_timing"]["references"] = time.perf_counter() - t0
    t1 = time.perf_counter()
    failures = []
    if tasks:
        bar = tqdm(total=len(tasks), desc="grading", unit="submission", disable=not progress, file=sys.stdout)
        if jobs == 1:
            for task in tasks:
                try:
                    _work(task)
                except Exception as err:  # noqa: BLE001 - one submission must not stop the class
                    failures.append((task["chapter"], task["student"], f"{type(err).__name__}: {err}"))
                bar.update(1)
        else:
            ctx = __import__("multiprocessing").get_context("spawn")
            with cf.ProcessPoolExecutor(max_workers=jobs, mp_context=ctx) as pool:
                futures = {pool.submit(_work, t): t for t in tasks}
                for fut in cf.as_completed(futures):
                    t = futures[fut]
                    try:
                        fut.result()
                    except Exception as err:  # noqa: BLE001
                        failures.append((t["chapter"], t["student"], f"{type(err).__name__}: {err}"))
                    bar.update(1)
        bar.close()
    out["_timing"]["workers"] = time.perf_counter() - t1
    t2 = time.perf_counter()
    for chapter in chapters:
        todo = [t["student"] for t in tasks if t["chapter"] == chapter]
        if not todo:
            continue
        everyone = students_of(root, chapter)
        extra = [f"--CourseDirectory.submitted_directory={staged_root}",
                 f"--JudgeExecute.precomputed={references.judge_dir(root) / 'runs'}",
                 f"--JudgeExecute.references_file={ref_files[chapter]}",
                 f"--JudgeExecute.seed={seed}",
                 f"--CourseDirectory.db_url={db_url}"]
        exclude = [s for s in everyone if s not in todo]
        if exclude:
            extra.append("--CourseDirectory.student_id_exclude=" + ",".join(exclude))
        proc = run_nbgrader_autograde(chapter, root, force=True, extra=extra)
        if proc.returncode != 0:
            failures.append((chapter, "*", f"nbgrader autograde exited {proc.returncode}: {proc.stderr[-1500:]}"))
        for student in todo:
            meta_path = run_dir(root, chapter, student) / "meta.json"
            try:
                meta = json.loads(meta_path.read_text())
                meta["graded"] = (root / "autograded" / student / chapter).is_dir()
                meta_path.write_text(json.dumps(meta))
            except (OSError, ValueError):
                pass
    shutil.rmtree(ref_dir, ignore_errors=True)
    out["_timing"]["record"] = time.perf_counter() - t2
    out["_timing"]["total"] = time.perf_counter() - t0
    for chapter in chapters:
        reports = read_reports(root, chapter)
        for student in students_of(root, chapter):
            r = reports.get(student, {"score": 0.0, "max_score": 0.0, "flags": ["not graded"], "cells": {}})
            rep = repairs.get((chapter, student))
            if rep is not None:
                r = dict(r, repair={"damaged": rep.damaged, "repaired": rep.repaired, "file": rep.source_file})
                if student in reports:
                    from course.grading.autograde import report_path
                    report_path(root, chapter, student).write_text(json.dumps(r, indent=1))
            out.setdefault(chapter, {})[student] = r
    out["_failures"] = failures
    out["_skipped"] = skipped
    out["_graded"] = [(t["chapter"], t["student"]) for t in tasks]
    if feedback:
        write_feedback(root, out, chapters, show_tests)
    return out


def flag_words(report: dict) -> list[str]:
    """Short flags for the class table."""
    words = []
    text = " ".join(report.get("flags", [])) + " " + " ".join(report.get("events", []))
    if "possible tampering" in text:
        words.append("tampering suspected")
    if "timed out" in text or "wall time" in text:
        words.append("timed out")
    if "kernel died" in text or "exited with code" in text or "died from" in text:
        words.append("crashed")
    if "cap" in text and ("memory" in text or "process" in text):
        words.append("hit a cap")
    rep = report.get("repair", {})
    if rep.get("damaged"):
        words.append("damaged")
    if rep.get("repaired"):
        words.append("repaired")
    if "sandbox degraded" in text:
        words.append("sandbox degraded")
    if "not graded" in text:
        words.append("NOT GRADED")
    return words


def class_table(results: dict, chapters: list[str]) -> str:
    """Per student: score per chapter, total, flags."""
    students = sorted({s for ch in chapters for s in results.get(ch, {})})
    width = max([len(s) for s in students] + [8]) + 2
    head = f"{'student':<{width}}" + "".join(f"{ch[:16]:>18}" for ch in chapters) + f"{'total':>12}  flags"
    lines = [head, "-" * len(head)]
    for s in students:
        row, got, best, flags = f"{s:<{width}}", 0.0, 0.0, []
        for ch in chapters:
            r = results.get(ch, {}).get(s)
            if r is None:
                row += f"{'-':>18}"
                continue
            row += f"{r['score']:>12g}/{r['max_score']:<5g}"
            got += r["score"]
            best += r["max_score"]
            flags += [f"{ch[:2]}: {w}" for w in flag_words(r)]
        lines.append(row + f"{got:>7g}/{best:<4g}  " + ("; ".join(flags) or "-"))
    return "\n".join(lines)


def write_feedback(root: Path, results: dict, chapters: list[str], show_tests: bool = False) -> None:
    """One ``grader.md`` per student and chapter: the judge's verdict and message per test."""
    for chapter in chapters:
        judge = load(chapter, root) if show_tests else None
        for student, r in results.get(chapter, {}).items():
            d = root / "feedback" / student / chapter
            d.mkdir(parents=True, exist_ok=True)
            lines = [f"# {chapter}: {r['score']:g} / {r['max_score']:g} points", ""]
            for rep_line in r.get("repair", {}).get("repaired", []) + r.get("repair", {}).get("damaged", []):
                lines.append(f"- Note on your file: {rep_line}")
            for cell, c in r.get("cells", {}).items():
                mark = "passed" if c["judge"] == "pass" else "failed"
                lines += ["", f"## {cell}: {mark} ({c['points']:g}/{c['max_points']:g})"]
                if c["judge"] != "pass":
                    lines += ["", "```", c["message"], "```"]
                    if judge is not None and cell in judge.probes:
                        lines += ["", "The hidden test's probe (shown at the instructor's request):", "", "```python",
                                  judge.probes[cell].source.rstrip(), "```"]
            (d / "grader.md").write_text("\n".join(lines) + "\n")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m course.grading grade-class", description=__doc__.split("\n")[0])
    p.add_argument("chapters", nargs="+")
    p.add_argument("--jobs", type=int, default=0, help="parallel submissions (default: the number of cores)")
    p.add_argument("--force", action="store_true", help="regrade submissions that are unchanged and already graded")
    p.add_argument("--db", default=None, help="gradebook URL (default: sqlite:///gradebook.db; postgresql://... works)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--zip", type=Path, default=None, help="an LMS download to unpack with nbgrader zip_collect first")
    p.add_argument("--zip-regexp", default=r".*/(?P<student_id>[^/_]+)_(?P<file_id>[^/]+)\.ipynb$",
                   help="how to read the student id and notebook name from the archive's file names "
                        "(default: <student>_<notebook>.ipynb)")
    p.add_argument("--memory-gib", type=float, default=6.0)
    p.add_argument("--wall-seconds", type=float, default=900.0)
    p.add_argument("--feedback", action="store_true", help="write feedback/<student>/<chapter>/grader.md")
    p.add_argument("--show-tests", action="store_true", help="include the hidden tests' probe code in the feedback")
    p.add_argument("--no-progress", action="store_true")
    args = p.parse_args(argv)
    root = Path.cwd()
    if args.zip:
        if len(args.chapters) != 1:
            p.error("--zip needs exactly one chapter")
        collect_zip(root, args.chapters[0], args.zip, args.zip_regexp)
    limits = Limits(memory_bytes=int(args.memory_gib * GiB), wall_seconds=args.wall_seconds)
    results = grade_class(root, args.chapters, args.jobs or None, args.force, args.db, args.seed, limits,
                          args.feedback, args.show_tests, progress=not args.no_progress)
    print(class_table(results, args.chapters))
    t = results["_timing"]
    print(f"\nreferences {t['references']:.1f} s, submissions {t['workers']:.1f} s, gradebook {t['record']:.1f} s, "
          f"total {t['total']:.1f} s; reports in .judge/reports/, scores in the gradebook")
    for chapter, student, why in results["_failures"]:
        print(f"PROBLEM: {chapter}/{student}: {why}")
    return 1 if results["_failures"] else 0
