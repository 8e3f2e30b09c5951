"""Hidden tests of Chapter 5b, judged outside the student's kernel (instructor side: never released).

Each grade cell of 05b_distributed.ipynb has one probe here (it runs with
the notebook's names, in the student's sandbox and in the reference worker)
and one verdict (it runs in the judge, on the plain data both sent back).
``got`` is the student's data, ``ref`` the reference solution's; every
expectation that does not come from the student's code is read from ``ref``.
Probes build their inputs from the seed before the first call into student
code; multi-rank probes use ``P.launch`` (forkserver on Linux, spawn elsewhere; the
student's function travels to the ranks by value, with cloudpickle), with the
smallest sizes that still show the mistake.
"""
import torch

from course import checks as C
from course.grading.judge import Judge, visible

judge = Judge()


# Each exercise's probes and verdicts, and WHY (why its reference is right), are in
# exercises/<grade id>/judge.py, beside its mutants and alternatives; course.grading.judge.verdicts.load runs
# them after this file, in the notebook's order, in this module's namespace.
WHY = {}
