"""One submission judged, in the trusted process: every grade cell's verdict against the reference of the
student's seed, the known mistake a failing exercise behaves like, the grade cells' outputs rewritten to say
what the judge decided, and the instructor's report. :class:`course.grading.nbgrader.execute.JudgeExecute` calls
these for nbgrader; nothing here runs student code.
"""
from __future__ import annotations

import resource
import time
from pathlib import Path

import nbformat
from nbgrader.utils import is_grade

from course.grading.judge.verdicts import JudgeError, Verdict, decide
from course.grading.records import (TAMPER_FLAG, CellReport, Report, WorkerResult, clean_lines, exercise_of, grade_id,
                                    graded_ids, points)
from course.grading.text import printable


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


def diagnose(chapter: str, root: Path, nb, verdicts: dict[str, Verdict], log=None) -> dict[str, dict]:
    """Name the known mistake each failing exercise behaves like (:mod:`course.grading.judge.diagnosis`): the note is
    added to the message of the exercise's first failing grade cell, which the graded notebook, the feedback and
    the gradebook show. Returns {solution cell: {"note", "known", "score"}} for the report."""
    from course.grading.judge import diagnosis

    failed = diagnosis.profile(verdicts)
    if not failed:
        return {}
    catalogue = diagnosis.load(chapter, root)
    if not catalogue.known:
        if log is not None and catalogue.why and not catalogue.said:
            log(catalogue.why + "; feedback names no known mistake")
            catalogue.said = True
        return {}
    exercise = exercise_of(nb)
    found = catalogue.diagnose(failed, exercise)
    for cell, d in found.items():
        first = next(t for t in graded_ids(nb) if exercise.get(t) == cell and t in failed)
        verdicts[first].message += "\n" + diagnosis.PREFIX + d.note
    return {cell: {"note": d.note, "known": list(d.known), "score": d.score} for cell, d in found.items()}


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
                  phases={k: round(v, 2) for k, v in result.phases.items()}, skipped=list(result.skipped),
                  peak_memory_gib=round(result.peak_memory / 2 ** 30, 2),
                  # the grading process that ran the submission and read its results (grade-class's worker phase;
                  # this process when a plain nbgrader autograde ran it here)
                  judge_peak_mib=round((result.judge_peak_memory or
                                        resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024) / 2 ** 20, 1),
                  graded_at=time.strftime("%Y-%m-%d %H:%M:%S"))
