"""The judge inside nbgrader, first: :class:`JudgeExecute`, which ``nbgrader_config.py`` installs in place of
nbgrader's in-kernel ``Execute``.

nbgrader stays the course's system: it finds the submissions, restores the locked and test cells, keeps the
gradebook, writes ``autograded/``, and later serves Formgrader, ``generate_feedback`` and ``export``.

:class:`JudgeExecute` replaces nbgrader's in-kernel ``Execute``. It takes
the submission's sandboxed run (saved by ``grade-class``'s worker phase, or
runs it now when a plain ``nbgrader autograde`` calls it), decides every
grade cell in this process, which never executes student code, against the
reference computed for this student's seed, and rewrites each grade cell's
outputs so that nbgrader's ``SaveAutoGrades`` sees exactly the judge's
verdict. It writes the instructor's report
(``.judge/reports/<chapter>/<student>.json``). This process runs under a
memory cap of its own (``GradingLimits.judge_memory_gib``).
"""
from __future__ import annotations

import os
import time
from pathlib import Path

from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets import Bool, Integer, Unicode

from course.grading.config import limits as course_limits
from course.grading.judge import references
from course.grading.judge.submission import diagnose, report_for, rewrite_grade_cells, verdicts_for
from course.grading.judge.verdicts import JudgeError, check_coverage, load
from course.grading.paths import report_path
from course.grading.records import graded_ids
from course.grading.run import saved as runs
from course.grading.run.sandbox import cap_memory, detect
from course.grading.text import one_line


class JudgeExecute(NbGraderPreprocessor):
    """nbgrader preprocessor: execute in a sandbox, probe, and judge outside the kernel (replaces ``Execute``)."""

    seed = Integer(0, help="a fixed key for the per-student seeds (tests); 0: the installation's secret").tag(config=True)
    threads = Integer(0, help="CPU threads per worker (0: torch's default)").tag(config=True)
    require_sandbox = Bool(False, help="refuse to grade where bubblewrap is unavailable").tag(config=True)
    course_root = Unicode("", help="course folder (default: the working directory)").tag(config=True)
    precomputed = Unicode("", help="folder of the runs grade-class's workers saved").tag(config=True)
    references_file = Unicode("", help="reference results computed beforehand, for every seed").tag(config=True)

    def preprocess(self, nb, resources):
        from course.grading.run.worker import run_submission

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
            result = runs.load_run(Path(self.precomputed), chapter, student, nb, seed, limits)
        if result is None:
            files = Path(resources.get("metadata", {}).get("path") or ".")
            result = run_submission(nb, chapter, student, judge.codes(), seed, files=files, limits=limits,
                                    course_root=root, threads=self.threads or None)
        t0 = time.perf_counter()
        refs = None
        if self.references_file:
            refs = references.load_saved(Path(self.references_file), seed)
        if refs is None:
            refs = references.compute(chapter, root, seed, limits, judge)
        result.reference_seconds = time.perf_counter() - t0
        verdicts = verdicts_for(judge, result, refs)
        out = result.notebook
        diagnoses = diagnose(chapter, root, out, verdicts, log=self.log.warning)
        rewrite_grade_cells(out, verdicts, result.kernel_status)
        report = report_for(chapter, student, out, result, verdicts, seed)
        report.diagnoses = diagnoses
        staged = runs.staging_notes(root, chapter, student)
        report.intake, report.repair = staged.get("intake", {}), staged.get("repair", {})
        report.flags += [f for f in staged.get("flags", []) if f not in report.flags]
        report.save(report_path(root, chapter, student))
        result.results.clear()
        result.raw.clear()
        resources["judge"] = {"report": report}
        self.log.info("judge: %s/%s scored %g/%g%s", student, chapter, report.score, report.max_score,
                      f" (flags: {one_line('; '.join(report.flags), 300)})" if report.flags else "")
        return out, resources
