"""Hidden tests of Chapter 2, judged outside the student's kernel (instructor side: never released).

Each grade cell of 02_autograd.ipynb has one probe here (it runs with the
notebook's names, in the student's sandbox and in the reference worker) and
one verdict (it runs in the judge, on the plain data both sent back).
``got`` is the student's data, ``ref`` the reference solution's; every
expectation that does not come from the student's code is read from ``ref``.
Probes build their inputs from explicit generators (or before the first call
into student code), so both runs see the same inputs whatever the student's
code does to the global RNG, and they return raw data: all comparisons happen
in the verdicts, never in the (untrusted) student kernel.
"""
from contextlib import nullcontext

import torch

from course import checks as C
from course.grading.judge import Judge, visible

judge = Judge()
F64 = torch.float64


def _fail(message, hint=None):
    C.check_true(False, message, hint=hint)


def _grad_or_fail(g, name, hint=None):
    """A gradient sent back by a probe: fail if it is missing (None) or an error string."""
    if g is None:
        _fail(f"{name}.grad is None: no gradient reached it",
              hint or "the returned tensor is cut from the graph (.detach(), .data, torch.no_grad())")
    if isinstance(g, str):
        _fail(f"{name}: {g}", hint)
    return g


# Each exercise's probes and verdicts, and WHY (why its reference is right), are in
# exercises/<grade id>/judge.py, beside its mutants and alternatives; course.grading.judge.verdicts.load runs
# them after this file, in the notebook's order, in this module's namespace.
WHY = {}
