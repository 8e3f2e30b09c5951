"""Hidden tests of Chapter 3, judged outside the student's kernel (instructor side: never released).

Each grade cell of 03_torchscript.ipynb has one probe here (it runs with the
notebook's names, in the student's sandbox and in the reference worker) and
one verdict (it runs in the judge, on the plain data both sent back). ``got``
is the student's data, ``ref`` the reference solution's. Expectations that do
not come from the student's code are read from ``ref`` (computed by the same
probe in the reference run) or recomputed here from plain data.

Scripted, traced, exported and frozen objects cannot cross to the judge: the
probes run them on seeded inputs and return outputs, type names, schema and
graph facts (strings), and, for inputs that should be refused, the name of
the exception raised (``None`` when the call went through).

TorchScript compiles from source text. Modules that the student's code will
script are therefore built by the shared helper ``judge_module``, which puts
their source into ``linecache`` under a private file name first (as IPython
does for notebook cells); a class defined directly inside a probe could not be
scripted ("could not get source code").
"""
import torch

from course import checks as C
from course.grading.judge import Judge, visible

judge = Judge()


# --- helpers shipped with every probe ----------------------------------------------------------------

@judge.shared
def judge_attempt(fn):
    """Call fn(); return {"ok": True, "out": result} or {"ok": False, "error": "Type: first line"}."""
    try:
        return {"ok": True, "out": fn()}
    except Exception as err:  # noqa: BLE001 - the student's code may raise anything
        first = str(err).strip().splitlines()[0][:300] if str(err).strip() else ""
        return {"ok": False, "error": f"{type(err).__name__}: {first}"}


@judge.shared
def judge_module(source, name, tag):
    """Define class `name` from `source` with its text in linecache (so torch.jit.script can read it)."""
    import linecache

    import torch as _torch
    from torch import nn as _nn
    from typing import Final as _Final, Optional as _Optional
    filename = f"<judge-{tag}-{name}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace = {"torch": _torch, "nn": _nn, "Tensor": _torch.Tensor, "Optional": _Optional, "Final": _Final,
                 "__name__": "__judge__"}
    exec(compile(source, filename, "exec"), namespace)  # noqa: S102 - the judge's own code
    return namespace[name]


def _out(record, what):
    """The output of a judge_attempt record, or a failure that says what raised."""
    if type(record) is not dict or record.get("ok") is not True:
        error = record.get("error", "no result") if type(record) is dict else "no result"
        C.check_true(False, f"{what} raised {error}")
    return record["out"]


def _nullcontext():
    from contextlib import nullcontext
    return nullcontext()


# Each exercise's probes and verdicts, and WHY (why its reference is right), are in
# exercises/<grade id>/judge.py, beside its mutants and alternatives; course.grading.judge.verdicts.load runs
# them after this file, in the notebook's order, in this module's namespace.
WHY = {}
