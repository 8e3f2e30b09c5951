"""Hidden tests of Chapter 1, judged outside the student's kernel (instructor side: never released).

Each grade cell of 01_dynamic_graphs.ipynb has one probe here (it runs with
the notebook's names, in the student's sandbox and in the reference worker)
and one verdict (it runs in the judge, on the plain data both sent back).
``got`` is the student's data, ``ref`` the reference solution's; any
expectation that does not come from the student's code is read from ``ref``.
Probes build their inputs from explicit generators (or before the first call
into student code), and catch the student's exceptions where a clear message
helps more than a traceback. A hint that a verdict shares with the visible
test of its cell stays on the line of its check: no line of this file may
equal a line of the released notebook (tests/test_chapters.py reads the
feedback for judge lines).
"""
from contextlib import nullcontext

import torch

from course import checks as C
from course.grading.judge import Judge, visible

judge = Judge()


@judge.shared
def attempt(fn):
    """Run fn(); return ("ok", value) or ("error", "Type: message") (shipped with every probe)."""
    try:
        return ("ok", fn())
    except Exception as err:  # noqa: BLE001 - the student's code may raise anything
        return ("error", f"{type(err).__name__}: {str(err)[:300]}")


def expect_ok(result, what, hint=None):
    """Fail with the student's exception if ``result`` (from attempt) is an error; else return the value."""
    C.check_type(result, (tuple, list), what)
    C.check_true(len(result) == 2 and result[0] in ("ok", "error"), f"{what}: malformed result")
    if result[0] == "error":
        C.check_true(False, f"{what} raised {result[1]}", hint=hint)
    return result[1]


# Each exercise's probes and verdicts, and WHY (why its reference is right), are in
# exercises/<grade id>/judge.py, beside its mutants and alternatives; course.grading.judge.verdicts.load runs
# them after this file, in the notebook's order, in this module's namespace.
WHY = {}
