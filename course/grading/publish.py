"""The student repository: ``python -m course.grading publish DEST`` (``make publish DEST=...``).

The full repository is the instructor's: it holds the reference solutions
(``source/``), every chapter's hidden tests (``source/*/judge.py``), the known
answers (``tests/mutants``, ``tests/alternatives``) and the grading machinery.
A student who clones it to run ``make lab`` would have all of that in the lab's
terminal. This command writes what a student may see, and nothing else:

* the release notebooks (``release/``) and the landing page (``index.ipynb``);
* the student-side ``course`` helpers (every module but ``course/grading/``);
* a ``pyproject.toml`` and ``environment.yml`` with the same pins, a
  ``postBuild`` for Binder, a ``Makefile`` whose ``make lab`` sets everything up
  and opens the course, and a short README.

:func:`check` then proves it: no line that exists only inside a solution or
hidden-test region of a source notebook, no probe or verdict, no ``judge.py``,
no ``source/``, no ``course/grading/``, no mutant. The instructor pushes DEST to
the class's public repository (and the Binder badge points there).
"""
from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

STUDENT_README = """# PyTorch Internals: the student's copy

```bash
make lab     # set everything up (a .venv with the course's pinned stack), then open the course in JupyterLab
```

Linux with Python 3.11 and `make`. The first run installs the stack (a few minutes: torch is large); later
runs start in seconds. `make lab` opens `my_work/index.ipynb`, the landing page: your own copy of every
chapter lives in `my_work/` (git-ignored), and regenerating or updating this repository never overwrites it.

Each chapter runs on a CPU. Write your code where it says `# YOUR CODE HERE`, run the test cell below it, and
read the message if it fails; the grader adds hidden tests on inputs you have not seen. In a class, the
*Assignments* tab fetches a chapter into `my_work/<chapter>/` and submits that same copy back (save first:
Submit hands in the file on disk, and refuses a notebook you ran after its last save). On one machine it uses
the exchange `~/.local/share/pytorch-internals/exchange`, the same as your instructor's repository there
(`COURSE_EXCHANGE=/path make lab` uses another; on a JupyterHub, the hub's).

[![Binder](https://mybinder.org/badge_logo.svg)](https://mybinder.org/v2/gh/OWNER/REPO/main?urlpath=lab/tree/my_work/index.ipynb)

**On Binder your edits vanish when the session ends**: use *File → Download* to keep them.

This repository was generated from the course's instructor repository by `make publish`; it holds the
student notebooks and helpers only.
"""

STUDENT_MAKEFILE = """# The student's copy of PyTorch Internals.
#   make lab    set up .venv, then open JupyterLab on my_work/ (your own copy of the chapters)
SHELL := /bin/bash
ifndef PYTHON
PYTHON := $(shell command -v python3.11 || command -v python3)
endif
VENV := .venv
BIN := $(CURDIR)/$(VENV)/bin
STAMP := $(VENV)/.installed
export PATH := $(BIN):$(PATH)
export HF_HUB_OFFLINE := 1
.PHONY: setup lab
setup: $(STAMP)
$(STAMP): pyproject.toml
\t@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
\t$(BIN)/python -m pip install --quiet --disable-pip-version-check -e .
\t@for ext in assignment_list validate_assignment; do \\
\t  $(BIN)/jupyter server extension enable --sys-prefix nbgrader.server_extensions.$$ext >/dev/null 2>&1; done
\t@$(BIN)/jupyter labextension enable @jupyter/nbgrader >/dev/null 2>&1 || true
\t@touch $(STAMP)
lab: setup
\t$(BIN)/python -m course.lab serve student "$(CURDIR)" $(LAB_ARGS)
"""

STUDENT_POSTBUILD = """#!/usr/bin/env bash
# Binder, after environment.yml: install the course helpers, switch nbgrader's student extensions on, and make
# the student's copy (my_work/, with the landing page) that the badge's urlpath opens.
set -euo pipefail
pip install --no-deps -e .
for ext in assignment_list validate_assignment; do
  jupyter server extension enable --sys-prefix "nbgrader.server_extensions.$ext"
done
jupyter labextension enable @jupyter/nbgrader
python -m course.lab student .
mkdir -p "${HOME}/.jupyter"
cp -r .student/jupyter/. "${HOME}/.jupyter/"
"""

GITIGNORE = ".venv/\n__pycache__/\n*.pyc\n.ipynb_checkpoints/\n*.egg-info/\nmy_work/\n.student/\n.exchange/\n.progress/\n"


def student_pyproject(text: str) -> str:
    """The instructor's ``pyproject.toml`` for students: the same pins, the helpers only, no test extras."""
    text = re.sub(r"\[project\.optional-dependencies\].*?(?=\n\[)", "", text, flags=re.S)
    text = re.sub(r'packages = \[[^\]]*\]', 'packages = ["course"]', text)
    text = re.sub(r"\[tool\.pytest\.ini_options\].*", "", text, flags=re.S)
    return text.rstrip() + "\n"


