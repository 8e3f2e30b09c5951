"""Hidden tests, written as probe + verdict, judged outside the student's kernel.

A chapter's hidden tests live in ``source/<chapter>/judge.py``, beside the
source notebook. That file is never released (``nbgrader_config.py`` ignores
it), never mounted in a student's sandbox, and never part of the ``course``
package. One entry per grade cell::

    from course import checks as C
    from course.grading.judge import Judge, visible

    judge = Judge()

    @judge.probe("test_double_values")          # the grade cell's grade_id
    def probe_double(seed):
        # Runs in the notebook's namespace: the student's (in the sandbox) and
        # the reference solution's (in the reference worker). Build every input
        # before the first call into the student's code, and return plain data.
        g = torch.Generator().manual_seed(seed)
        xs = [torch.randn(n, generator=g) for n in (1, 5)]
        return {"visible": double(torch.ones(2)), "cases": [double(x) for x in xs]}

    @probe_double.verdict
    def _(got, ref):
        # Runs in the judge, on plain data: ``got`` from the student, ``ref``
        # from the reference solution, both from the same probe and seed.
        with visible():                          # the notebook's own example
            C.check_close(got["visible"], ref["visible"], "double(ones(2))")
        for i, (g, r) in enumerate(zip(got["cases"], ref["cases"])):
            C.check_close(g, r, f"case {i}", hint="...")

Rules for probes: the function's body is sent to the worker as source text
and runs there with the notebook's globals (so it may use ``torch``, the
locked cells' helpers and the student's names, but none of ``judge.py``'s
own globals: import what you need inside, or mark helpers ``@judge.shared``).
It receives the seed (torch, NumPy and ``random`` are also seeded with it
just before the call) and returns plain data (see
:mod:`course.grading.wire`). Anything it returns is untrusted.

Rules for verdicts: use :mod:`course.checks`; raise ``CheckFailed`` with a
message that teaches. Wrap the checks of the notebook's visible example in
``with visible():`` so that a kernel that reported that visible test as
passed, while the judge fails the same example, is flagged as possible
tampering. Every sentence of an exercise's statement is checked by some
verdict: keep the clause -> test table as a comment above each exercise.
"""
from __future__ import annotations

import ast
import hashlib
import importlib.util
import re
import sys
import textwrap
import traceback
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from course.grading.text import printable
from course.grading.worker import ProbeCode


class JudgeError(RuntimeError):
    """A problem with the hidden tests themselves (not the student's fault): grading stops."""


@contextmanager
def visible():
    """Mark checks of the notebook's visible example: a failure inside is tagged ``visible``."""
    from course.checks import CheckFailed

    try:
        yield
    except CheckFailed as err:
        err.visible = True
        raise


@dataclass
class Probe:
    """One grade cell's hidden test: a probe (runs with the notebook) and a verdict (runs in the judge)."""

    test: str
    fn: Callable
    source: str
    check: Callable | None = None
    seconds: float | None = None  # a time limit of its own (a probe that compiles), else the grader's probe_seconds

    def verdict(self, fn: Callable) -> Callable:
        """Decorator: register ``fn(got, ref)`` as this probe's verdict."""
        self.check = fn
        return fn

    @property
    def name(self) -> str:
        return self.fn.__name__


def _def_source(fn: Callable) -> str:
    """The ``def`` statement of a module-level function, without its decorators."""
    import inspect

    src = textwrap.dedent(inspect.getsource(fn))
    tree = ast.parse(src)
    node = tree.body[0]
    if not isinstance(node, ast.FunctionDef):
        raise JudgeError(f"{fn.__name__}: a probe must be a plain `def` function")
    lines = src.splitlines()
    return "\n".join(lines[node.lineno - 1:node.end_lineno]) + "\n"


