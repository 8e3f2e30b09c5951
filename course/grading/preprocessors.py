"""The judge inside nbgrader: three preprocessors that ``nbgrader_config.py`` installs.

nbgrader stays the course's system: it finds the submissions, restores the
locked and test cells, keeps the gradebook, writes ``autograded/``, and later
serves Formgrader, ``generate_feedback`` and ``export``.

* :class:`JudgeExecute` replaces nbgrader's in-kernel ``Execute``. It takes
  the submission's sandboxed run (saved by ``grade-class``'s worker phase, or
  runs it now when a plain ``nbgrader autograde`` calls it), decides every
  grade cell in this process, which never executes student code, against the
  reference computed for this student's seed, and rewrites each grade cell's
  outputs so that nbgrader's ``SaveAutoGrades`` sees exactly the judge's
  verdict. It writes the instructor's report
  (``.judge/reports/<chapter>/<student>.json``). This process runs under a
  memory cap of its own (``GradingLimits.judge_memory_gib``).
* :class:`JudgeRecord` (after ``SaveAutoGrades``) writes the judge's scores
  and messages into the gradebook through nbgrader's ``Gradebook`` API. The
  messages, which quote the student's output, go in as an indented code
  block, so the markdown that ``generate_feedback`` renders shows them as
  text, with their line breaks.
* :class:`SafeNotebook` makes a notebook safe to render for a human: no
  script, event handler, JavaScript or SVG output, widget state or raw HTML
  from the student (nbconvert's ``SanitizeHTML``, with bleach), images kept,
  and outputs capped in bytes. It runs last when grading (so the graded
  notebook in ``autograded/`` is already safe), and again inside every
  ``HTMLExporter`` (Formgrader's pages and ``generate_feedback``).
"""
from __future__ import annotations

import json
import os
import resource
import time
from pathlib import Path

import nbformat
from nbconvert.preprocessors import Preprocessor
from nbconvert.preprocessors.sanitize import SanitizeHTML
from nbgrader.preprocessors import NbGraderPreprocessor
from nbgrader.utils import is_grade
from traitlets import Bool, Integer, Unicode

from course.grading import references
from course.grading.config import Limits, limits as course_limits
from course.grading.judge import JudgeError, Verdict, check_coverage, decide, load
from course.grading.records import (TAMPER_FLAG, CellReport, Report, WorkerResult, clean_lines, exercise_of, grade_id,
                                    graded_ids, points)
from course.grading.sandbox import detect
from course.grading.text import markdown_block, one_line, printable


def cap_memory(limit: int) -> None:
    """Cap this process's data segment at ``limit`` bytes (never raise a cap already lower)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_DATA)
    want = limit if soft == resource.RLIM_INFINITY else min(soft, limit)
    try:
        resource.setrlimit(resource.RLIMIT_DATA, (want, hard))
    except (ValueError, OSError):
        pass


def verdicts_for(judge, result: WorkerResult, refs: dict[str, dict]) -> dict[str, Verdict]:
    """Judge every grade cell of a worker's result against the reference records of its seed."""
    out = {}
    for test in graded_ids(result.notebook):
        if test not in judge.probes:
            raise JudgeError(f"grade cell {test} has no probe in judge.py")
        try:
            out[test] = decide(judge.probes[test], result.results.get(test), refs[test])
        except MemoryError:
            out[test] = Verdict(test, False, "Your result was too large for the grader to compare.", kind="form")
    return out


def _as_text(output) -> str:
    kind = output.get("output_type")
    if kind == "error":
        return f"{output.get('ename', 'Error')}: {output.get('evalue', '')}"
    if kind == "stream":
        return output.get("text", "")
    plain = output.get("data", {}).get("text/plain", "")
    return plain if isinstance(plain, str) else "".join(plain)


def rewrite_grade_cells(nb, verdicts: dict[str, Verdict], kernel: dict[str, str]) -> None:
    """Make each grade cell's outputs say what the judge decided (and nothing nbgrader could score otherwise)."""
    for cell in nb.cells:
        if cell.cell_type != "code" or not is_grade(cell):
            continue
        gid = grade_id(cell)
        v = verdicts.get(gid)
        kept = []
        for o in cell.get("outputs", []):
            kind = o.get("output_type")
            if kind == "error" or (kind == "stream" and o.get("name") == "stderr") or kind == "execute_result":
                label = "Your notebook's own run of this test: " if kind == "error" else ""
                kept.append(nbformat.v4.new_output("stream", name="stdout",
                                                   text=label + printable(_as_text(o), 4000).rstrip() + "\n"))
            else:
                kept.append(o)
        pts = points(cell)
        if v is None:
            continue
        if v.passed:
            kept.append(nbformat.v4.new_output("stream", name="stdout",
                                               text=f"Grader: passed ({pts:g}/{pts:g} points).\n"))
        else:
            head = f"Grader: failed (0/{pts:g} points)."
            if kernel.get(gid) == "pass" and v.visible_failed:
                head += " Your kernel reported this test as passed, but the same example fails when checked by the grader."
            kept.append(nbformat.v4.new_output("error", ename="GraderCheckFailed", evalue=v.message,
                                               traceback=[head, v.message]))
        cell.outputs = kept


