"""Trusted grading on top of nbgrader: ``python -m course.grading autograde CHAPTER [--force]``.

nbgrader stays the course's system: it finds the submissions, restores the
locked and test cells, keeps the gradebook, writes ``autograded/``, and later
serves the Formgrader, ``generate_feedback`` and ``export``. Two
preprocessors replace its in-kernel execution (``nbgrader_config.py``
installs them unless ``COURSE_GRADING=stock``):

* :class:`JudgeExecute` runs the submission in a sandboxed worker
  (:mod:`course.grading.worker`), sends it the chapter's probes, and decides
  every grade cell in this process, which never executes student code,
  against references computed from the reference solution
  (:mod:`course.grading.references`). It then rewrites each grade cell's
  outputs so that nbgrader's ``SaveAutoGrades`` sees exactly the judge's
  verdict: the kernel's own errors become plain text, and a failed verdict
  becomes the cell's one error output, with the judge's message (never the
  hidden test's code).
* :class:`JudgeRecord` (after ``SaveAutoGrades``) writes the judge's scores
  and messages into the gradebook through nbgrader's ``Gradebook`` API:
  ``auto_score`` per grade cell, and the messages as the auto comment of the
  exercise's solution cell.

Each submission also gets a report, ``.judge/reports/<chapter>/<student>.json``
(instructor only): per cell the judge's verdict, the kernel's own result and
the message; and flags (possible tampering, timeouts, crashes, caps, a
degraded sandbox). Where the kernel reported a visible test as passed and
the judge failed the same example, the judge wins and the report says
"kernel reported pass, judge failed: possible tampering".
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import nbformat
from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets import Bool, Float, Integer, Unicode

from course.grading import references
from course.grading.judge import JudgeError, Verdict, check_coverage, decide, load
from course.grading.sandbox import GiB, Limits, detect
from course.grading.worker import WorkerResult, nb_meta, run_submission

TAMPER_FLAG = "kernel reported pass, judge failed: possible tampering"


def limits_from(memory_gib: float = 6.0, processes: int = 256, wall_seconds: float = 900.0,
                probe_seconds: float = 60.0, cell_seconds: float = 120.0) -> Limits:
    return Limits(memory_bytes=int(memory_gib * GiB), processes=processes, wall_seconds=wall_seconds,
                  probe_seconds=probe_seconds, cell_seconds=cell_seconds)


def graded_ids(nb) -> list[str]:
    return [nb_meta(c)["grade_id"] for c in nb.cells if nb_meta(c).get("grade")]


def verdicts_for(chapter: str, root: Path, result: WorkerResult, seed: int, limits: Limits,
                 refs: dict | None = None) -> dict[str, Verdict]:
    """Judge every grade cell of a worker's result against the references (computed here unless given)."""
    judge = load(chapter, root)
    t0 = time.perf_counter()
    if refs is None:
        refs = references.compute(chapter, root, seed, limits, judge)
    result.reference_seconds = time.perf_counter() - t0
    out = {}
    for test in graded_ids(result.notebook):
        if test not in judge.probes:
            raise JudgeError(f"grade cell {test} of {chapter} has no probe in judge.py")
        out[test] = decide(judge.probes[test], result.results.get(test), refs[test])
    return out


def _as_text(output) -> str:
    kind = output.get("output_type")
    if kind == "error":
        return f"{output.get('ename', 'Error')}: {output.get('evalue', '')}"
    if kind == "stream":
        return output.get("text", "")
    data = output.get("data", {})
    return data.get("text/plain", "") if isinstance(data.get("text/plain", ""), str) else "".join(data.get("text/plain", []))


def rewrite_grade_cells(nb, verdicts: dict[str, Verdict], kernel: dict[str, str]) -> None:
    """Make each grade cell's outputs say what the judge decided (and nothing nbgrader could score otherwise)."""
    for cell in nb.cells:
        m = nb_meta(cell)
        if cell.cell_type != "code" or not m.get("grade"):
            continue
        v = verdicts.get(m["grade_id"])
        kept = []
        for o in cell.get("outputs", []):
            kind = o.get("output_type")
            if kind == "error" or (kind == "stream" and o.get("name") == "stderr") or kind == "execute_result":
                label = "Your notebook's own run of this test: " if kind == "error" else ""
                kept.append(nbformat.v4.new_output("stream", name="stdout", text=label + _as_text(o).rstrip() + "\n"))
            else:
                kept.append(o)
        points = m.get("points", 0)
        if v is None:
            continue
        if v.passed:
            kept.append(nbformat.v4.new_output("stream", name="stdout",
                                               text=f"Grader: passed ({points:g}/{points:g} points).\n"))
        else:
            head = f"Grader: failed (0/{points:g} points)."
            if kernel.get(m["grade_id"]) == "pass" and v.visible_failed:
                head += " Your kernel reported this test as passed, but the same example fails when checked by the grader."
            kept.append(nbformat.v4.new_output("error", ename="GraderCheckFailed", evalue=v.message,
                                               traceback=[head, v.message]))
        cell.outputs = kept


