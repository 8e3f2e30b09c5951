"""Hidden tests, written as probe + verdict, judged outside the student's kernel.

A chapter's hidden tests live beside the source notebook: ``source/<chapter>/judge.py`` (the shared part:
imports, helpers, the :class:`Judge`) and one ``exercises/<grade id>/judge.py`` per exercise, which
:func:`load` runs in the same namespace, in the notebook's order. None of them is ever released
(``nbgrader_config.py`` ignores them), mounted in a student's sandbox, or part of the ``course`` package. One
entry per grade cell::

    from course import checks as C
    from course.grading.judge.verdicts import Judge, visible

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
:mod:`course.grading.run.wire`). Anything it returns is untrusted.

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
import os
import re
import sys
import textwrap
import traceback
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from course.grading import paths
from course.grading.text import printable
from course.grading.run.worker import ProbeCode


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
    #: dict keys (at any depth) the structure check leaves to the verdict (whether present, and their values):
    #: diagnostics whose form depends on the answer (the names of the collectives a student's code issued), or
    #: what a reference run leaves out (Chapter 3's package probe skips the compile there)
    free: tuple[str, ...] = ()

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
    #: {exercise: why its reference solution is right}: judge.py's module-level ``WHY``, shown under the worked
    #: solutions (``grade-class --solutions``)
    why: dict[str, str] = field(default_factory=dict)

    def probe(self, test: str, seconds: float | None = None,
              free: tuple[str, ...] = ()) -> Callable[[Callable], Probe]:
        """Decorator: register the probe of grade cell ``test`` (``seconds``: its own time limit, for a probe
        that compiles; otherwise the grader's ``probe_seconds``; ``free``: record keys whose values the
        structure check leaves to the verdict, see :class:`Probe`)."""
        def register(fn: Callable) -> Probe:
            if test in self.probes:
                raise JudgeError(f"two probes for grade cell {test!r}")
            code = fn.__code__
            if code.co_freevars:
                raise JudgeError(f"probe {fn.__name__} uses names from an enclosing function "
                                 f"({', '.join(code.co_freevars)}); probes run in the notebook's namespace")
            p = Probe(test=test, fn=fn, source=_def_source(fn), seconds=seconds, free=tuple(free))
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
    """Where a chapter's shared judge code lives: ``source/<chapter>/judge.py`` (imports, helpers, the Judge)."""
    return Path(root) / "source" / chapter / "judge.py"


def exercises_dir(chapter: str, root: Path) -> Path:
    """Where a chapter's exercises live, one folder each, named by the solution cell's grade id:
    ``source/<chapter>/exercises/<grade id>/`` holds ``judge.py`` (the exercise's probes, verdicts and WHY),
    ``mutants/`` and ``alternatives/`` (its known answers, with their teaching notes)."""
    return Path(root) / "source" / chapter / "exercises"


def exercise_order(chapter: str, root: Path) -> list[str]:
    """The exercise folders of a chapter, in the order of the source notebook's solution cells (then any other,
    by name)."""
    folder = exercises_dir(chapter, root)
    if not folder.is_dir():
        return []
    present = sorted(p.name for p in folder.iterdir() if p.is_dir() and not p.name.startswith((".", "_")))
    notebooks = paths.source_notebooks(root, chapter)
    order: list[str] = []
    if len(notebooks) == 1:
        import nbformat
        from nbgrader.utils import is_solution

        from course.grading.records import grade_id
        order = [grade_id(c) for c in nbformat.read(notebooks[0], as_version=4).cells if is_solution(c)]
    return [g for g in dict.fromkeys(order) if g in present] + [g for g in present if g not in order]


def judge_files(chapter: str, root: Path) -> list[Path]:
    """Every file of a chapter's hidden tests, in the order :func:`load` runs them."""
    return [judge_path(chapter, root)] + [p for g in exercise_order(chapter, root)
                                          if (p := exercises_dir(chapter, root) / g / "judge.py").is_file()]