def report_for(chapter: str, student: str, nb, result: WorkerResult, verdicts: dict[str, Verdict],
               seed: int) -> Report:
    """The instructor's report of one submission."""
    cells = {}
    flags = clean_lines(result.flags)
    for c in nb.cells:
        if c.cell_type != "code" or not is_grade(c):
            continue
        gid = grade_id(c)
        v = verdicts.get(gid)
        kernel = result.kernel_status.get(gid, "not run")
        cell = CellReport(points=points(c) if v and v.passed else 0.0, max_points=points(c),
                          judge="pass" if v and v.passed else "fail", kernel=kernel,
                          message=v.message if v else "no verdict", kind=v.kind if v else "missing",
                          detail=v.detail if v else "")
        if v and not v.passed and kernel == "pass" and v.visible_failed:
            cell.disagreement = TAMPER_FLAG
        cells[gid] = cell
    bad = [g for g, c in cells.items() if c.disagreement]
    if bad and TAMPER_FLAG not in flags:
        # The judge re-runs the visible example after the whole notebook: honest code whose result
        # depends on earlier calls (state kept between calls) can also disagree. Say so.
        flags.append(f"{TAMPER_FLAG} ({', '.join(bad)}; or the code's result depends on earlier calls)")
    return Report(chapter=chapter, student=student, seed=seed,
                  score=sum(c.points for c in cells.values()), max_score=sum(c.max_points for c in cells.values()),
                  cells=cells, flags=flags, events=clean_lines(result.events), sandbox=result.sandbox,
                  seconds=round(result.seconds, 2), restarts=result.restarts,
                  reference_seconds=round(result.reference_seconds, 2),
                  peak_memory_gib=round(result.peak_memory / 2 ** 30, 2),
                  # the grading process that ran the submission and read its results (grade-class's worker phase;
                  # this process when a plain nbgrader autograde ran it here)
                  judge_peak_mib=round((result.judge_peak_memory or
                                        resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024) / 2 ** 20, 1),
                  graded_at=time.strftime("%Y-%m-%d %H:%M:%S"))


def report_path(root: Path, chapter: str, student: str) -> Path:
    d = references.judge_dir(root) / "reports" / chapter
    d.mkdir(parents=True, exist_ok=True)
    return d / f"{student}.json"


class JudgeExecute(NbGraderPreprocessor):
    """nbgrader preprocessor: execute in a sandbox, probe, and judge outside the kernel (replaces ``Execute``)."""

    seed = Integer(0, help="a fixed key for the per-student seeds (tests); 0: the installation's secret").tag(config=True)
    threads = Integer(0, help="CPU threads per worker (0: torch's default)").tag(config=True)
    require_sandbox = Bool(False, help="refuse to grade where bubblewrap is unavailable").tag(config=True)
    course_root = Unicode("", help="course folder (default: the working directory)").tag(config=True)
    precomputed = Unicode("", help="folder of the runs grade-class's workers saved").tag(config=True)
    references_file = Unicode("", help="reference results computed beforehand, for every seed").tag(config=True)

    def preprocess(self, nb, resources):
        from course.grading import classgrade
        from course.grading.worker import run_submission

        root = Path(self.course_root or os.getcwd()).resolve()
        info = resources["nbgrader"]
        chapter, student = info["assignment"], info["student"]
        limits = course_limits(config=self.config)
        cap_memory(limits.judge_memory_bytes)
        if self.require_sandbox and detect().degraded:
            raise JudgeError(f"no sandbox available ({detect().why}) and --require-sandbox is set")
        seed = references.seed_for(root, chapter, student, self.seed or None)
        judge = load(chapter, root)
        check_coverage(judge, graded_ids(nb), chapter)
        result = None
        if self.precomputed:
            result = classgrade.load_run(Path(self.precomputed), chapter, student, nb, seed, limits)
        if result is None:
            files = Path(resources.get("metadata", {}).get("path") or ".")
            result = run_submission(nb, chapter, student, judge.codes(), seed, files=files, limits=limits,
                                    course_root=root, threads=self.threads or None)
        t0 = time.perf_counter()
        refs = None
        if self.references_file:
            refs = references.load_saved(Path(self.references_file)).get(seed)
        if refs is None:
            refs = references.compute(chapter, root, seed, limits, judge)
        result.reference_seconds = time.perf_counter() - t0
        verdicts = verdicts_for(judge, result, refs)
        out = result.notebook
        rewrite_grade_cells(out, verdicts, result.kernel_status)
        report = report_for(chapter, student, out, result, verdicts, seed)
        staged = classgrade.staging_notes(root, chapter, student)
        report.intake, report.repair = staged.get("intake", {}), staged.get("repair", {})
        report.flags += [f for f in staged.get("flags", []) if f not in report.flags]
        report.save(report_path(root, chapter, student))
        result.results.clear()
        result.raw.clear()
        resources["judge"] = {"report": report}
        self.log.info("judge: %s/%s scored %g/%g%s", student, chapter, report.score, report.max_score,
                      f" (flags: {one_line('; '.join(report.flags), 300)})" if report.flags else "")
        return out, resources