def publish(dest: Path, root: Path = REPO, force: bool = False) -> Path:
    """Write the student repository into ``dest``; return it."""
    from course import lab

    dest = Path(dest).resolve()
    if dest.exists():
        if not force:
            raise FileExistsError(f"{dest} exists (pass --force to replace it)")
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    shutil.copytree(root / "release", dest / "release", ignore=shutil.ignore_patterns(".ipynb_checkpoints", "judge.py"))
    shutil.copytree(root / "course", dest / "course",
                    ignore=shutil.ignore_patterns("grading", "__pycache__", "*.pyc"))
    (dest / "pyproject.toml").write_text(student_pyproject((root / "pyproject.toml").read_text()))
    shutil.copy2(root / "environment.yml", dest / "environment.yml")
    (dest / "postBuild").write_text(STUDENT_POSTBUILD)
    (dest / "postBuild").chmod(0o755)
    (dest / "Makefile").write_text(STUDENT_MAKEFILE)
    (dest / "README.md").write_text(STUDENT_README)
    (dest / ".gitignore").write_text(GITIGNORE)
    lab.write_index(root, dest / "index.ipynb")
    return dest


def _regions(root: Path) -> tuple[set[str], list[list[str]]]:
    """Lines that exist only inside a solution or hidden-test region of some source notebook, and each region's
    lines (stripped, blank lines dropped)."""
    secret, public, regions = set(), set(), []
    for nb_path in sorted((root / "source").glob("*/*.ipynb")):
        for cell in json.loads(nb_path.read_text())["cells"]:
            inside = False
            text = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
            for line in text.splitlines():
                if re.match(r"\s*### BEGIN (SOLUTION|HIDDEN TESTS)", line):
                    inside = True
                    regions.append([])
                    continue
                if re.match(r"\s*### END (SOLUTION|HIDDEN TESTS)", line):
                    inside = False
                    continue
                (secret if inside else public).add(line.strip())
                if inside and line.strip():
                    regions[-1].append(line.strip())
    return {line for line in secret - public if len(line) > 3}, regions


def secret_lines(root: Path = REPO) -> set[str]:
    """Lines that exist only inside a solution or hidden-test region of some source notebook."""
    return _regions(root)[0]


def _windows(lines: list[str], n: int = 6) -> set[tuple[str, ...]]:
    lines = [line for line in lines if line]
    return {tuple(lines[i:i + n]) for i in range(len(lines) - n + 1)}


def check(dest: Path, root: Path = REPO) -> list[str]:
    """What in ``dest`` a student must not see (empty: nothing).

    A notebook may hold no line that exists only in a solution or hidden-test region; a helper module may hold
    no six consecutive lines of one (shorter runs are idioms that both share: a training step, a hook cleanup).
    """
    dest = Path(dest)
    problems = []
    for bad in ("source", "course/grading", "tests", "autograded", "submitted", "feedback", "gradebook.db",
                "nbgrader_config.py", ".judge", "benchmarks", "tools"):
        if (dest / bad).exists():
            problems.append(f"{bad} is in the student repository")
    secret, regions = _regions(root)
    solution_windows = set().union(*(_windows(r) for r in regions)) if regions else set()
    probes = re.compile(r"judge\.probe|def probe_|hidden_test\(")
    markers = re.compile(r"### BEGIN (SOLUTION|HIDDEN TESTS)")
    for p in sorted(dest.rglob("*")):
        if p.is_symlink():
            problems.append(f"{p.relative_to(dest)} is a symbolic link")
            continue
        if not p.is_file():
            continue
        if p.name == "judge.py":
            problems.append(f"{p.relative_to(dest)}: a judge file")
        try:
            text = p.read_text()
        except UnicodeDecodeError:
            continue
        if probes.search(text):
            problems.append(f"{p.relative_to(dest)}: holds a probe or a hidden test")
        if p.suffix == ".ipynb":
            nb = json.loads(text)
            lines = [line.strip() for c in nb["cells"] for line in
                     ("".join(c["source"]) if isinstance(c["source"], list) else c["source"]).splitlines()]
            if markers.search("\n".join(lines)):
                problems.append(f"{p.relative_to(dest)}: holds a solution or hidden-test region")
            leaked = sorted(set(lines) & secret)
            if leaked:
                problems.append(f"{p.relative_to(dest)}: {len(leaked)} solution line(s), e.g. {leaked[0][:80]!r}")
        else:
            shared = _windows([line.strip() for line in text.splitlines()]) & solution_windows
            if shared:
                problems.append(f"{p.relative_to(dest)}: {len(shared)} run(s) of six solution lines, e.g. "
                                f"{' / '.join(next(iter(shared)))[:120]!r}")
    return problems


def main(dest: Path, force: bool = False) -> int:
    out = publish(dest, force=force)
    problems = check(out)
    for line in problems:
        print("PROBLEM:", line)
    files = sum(1 for p in out.rglob("*") if p.is_file())
    size = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
    print(f"wrote the student repository to {out}: {files} files, {size / 2**20:.1f} MiB; "
          f"{'NOT SAFE: see the problems above' if problems else 'no solution line, probe or hidden test in it'}")
    if not problems and not (out / ".git").exists():
        subprocess.run(["git", "init", "-q", str(out)], check=False)
    return 1 if problems else 0
