"""The instructor's side of the course: grading that students' code cannot reach.

* :mod:`course.grading.planner`: known answers (mutants, alternatives) turned
  into submissions, graded through real nbgrader (``check``, ``demo``).
* :mod:`course.grading.sandbox`: the sandbox each submission runs in.
* :mod:`course.grading.worker`: the student's notebook in a sandboxed kernel,
  and the probes sent to it.
* :mod:`course.grading.wire`: the plain-data format that comes back.
* :mod:`course.grading.judge`: how hidden tests are written (probe + verdict),
  and how verdicts are reached outside the student's kernel.
* :mod:`course.grading.autograde`: ``python -m course.grading autograde``, the
  trusted grading command, on top of nbgrader.

Students never import this package; nothing in it is secret (the hidden
tests live in ``source/<chapter>/judge.py``, which is never released).
Importing ``course.grading`` stays light, because the probe runner
(:mod:`course.grading.wire`) is imported inside students' kernels: the
planner's names are loaded on first use.
"""
from __future__ import annotations

import importlib

_PLANNER = {"TAMPER_PRELUDE", "Variant", "Submission", "Graded", "chapters", "notebook_path", "read",
            "grade_id", "solution_cells", "graded_cells", "strip_markers", "load_variants", "plan",
            "build_notebook", "bin_path_env", "nbgrader", "make_course", "generate", "read_scores",
            "grade", "problems", "table", "execute", "release", "demo", "REPO", "textwrap_dedent",
            "ATTACKS", "write_submissions", "write_damaged"}


def __getattr__(name: str):
    if name in _PLANNER:
        return getattr(importlib.import_module("course.grading.planner"), name)
    raise AttributeError(f"module 'course.grading' has no attribute {name!r}")