class JudgeRecord(NbGraderPreprocessor):
    """nbgrader preprocessor (after ``SaveAutoGrades``): write the judge's scores and messages into the gradebook."""

    def preprocess(self, nb, resources):
        from nbgrader.api import Gradebook, MissingEntry

        judged = resources.get("judge")
        if not judged:
            return nb, resources
        report: Report = judged["report"]
        info = resources["nbgrader"]
        notebook, assignment, student = info["notebook"], info["assignment"], info["student"]
        exercise = exercise_of(nb)
        comments: dict[str, list[str]] = {}
        with Gradebook(info["db_url"]) as gb:
            for gid, c in report.cells.items():
                grade = gb.find_grade(gid, notebook, assignment, student)
                grade.auto_score = c.points
                grade.needs_manual_grade = grade.manual_score is not None
                if gid in exercise:
                    line = f"{gid}: {'passed' if c.judge == 'pass' else 'FAILED'}"
                    if c.judge != "pass":
                        line += f" - {one_line(c.message.splitlines()[0] if c.message else '', 300)}"
                    comments.setdefault(exercise[gid], []).append(line)
            for sol, lines in comments.items():
                try:
                    comment = gb.find_comment(sol, notebook, assignment, student)
                except MissingEntry:
                    continue
                text = "Grader (outside the kernel):\n" + "\n".join(lines)
                if report.flags:
                    text += "\nFlags: " + "; ".join(report.flags)
                comment.auto_comment = markdown_block(text)
            gb.db.commit()
        return nb, resources


class SafeNotebook(Preprocessor):
    """Make a notebook safe to render: no active content from the student, images kept, outputs capped in bytes."""

    # nbgrader registers its preprocessors without enabling them, and nbconvert's default is off.
    enabled = Bool(True).tag(config=True)
    cell_output_bytes = Integer(Limits.cell_output_bytes, help="bytes kept per cell's outputs").tag(config=True)
    notebook_output_bytes = Integer(Limits.notebook_output_bytes, help="bytes kept per notebook's outputs").tag(config=True)

    def preprocess(self, nb, resources):
        sanitizer = SanitizeHTML(parent=self)
        keep = {k: nb.metadata[k] for k in ("kernelspec", "language_info") if k in nb.metadata}
        nb.metadata = nbformat.from_dict(json.loads(json.dumps(keep)))
        total = 0
        for index, cell in enumerate(nb.cells):
            if cell.cell_type in ("markdown", "raw"):
                cell.source = sanitizer.sanitize_html_tags(cell.source)
                attachments = cell.get("attachments") or {}
                for name in list(attachments):
                    data = attachments[name] if isinstance(attachments[name], dict) else {}
                    attachments[name] = {k: v for k, v in data.items() if k in ("image/png", "image/jpeg")}
                if cell.cell_type == "raw":
                    cell.metadata.pop("format", None)
                    cell.metadata.pop("raw_mimetype", None)
                continue
            if cell.cell_type != "code":
                continue
            outputs = sanitizer.sanitize_code_outputs(cell.get("outputs", []))
            kept, used = [], 0
            for o in outputs:
                o.pop("transient", None)
                size = len(json.dumps(o, default=str))
                room = min(self.cell_output_bytes - used, self.notebook_output_bytes - total)
                if size > room:
                    if o.get("output_type") == "stream" and room > 200:
                        o["text"] = str(o.get("text", ""))[:room - 200]
                        kept.append(o)
                    kept.append(nbformat.v4.new_output("stream", name="stderr",
                                                       text="[output cut: over the grader's cap]\n"))
                    used += room
                    total += room
                    break
                kept.append(o)
                used += size
                total += size
            cell.outputs = kept
        return nb, resources