def report_for(chapter: str, student: str, nb, result: WorkerResult, verdicts: dict[str, Verdict],
               seed: int) -> dict:
    """The instructor's report of one submission (JSON-ready)."""
    cells = {}
    flags = list(result.flags)
    for c in nb.cells:
        m = nb_meta(c)
        if c.cell_type == "code" and m.get("grade"):
            v = verdicts.get(m["grade_id"])
            kernel = result.kernel_status.get(m["grade_id"], "not run")
            cells[m["grade_id"]] = {
                "points": float(m.get("points", 0)) if v and v.passed else 0.0,
                "max_points": float(m.get("points", 0)),
                "judge": "pass" if v and v.passed else "fail", "kernel": kernel,
                "message": v.message if v else "no verdict", "kind": v.kind if v else "missing",
                "detail": v.detail if v else ""}
            if v and not v.passed and kernel == "pass" and v.visible_failed:
                cells[m["grade_id"]]["disagreement"] = TAMPER_FLAG
    if any("disagreement" in c for c in cells.values()) and TAMPER_FLAG not in flags:
        bad = [g for g, c in cells.items() if "disagreement" in c]
        # The judge re-runs the visible example after the whole notebook: honest code whose result
        # depends on earlier calls (state kept between calls) can also disagree. Say so.
        flags.append(f"{TAMPER_FLAG} ({', '.join(bad)}; or the code's result depends on earlier calls)")
    return {"chapter": chapter, "student": student, "seed": seed,
            "score": sum(c["points"] for c in cells.values()),
            "max_score": sum(c["max_points"] for c in cells.values()),
            "cells": cells, "flags": flags, "events": result.events, "sandbox": result.sandbox,
            "seconds": round(result.seconds, 2), "restarts": result.restarts,
            "reference_seconds": round(getattr(result, "reference_seconds", 0.0), 2),
            "peak_memory_gib": round(result.peak_memory / GiB, 2),
            "graded_at": time.strftime("%Y-%m-%d %H:%M:%S")}


def report_path(root: Path, chapter: str, student: str) -> Path:
    d = references.judge_dir(root) / "reports" / chapter
    d.mkdir(parents=True, exist_ok=True)
    return d / f"{student}.json"