def load(chapter: str, root: Path) -> Judge:
    """Import ``source/<chapter>/judge.py``, then run each ``exercises/<grade id>/judge.py`` in its namespace (in
    the notebook's order), and return the :class:`Judge` (raise :class:`JudgeError` if absent)."""
    path = judge_path(chapter, root)
    if not path.is_file():
        raise JudgeError(f"{path} does not exist: every chapter needs its hidden tests in a judge file")
    name = f"_course_judge_{re.sub(r'[^0-9A-Za-z_]', '_', chapter)}_{hashlib.sha1(str(path).encode()).hexdigest()[:8]}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    current = path
    try:
        spec.loader.exec_module(module)
        for current in judge_files(chapter, root)[1:]:
            # compiled under its own file name: inspect reads a probe's source from it, tracebacks name it
            exec(compile(current.read_bytes(), str(current), "exec"), vars(module))  # noqa: S102 - the course's code
    except JudgeError:
        raise
    except Exception as err:  # noqa: BLE001
        raise JudgeError(f"{current} failed to import: {type(err).__name__}: {err}") from err
    judges = [v for v in vars(module).values() if isinstance(v, Judge)]
    if len(judges) != 1:
        raise JudgeError(f"{path} must define exactly one Judge() (found {len(judges)})")
    j = judges[0]
    j.why = {str(k): str(v) for k, v in dict(getattr(module, "WHY", {}) or {}).items()}
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
    #: which check failed, the same for every seed and every value: "check:<the verdict's frames in judge.py, as
    #: function+line offset>@<the failing line of course.checks>", "probe:<the exception type the student's code
    #: raised>", "form" or "missing" (course.grading.judge.diagnosis matches these to known mistakes)
    code: str = ""


def decide(probe: Probe, got: dict | None, ref: dict) -> Verdict:
    """Compare one probe's result from the student (``got``) with the reference's (``ref``).

    Before the verdict's answer counts, the whole answer's structure is checked against the reference's
    (:func:`structure_problem`): a record that is empty, truncated or of another shape fails, whatever the
    verdict's own loops make of it. What the student's process sent as text (strings in the answer, an
    exception's message) is shown only where the judge can vouch for it (:func:`_unquote_student_text`).
    """
    if not ref.get("ok"):
        raise JudgeError(f"the reference solution fails the probe of {probe.test}: {ref.get('error')}\n"
                         f"{ref.get('where', '')}")
    v = _decide(probe, got, ref)
    if not v.passed and got is not None and got.get("ok"):
        v.message = _unquote_student_text(v.message, got.get("value"), ref.get("value"))
    v.message = _without_probe_source(v.message, probe)
    v.message = printable(v.message, 1500)  # it quotes the student's values and errors: printable and capped
    return v


_CONTAINERS = (list, tuple, dict, set, frozenset)
STRUCTURE_ITEMS = 200_000  # the wire's own cap on items in a result


def _kind(x) -> str:
    """A short, judge-made description of a value's form (never its contents)."""
    import torch

    t = type(x)
    if t in (list, tuple):
        return f"a {t.__name__} of {len(x)} item{'s' if len(x) != 1 else ''}"
    if t is dict:
        return f"a dict of {len(x)} key{'s' if len(x) != 1 else ''}"
    if t in (set, frozenset):
        return f"a set of {len(x)} item{'s' if len(x) != 1 else ''}"
    if t is torch.Tensor:
        return f"a tensor of shape {tuple(x.shape)}"
    if x is None:
        return "None"
    name = getattr(t, "__name__", "object")
    if name == "Opaque":
        return "an object that is not plain data"
    return f"a value of type {name if re.fullmatch(r'[A-Za-z_][A-Za-z0-9_.]{0,40}', name) else 'object'}"


def _step(path: str, key) -> str:
    if type(key) is int:
        return f"{path}[{key}]"
    text = key if type(key) is str else repr(key)
    return f"{path}[{printable(text, 40)!r}]" if re.fullmatch(r"[\w .()+-]{1,40}", str(text)) else f"{path}[...]"