@dataclass
class Judge:
    """The hidden tests of one chapter: ``{grade_id: Probe}`` plus helper functions shipped with every probe."""

    probes: dict[str, Probe] = field(default_factory=dict)
    shared_sources: list[str] = field(default_factory=list)

    def probe(self, test: str, seconds: float | None = None) -> Callable[[Callable], Probe]:
        """Decorator: register the probe of grade cell ``test`` (``seconds``: its own time limit, for a probe
        that compiles; otherwise the grader's ``probe_seconds``)."""
        def register(fn: Callable) -> Probe:
            if test in self.probes:
                raise JudgeError(f"two probes for grade cell {test!r}")
            code = fn.__code__
            if code.co_freevars:
                raise JudgeError(f"probe {fn.__name__} uses names from an enclosing function "
                                 f"({', '.join(code.co_freevars)}); probes run in the notebook's namespace")
            p = Probe(test=test, fn=fn, source=_def_source(fn), seconds=seconds)
            self.probes[test] = p
            return p
        return register

    def shared(self, fn: Callable) -> Callable:
        """Decorator: send this helper function's source along with every probe."""
        self.shared_sources.append(_def_source(fn))
        return fn

    def code(self, test: str) -> ProbeCode:
        """The probe of ``test`` as the worker receives it."""
        p = self.probes[test]
        return ProbeCode(test=test, name=p.name, source="\n".join(self.shared_sources + [p.source]), seconds=p.seconds)

    def codes(self, tests: list[str] | None = None) -> list[ProbeCode]:
        """All probes (or those of ``tests``), in registration order."""
        return [self.code(t) for t in (tests if tests is not None else list(self.probes))]

    def fingerprint(self) -> str:
        """A hash of every probe's code (part of the reference cache key)."""
        h = hashlib.sha256()
        for c in self.codes():
            h.update(c.test.encode() + b"\0" + c.source.encode() + b"\0")
        return h.hexdigest()[:16]


def judge_path(chapter: str, root: Path) -> Path:
    """Where a chapter's hidden tests live: ``source/<chapter>/judge.py``."""
    return Path(root) / "source" / chapter / "judge.py"


def load(chapter: str, root: Path) -> Judge:
    """Import ``source/<chapter>/judge.py`` and return its :class:`Judge` (raise :class:`JudgeError` if absent)."""
    path = judge_path(chapter, root)
    if not path.is_file():
        raise JudgeError(f"{path} does not exist: every chapter needs its hidden tests in a judge file")
    name = f"_course_judge_{re.sub(r'[^0-9A-Za-z_]', '_', chapter)}_{hashlib.sha1(str(path).encode()).hexdigest()[:8]}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except JudgeError:
        raise
    except Exception as err:  # noqa: BLE001
        raise JudgeError(f"{path} failed to import: {type(err).__name__}: {err}") from err
    judges = [v for v in vars(module).values() if isinstance(v, Judge)]
    if len(judges) != 1:
        raise JudgeError(f"{path} must define exactly one Judge() (found {len(judges)})")
    j = judges[0]
    missing = [t for t, p in j.probes.items() if p.check is None]
    if missing:
        raise JudgeError(f"{path}: probes without a verdict: {missing}")
    return j


@dataclass
class Verdict:
    """The judge's decision on one grade cell."""

    test: str
    passed: bool
    message: str = ""
    visible_failed: bool = False
    kind: str = "pass"  # "pass", "check", "probe" (the probe failed in the worker), "form", "missing"
    detail: str = ""  # for the instructor only (e.g. a verdict's own traceback)


def decide(probe: Probe, got: dict | None, ref: dict) -> Verdict:
    """Compare one probe's result from the student (``got``) with the reference's (``ref``)."""
    if not ref.get("ok"):
        raise JudgeError(f"the reference solution fails the probe of {probe.test}: {ref.get('error')}\n"
                         f"{ref.get('where', '')}")
    v = _decide(probe, got, ref)
    v.message = printable(v.message, 1500)  # it quotes the student's values and errors: printable and capped
    return v


def _decide(probe: Probe, got: dict | None, ref: dict) -> Verdict:
    from course.checks import CheckFailed

    if got is None:
        return Verdict(probe.test, False, "The grader did not get a result for this test.", kind="missing")
    if not got.get("ok"):
        where = got.get("where", "")
        msg = f"When the grader ran your code on new inputs: {got.get('error', 'it failed')}"
        if where:
            msg += "\n  " + where.replace("\n", "\n  ")
        return Verdict(probe.test, False, msg, kind="probe")
    try:
        probe.check(got.get("value"), ref.get("value"))
    except CheckFailed as err:
        return Verdict(probe.test, False, str(err), visible_failed=bool(getattr(err, "visible", False)), kind="check")
    except Exception as err:  # noqa: BLE001 - malformed data from the student (or a verdict bug)
        return Verdict(probe.test, False,
                       f"What your code returned does not have the form the exercise asks for "
                       f"({type(err).__name__}: {str(err)[:200]}). Check the return type in the statement.",
                       kind="form", detail=traceback.format_exc(limit=4))
    return Verdict(probe.test, True)


def check_coverage(judge: Judge, graded: list[str], chapter: str) -> None:
    """Raise :class:`JudgeError` unless every grade cell has exactly one probe and every probe a grade cell."""
    missing = [g for g in graded if g not in judge.probes]
    extra = [t for t in judge.probes if t not in graded]
    if missing or extra:
        raise JudgeError(f"{chapter}: grade cells without a probe: {missing}; probes without a grade cell: {extra}")
