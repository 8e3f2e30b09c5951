"""Hidden tests of Chapter 6, judged outside the student's kernel (instructor side: never released).

Each grade cell of 06_torch_compile.ipynb has one probe here (it runs with the
notebook's names, in the student's sandbox and in the reference worker) and
one verdict (it runs in the judge, on the plain data both sent back). ``got``
is the student's data, ``ref`` the reference solution's; every expectation
that does not come from the student's code is read from ``ref``.

Probes reset Dynamo (``torch._dynamo.reset()``) before every case whose counts
they return, compile only with capture backends (``eager``, ``aot_eager`` or a
counting backend: no Inductor, so a cold cache costs nothing), and return
counts, strings, booleans and tensors. Inputs come from an explicit
``torch.Generator`` built before the first call into student code.
"""
import torch

from course import checks as C
from course.grading.judge import Judge, visible

judge = Judge()


@judge.shared
def _error_text(err):
    """'ExcType: first line of the message' (what a probe returns instead of an exception)."""
    text = str(err).strip().splitlines()
    return f"{type(err).__name__}: {text[0][:300] if text else ''}"


# Each exercise's probes and verdicts, and WHY (why its reference is right), are in
# exercises/<grade id>/judge.py, beside its mutants and alternatives; course.grading.judge.verdicts.load runs
# them after this file, in the notebook's order, in this module's namespace.
WHY = {}