def structure_problem(got, ref, free: tuple[str, ...] = ()) -> str:
    """Why ``got`` does not have the structure of ``ref`` ("" if it does), checked before any verdict counts.

    Containers must match all the way down: a dict has the reference's keys (no more, no fewer), a list or
    tuple (either, where the reference has one) its length, a set its size; a tensor or NumPy array has the
    reference's number of dimensions and is empty only where the reference's is (its exact shape is the
    verdict's to judge: a wrong shape is a wrong value, and a test of something else in the same record, the
    labels beside the images, must not fail for it); where the reference holds a plain value, no container
    stands in. Leaves are otherwise
    left to the verdict (an ``int`` for a ``float``, a tensor's dtype): it compares values and says what it
    expected. So a forged recorder that answers ``[]``, ``{}`` or truncated lists fails every test, even one
    whose verdict only loops over ``zip(got, ref)``.
    """
    import numpy as np
    import torch

    todo = [(got, ref, "your result")]
    seen = 0
    while todo:
        g, r, path = todo.pop()
        seen += 1
        if seen > STRUCTURE_ITEMS:
            return f"{path}: more items than the grader compares"
        tr, tg = type(r), type(g)
        if tr is dict:
            if tg is not dict:
                return f"{path}: expected a dict, got {_kind(g)}"
            if set(g) - set(free) != set(r) - set(free):
                missing = sum(1 for k in r if k not in g)
                extra = sum(1 for k in g if k not in r)
                return (f"{path}: a dict without the keys the grader expected ({missing} missing, {extra} "
                        f"unexpected)")
            todo.extend((g[k], r[k], _step(path, k)) for k in r if k not in free)
        elif tr in (list, tuple):
            if tg not in (list, tuple):
                return f"{path}: expected a {tr.__name__} of {len(r)} items, got {_kind(g)}"
            if len(g) != len(r):
                return f"{path}: expected a {tr.__name__} of {len(r)} items, got {_kind(g)}"
            todo.extend((gi, ri, _step(path, i)) for i, (gi, ri) in enumerate(zip(g, r)))
        elif tr in (set, frozenset):
            if tg not in (set, frozenset) or len(g) != len(r):
                return f"{path}: expected a set of {len(r)} items, got {_kind(g)}"
        elif tr is torch.Tensor:
            if tg is not torch.Tensor:
                if tg in _CONTAINERS:
                    return f"{path}: expected a tensor, got {_kind(g)}"
            elif g.dim() != r.dim() or (g.numel() == 0) != (r.numel() == 0):
                return f"{path}: expected a tensor of {r.dim()} dimension(s){'' if r.numel() else ', empty'}, " \
                       f"got shape {tuple(g.shape)}"
        elif tr is np.ndarray:
            if tg is np.ndarray and (g.ndim != r.ndim or (g.size == 0) != (r.size == 0)):
                return f"{path}: expected an array of {r.ndim} dimension(s), got shape {g.shape}"
            if tg in _CONTAINERS:
                return f"{path}: expected an array, got {_kind(g)}"
        elif tg in _CONTAINERS:
            return f"{path}: expected {_kind(r)}, got {_kind(g)}"
    return ""


def _student_strings(value, ref) -> list[str]:
    """The texts in a student's answer that the reference does not hold (what the student's process wrote)."""
    from course.checks import Opaque

    def strings(x, limit=STRUCTURE_ITEMS):
        out, todo = [], [x]
        while todo and len(out) < limit:
            y = todo.pop()
            t = type(y)
            if t is str:
                out.append(y)
            elif t is bytes:
                out.append(y.decode("latin-1"))
            elif t is Opaque:
                out += [y.type_name, y.text]
            elif t in (list, tuple, set, frozenset):
                todo.extend(y)
            elif t is dict:
                todo.extend(y.keys())
                todo.extend(y.values())
        return out
    known = set(strings(ref))
    return sorted({s for s in strings(value) if s not in known and len(s.strip()) >= 3}, key=len, reverse=True)


HIDDEN_TEXT = "[text your code produced while the hidden tests ran: not shown]"


def _unquote_student_text(message: str, value, ref) -> str:
    """``message`` with every text the student's answer carried (and the reference does not) cut out.

    A verdict may quote what came back (``got {names!r}``); during the hidden tests the student's code can
    read the probe that calls it, so such a text could carry the probe's source or inputs out. The
    verdict's own words stay; the quoted text becomes :data:`HIDDEN_TEXT`.
    """
    if not message:
        return message
    for s in _student_strings(value, ref)[:2000]:
        forms = {repr(s), s if len(s) >= 8 else None}
        for form in forms:
            if not form:
                continue
            if form in message:
                message = message.replace(form, HIDDEN_TEXT)
            else:
                head = form[:24]  # a quote cut short by the verdict (``{x!r:.300}``): cut to the line's end
                if len(head) >= 12 and head in message:
                    i = message.index(head)
                    j = message.find("\n", i)
                    message = message[:i] + HIDDEN_TEXT + ("" if j < 0 else message[j:])
    return message