class JudgeExecute(NbGraderPreprocessor):
    """nbgrader preprocessor: execute in a sandbox, probe, and judge outside the kernel (replaces ``Execute``)."""

    seed = Integer(0, help="grading seed; 0 means the course's (.judge/seed)").tag(config=True)
    memory_gib = Float(6.0, help="memory cap per submission (GiB)").tag(config=True)
    processes = Integer(256, help="process cap per submission").tag(config=True)
    wall_seconds = Float(900.0, help="total time per submission (s)").tag(config=True)
    probe_seconds = Float(60.0, help="time per probe (s)").tag(config=True)
    timeout = Integer(120, help="time per cell (s), as nbgrader's Execute.timeout").tag(config=True)
    threads = Integer(0, help="CPU threads per worker (0: torch's default)").tag(config=True)
    require_sandbox = Bool(False, help="refuse to grade where bubblewrap is unavailable").tag(config=True)
    course_root = Unicode("", help="course folder (default: the working directory)").tag(config=True)
    precomputed = Unicode("", help="folder of worker results computed in parallel (course.grading.classgrade)").tag(config=True)
    references_file = Unicode("", help="reference results computed beforehand by the grading command").tag(config=True)

    def preprocess(self, nb, resources):
        root = Path(self.course_root or os.getcwd()).resolve()
        info = resources["nbgrader"]
        chapter, student = info["assignment"], info["student"]
        if self.require_sandbox and detect().degraded:
            raise JudgeError(f"no sandbox available ({detect().why}) and --require-sandbox is set")
        seed = self.seed or references.course_seed(root)
        limits = limits_from(self.memory_gib, self.processes, self.wall_seconds, self.probe_seconds, self.timeout)
        judge = load(chapter, root)
        check_coverage(judge, graded_ids(nb), chapter)
        result = None
        if self.precomputed:
            from course.grading import classgrade
            result = classgrade.load_precomputed(Path(self.precomputed), chapter, student, nb, seed)
        if result is None:
            files = Path(resources.get("metadata", {}).get("path") or ".")
            result = run_submission(nb, chapter, student, judge.codes(), seed, files=files, limits=limits,
                                    course_root=root, threads=self.threads or None)
        refs = references.load_saved(Path(self.references_file)) if self.references_file else None
        verdicts = verdicts_for(chapter, root, result, seed, limits, refs)
        out = result.notebook
        rewrite_grade_cells(out, verdicts, result.kernel_status)
        report = report_for(chapter, student, out, result, verdicts, seed)
        report_path(root, chapter, student).write_text(json.dumps(report, indent=1))
        resources["judge"] = {"verdicts": verdicts, "report": report}
        self.log.info("judge: %s/%s scored %g/%g%s", student, chapter, report["score"], report["max_score"],
                      f" (flags: {'; '.join(report['flags'])})" if report["flags"] else "")
        return out, resources


def _exercise_of(nb) -> dict[str, str]:
    """Map each grade cell to the solution cell above it (its exercise)."""
    out, current = {}, None
    for c in nb.cells:
        m = nb_meta(c)
        if m.get("solution"):
            current = m["grade_id"]
        if m.get("grade") and current:
            out[m["grade_id"]] = current
    return out


class JudgeRecord(NbGraderPreprocessor):
    """nbgrader preprocessor (after ``SaveAutoGrades``): write the judge's scores and messages into the gradebook."""

    def preprocess(self, nb, resources):
        from nbgrader.api import Gradebook

        judged = resources.get("judge")
        if not judged:
            return nb, resources
        info = resources["nbgrader"]
        notebook, assignment, student = info["notebook"], info["assignment"], info["student"]
        cells = judged["report"]["cells"]
        exercise = _exercise_of(nb)
        comments: dict[str, list[str]] = {}
        with Gradebook(info["db_url"]) as gb:
            for gid, c in cells.items():
                grade = gb.find_grade(gid, notebook, assignment, student)
                grade.auto_score = c["points"]
                grade.needs_manual_grade = grade.manual_score is not None
                if gid in exercise:
                    line = f"{gid}: {'passed' if c['judge'] == 'pass' else 'FAILED'}"
                    if c["judge"] != "pass":
                        line += f" - {c['message'].splitlines()[0][:300]}"
                    comments.setdefault(exercise[gid], []).append(line)
            for sol, lines in comments.items():
                try:
                    comment = gb.find_comment(sol, notebook, assignment, student)
                except Exception:  # noqa: BLE001 - a solution cell without a comment row
                    continue
                flags = judged["report"]["flags"]
                text = "Grader (outside the kernel):\n" + "\n".join(lines)
                if flags:
                    text += "\nFlags: " + "; ".join(flags)
                comment.auto_comment = text
            gb.db.commit()
        return nb, resources


# --- the command line ---------------------------------------------------------------------------

def banner() -> str:
    m = detect()
    if m.degraded:
        line = "!" * 78
        return (f"{line}\n!! WARNING: grading WITHOUT a sandbox: {m.why}\n"
                f"!! Student code can read and write what this user can, and use the network.\n"
                f"!! Every report is flagged 'sandbox degraded'. Install bubblewrap, or pass --require-sandbox.\n{line}")
    return "Grading through the judge: each submission in a bubblewrap sandbox, verdicts outside the kernel."


