"""A tiny course for the grading machinery's own tests: one chapter, two exercises, hidden tests in judge.py.

Every threat test grades hostile submissions next to an honest classmate; the
threats do not depend on a chapter's content, so a chapter that runs in a
couple of seconds keeps those tests fast and independent of the real
chapters' edits. The course is real: ``nbgrader generate_assignment``, the
judge, the sandbox and the gradebook are the ones the course uses.
"""
from __future__ import annotations

import shutil
from pathlib import Path

from tools.nbtool import md, setup, solution, tests as graded_cell, write

CHAPTER = "00_toy"
REPO = Path(__file__).resolve().parents[1]

JUDGE = '''
import torch

from course import checks as C
from course.grading.judge.verdicts import Judge, visible

judge = Judge()


@judge.probe("test_scale")
def probe_scale(seed):
    g = torch.Generator().manual_seed(seed)
    xs = [torch.randn(n, generator=g) for n in (1, 4, 7)]
    ks = [float(k) for k in torch.randint(2, 9, (3,), generator=g)]
    return {"visible": scale(torch.tensor([1.0, 2.0]), 3.0), "cases": [scale(x, k) for x, k in zip(xs, ks)]}


@probe_scale.verdict
def _(got, ref):
    with visible():
        C.check_close(got["visible"], ref["visible"], "scale([1, 2], 3)")
    for i, (g, r) in enumerate(zip(got["cases"], ref["cases"])):
        C.check_close(g, r, f"scale on hidden input {i}", hint="multiply every element by k")


@judge.probe("test_count_positive")
def probe_count(seed):
    g = torch.Generator().manual_seed(seed)
    xs = [torch.randn(n, generator=g) for n in (3, 10, 50)]
    return {"visible": count_positive(torch.tensor([-1.0, 2.0, 3.0])), "cases": [count_positive(x) for x in xs]}


@probe_count.verdict
def _(got, ref):
    with visible():
        C.check_equal(got["visible"], ref["visible"], "count_positive([-1, 2, 3])")
    for i, (g, r) in enumerate(zip(got["cases"], ref["cases"])):
        C.check_equal(g, r, f"count_positive on hidden input {i}", hint="count the elements > 0, as an int")
'''
#: Why each reference solution is right (judge.py's ``WHY``, under the worked solutions of ``--solutions``).
WHY_SCALE = "Multiplying a tensor by a number scales every element, on any shape."
JUDGE += (f"\n\nWHY = {{'scale': {WHY_SCALE!r},\n       'count_positive': 'The mask t > 0 is True where an element is "
          f"positive; its sum, made an int, counts them.'}}\n")


def _hidden(gid: str) -> str:
    return ('### BEGIN HIDDEN TESTS\nfrom course.grading.inkernel import hidden_test; '
            f'hidden_test("{gid}")\n### END HIDDEN TESTS')


def make(dest: Path) -> Path:
    """Write the toy course (``nbgrader_config.py``, ``source/00_toy/``) into ``dest``; return ``dest``."""
    dest = Path(dest)
    (dest / "source" / CHAPTER).mkdir(parents=True, exist_ok=True)
    shutil.copy2(REPO / "nbgrader_config.py", dest / "nbgrader_config.py")
    (dest / "source" / CHAPTER / "judge.py").write_text(JUDGE)
    write(str(dest / "source" / CHAPTER / f"{CHAPTER}.ipynb"), [
        md("# A toy chapter\n\nTwo small exercises."),
        setup("import torch\nfrom course import checks as C"),
        md("## Exercise 1: `scale(x, k)` returns `x * k`."),
        solution("def scale(x, k):\n    ### BEGIN SOLUTION\n    return x * k\n    ### END SOLUTION", "scale"),
        graded_cell('"""scale multiplies by k."""\nC.check_close(scale(torch.tensor([1.0, 2.0]), 3.0), '
                    'torch.tensor([3.0, 6.0]), "scale([1, 2], 3)")\n' + _hidden("test_scale"), "test_scale", 2),
        md("## Exercise 2: `count_positive(t)` returns how many elements are > 0, as an `int`."),
        solution("def count_positive(t):\n    ### BEGIN SOLUTION\n    return int((t > 0).sum())\n"
                 "    ### END SOLUTION", "count_positive"),
        graded_cell('"""count_positive counts."""\nC.check_equal(count_positive(torch.tensor([-1.0, 2.0, 3.0])), 2, '
                    '"count_positive([-1, 2, 3])")\n' + _hidden("test_count_positive"), "test_count_positive", 3),
        md("The end."),
    ])
    return dest


#: Known mistakes of the toy chapter (``source/00_toy/exercises/<exercise>/mutants/`` of the toy course), for the diagnosis: name ->
#: (exercise, class of mistake, the cells it loses, the note a student reads, the answer).
MUTANTS = {
    "scale_adds": ("scale", "wrong-value", ["test_scale"], "Adding k is not scaling: every element is multiplied by k.",
                   "def scale(x, k):\n    return x + k\n"),
    "scale_stub": ("scale", "do-nothing", ["test_scale"], "The answer does not do the work the statement asks for yet.",
                   "def scale(x, k):\n    raise NotImplementedError\n"),
    "count_float": ("count_positive", "contract", ["test_count_positive"],
                    "The count must come back as a Python int, whatever type the computation gave you.",
                    "def count_positive(t):\n    return float((t > 0).sum())\n"),
    "count_all": ("count_positive", "wrong-value", ["test_count_positive"],
                  "Counting every element is not counting the positive ones.",
                  "def count_positive(t):\n    return t.numel()\n"),
}


def write_mutants(dest: Path) -> Path:
    """Write :data:`MUTANTS` into the toy course at ``dest`` (each in ``source/00_toy/exercises/<exercise>/mutants/``);
    return the chapter's exercises folder."""
    folder = Path(dest) / "source" / CHAPTER / "exercises"
    for name, (cell, kind, fails, note, source) in MUTANTS.items():
        (folder / cell / "mutants").mkdir(parents=True, exist_ok=True)
        (folder / cell / "mutants" / f"{name}.py").write_text(f'"""{note}"""\nCELL = {cell!r}\nKIND = {kind!r}\nNOTE = {note!r}\n'
                                           f'FAILS = {fails!r}\nSOURCE = {source!r}\n')
    return folder


def make_profiles(dest: Path) -> Path:
    """Write :data:`MUTANTS` into the toy course at ``dest`` and compute their profiles there (``python -m
    course.grading profiles``, one seed), as an instructor does with ``make profiles``; return the profiles' file."""
    import subprocess
    import sys

    from course.grading.nbgrader import wrapper as nbgrader_io

    folder = write_mutants(dest)
    proc = subprocess.run([sys.executable, "-m", "course.grading", "profiles", CHAPTER, "--seeds", "1", "--course",
                           str(dest)], cwd=REPO, env=nbgrader_io.env(), capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        raise RuntimeError(proc.stdout[-3000:] + proc.stderr[-3000:])
    return folder / "profiles.json"