def _without_probe_source(message: str, probe: "Probe") -> str:
    """Replace ``message`` by a fixed text if it quotes a line of the probe's code (sent to the student's
    process, so a hostile answer can read it and try to carry it out through any text the judge shows)."""
    for line in probe.source.splitlines():
        line = line.strip()
        if len(line) >= 12 and line in message:
            return ("This test failed, and what your code sent back quoted the grader's own test code, so the "
                    "message is not shown. Run your function on your own examples in the notebook to see what "
                    "it does.")
    return message


def _decide(probe: Probe, got: dict | None, ref: dict) -> Verdict:
    from course.checks import CheckFailed

    if got is None:
        return Verdict(probe.test, False, "The grader did not get a result for this test.", kind="missing",
                       code="missing")
    if not got.get("ok"):
        where = got.get("where", "")
        msg = f"When the grader ran your code on new inputs: {got.get('error', 'it failed')}"
        if where:
            msg += "\n  " + where.replace("\n", "\n  ")
        return Verdict(probe.test, False, msg, kind="probe", code=_probe_code(got.get("error")))
    # The structure first: an answer of another form never passes, whatever the verdict's loops make of it.
    # The verdict still runs on it, so that a wrong answer hears the verdict's own words (its hint), which
    # teach more than a description of the form.
    shape = structure_problem(got.get("value"), ref.get("value"), probe.free)
    form = (f"What your code returned does not have the form the exercise asks for ({shape}). "
            "Check the return type in the statement.") if shape else ""
    try:
        probe.check(got.get("value"), ref.get("value"))
    except CheckFailed as err:
        return Verdict(probe.test, False, str(err), visible_failed=bool(getattr(err, "visible", False)), kind="check",
                       code=_check_code(err, probe))
    except Exception as err:  # noqa: BLE001 - malformed data from the student (or a verdict bug)
        # Only the exception's type: its text is made of the student's data, which the student's code controls.
        return Verdict(probe.test, False,
                       form or f"What your code returned does not have the form the exercise asks for (the grader's "
                               f"check stopped with {type(err).__name__}). Check the return type in the statement.",
                       kind="form", detail=_trace(err), code="form")
    if shape:
        return Verdict(probe.test, False, form, kind="form", detail="structure: " + shape, code="form")
    return Verdict(probe.test, True)


_EXC_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,59}")


def _probe_code(error) -> str:
    """A probe failure's code: the name of the exception the student's code raised (the leading identifier of the
    worker's error text, which the student's process wrote: only an identifier is kept)."""
    m = _EXC_NAME.match(error) if isinstance(error, str) else None
    return f"probe:{m.group(0)}" if m else "probe"


def _check_code(err: BaseException, probe: Probe) -> str:
    """Which check failed, and how: the frames of the chapter's judge files (its ``judge.py`` and its exercises'),
    innermost last, then the line of ``course.checks`` that failed (a wrong type, shape, dtype or value are
    different lines there), each as the function's name and the line's offset from the function's first line (so
    edits elsewhere do not move it, nor moving a function to another of the files)."""
    from course import checks

    frames, how, tb = [], "", err.__traceback__
    while tb is not None:
        code = tb.tb_frame.f_code
        where = f"{code.co_name}+{tb.tb_lineno - code.co_firstlineno}"
        if os.path.basename(code.co_filename) == "judge.py":
            frames.append(where)
        elif code.co_filename == checks.__file__ and code.co_name != "_fail":
            how = where
        tb = tb.tb_next
    return "check:" + ">".join(frames[-3:]) + (f"@{how}" if how else "")


def _trace(err: BaseException) -> str:
    """Where a verdict stopped, for the instructor: file, line and function of each frame, no source lines and
    no exception text (the report is kept beside the students' files)."""
    frames = traceback.extract_tb(err.__traceback__)[-4:]
    return "\n".join(f"{Path(f.filename).name}:{f.lineno} in {f.name}" for f in frames) + f"\n{type(err).__name__}"


def check_coverage(judge: Judge, graded: list[str], chapter: str) -> None:
    """Raise :class:`JudgeError` unless every grade cell has exactly one probe and every probe a grade cell."""
    missing = [g for g in graded if g not in judge.probes]
    extra = [t for t in judge.probes if t not in graded]
    if missing or extra:
        raise JudgeError(f"{chapter}: grade cells without a probe: {missing}; probes without a grade cell: {extra}")