def run_nbgrader_autograde(chapter: str, root: Path, force: bool = False, students: list[str] | None = None,
                           db: Path | None = None, extra: list[str] | None = None,
                           env_extra: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """Run ``nbgrader autograde`` with the judge's preprocessors (the course's nbgrader_config.py installs them)."""
    bindir = Path(sys.executable).parent
    cmd = [str(bindir / "nbgrader"), "autograde", chapter]
    if force:
        cmd.append("--force")
    if students:
        if len(students) == 1:
            cmd.append(f"--student={students[0]}")
        else:
            everyone = [d.name for d in (root / "submitted").iterdir() if (d / chapter).is_dir()]
            cmd.append("--CourseDirectory.student_id_exclude=" + ",".join(s for s in everyone if s not in students))
    if db is not None:
        cmd.append(f"--CourseDirectory.db_url=sqlite:///{db}")
    cmd += list(extra or [])
    env = dict(os.environ)
    env["PATH"] = f"{bindir}{os.pathsep}{env.get('PATH', '')}"
    env["COURSE_GRADING"] = "judge"
    env.setdefault("HF_HUB_OFFLINE", "1")
    env.pop("MPLBACKEND", None)
    env.update(env_extra or {})
    return subprocess.run(cmd, cwd=root, env=env, capture_output=True, text=True)


def read_reports(root: Path, chapter: str) -> dict[str, dict]:
    d = references.judge_dir(root) / "reports" / chapter
    out = {}
    for p in sorted(d.glob("*.json")) if d.is_dir() else []:
        try:
            out[p.stem] = json.loads(p.read_text())
        except ValueError:
            continue
    return out


def summary(reports: dict[str, dict]) -> str:
    """A per-student table: score, flags."""
    if not reports:
        return "(no reports)"
    width = max(len(s) for s in reports) + 2
    lines = [f"{'student':<{width}}{'score':>12}  flags", "-" * (width + 40)]
    for student, r in sorted(reports.items()):
        flags = "; ".join(r.get("flags", [])) or "-"
        lines.append(f"{student:<{width}}{r['score']:>6g}/{r['max_score']:<5g}  {flags}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m course.grading autograde",
                                description="Grade every submitted/<student>/CHAPTER through the judge.")
    p.add_argument("chapter")
    p.add_argument("--force", action="store_true", help="regrade submissions already graded")
    p.add_argument("--student", action="append", help="only these students (repeatable)")
    p.add_argument("--seed", type=int, default=0, help="grading seed (default: the course's, .judge/seed)")
    p.add_argument("--memory-gib", type=float, default=6.0)
    p.add_argument("--processes", type=int, default=256)
    p.add_argument("--wall-seconds", type=float, default=900.0, help="total time per submission")
    p.add_argument("--timeout", type=int, default=0, help="time per cell (default: nbgrader's Execute.timeout)")
    p.add_argument("--probe-seconds", type=float, default=60.0, help="time per hidden test")
    p.add_argument("--require-sandbox", action="store_true")
    p.add_argument("--db", type=Path, default=None, help="a SQLite gradebook file (default: the course's gradebook.db)")
    p.add_argument("--db-url", default=None, help="any gradebook URL nbgrader accepts (e.g. postgresql://user@host/db)")
    args = p.parse_args(argv)
    root = Path.cwd()
    print(banner(), flush=True)
    if args.require_sandbox and detect().degraded:
        print("refusing to grade without a sandbox (--require-sandbox)", file=sys.stderr)
        return 2
    extra = [f"--JudgeExecute.memory_gib={args.memory_gib}", f"--JudgeExecute.processes={args.processes}",
             f"--JudgeExecute.wall_seconds={args.wall_seconds}", f"--JudgeExecute.probe_seconds={args.probe_seconds}"]
    if args.timeout:
        extra.append(f"--JudgeExecute.timeout={args.timeout}")
    if args.seed:
        extra.append(f"--JudgeExecute.seed={args.seed}")
    t0 = time.perf_counter()
    if args.db_url:
        extra.append(f"--CourseDirectory.db_url={args.db_url}")
    proc = run_nbgrader_autograde(args.chapter, root, args.force, args.student, args.db, extra)
    sys.stdout.write(proc.stdout[-6000:])
    if proc.returncode != 0:
        sys.stderr.write(proc.stderr[-12000:])
        print(f"nbgrader autograde failed (exit code {proc.returncode})", file=sys.stderr)
        return proc.returncode
    reports = read_reports(root, args.chapter)
    if args.student:
        reports = {k: v for k, v in reports.items() if k in args.student}
    print(summary(reports))
    print(f"graded in {time.perf_counter() - t0:.1f} s; reports in .judge/reports/{args.chapter}/, "
          f"scores in the gradebook, graded notebooks in autograded/")
    return 0
