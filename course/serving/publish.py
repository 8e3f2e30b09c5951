"""The student repository: ``python -m course.grading publish DEST`` (``make publish DEST=...``).

The full repository is the instructor's: it holds the reference solutions
(``source/``), every chapter's hidden tests (``source/*/judge.py``), the known
answers (``source/*/exercises/*/mutants``, ``.../alternatives``) and the grading machinery.
A student who clones it to run ``make lab`` would have all of that in the lab's
terminal. This command writes what a student may see, and nothing else:

* the release notebooks (``release/``) and the landing page (``index.ipynb``);
* the student-side ``course`` helpers (every module but ``course/grading/`` and ``course/serving/``);
* a ``pyproject.toml`` with the same pins, the student lock
  (``requirements-student.lock``: every transitive dependency pinned, with
  hashes) that its ``Makefile`` installs from (``make lab`` sets everything up
  and opens the course), Binder's ``environment.yml`` with its lock
  (``requirements-binder.lock``: the student lock, CPU-only) and ``postBuild``,
  and a short README.

:func:`check` then proves it: no line that exists only inside a solution or
hidden-test region of a source notebook, no probe or verdict, no ``judge.py``,
no ``source/``, no ``course/grading/`` or ``course/serving/``, no mutant. DEST is then a git repository with
one new commit (a fixed author, ``git init -b main`` the first time; ``--force``
replaces everything but ``.git``, so its history and remote stay). The Binder
badge names ``--repo OWNER/NAME`` (``make publish REPO=...``), else the GitHub
repository of DEST's ``origin`` remote, else the one DEST's README already names. The instructor pushes DEST there.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

STUDENT_README = """# PyTorch Internals: the student's copy

```bash
make lab     # set everything up (a .venv from requirements-student.lock), then open the course in JupyterLab
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
# The stack from the lock alone (every transitive dependency pinned, with hashes; --no-deps: the lock is the
# resolution, pip resolves nothing), then the helpers without dependencies or build isolation (built with the
# locked setuptools).
$(STAMP): pyproject.toml requirements-student.lock
\t@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
\t$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps -r requirements-student.lock
\t$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps --no-build-isolation -e .
\t@for ext in assignment_list validate_assignment; do \\
\t  $(BIN)/jupyter server extension enable --sys-prefix nbgrader.server_extensions.$$ext >/dev/null 2>&1; done
\t@$(BIN)/jupyter labextension enable @jupyter/nbgrader >/dev/null 2>&1 || true
\t@touch $(STAMP)
lab: setup
\t$(BIN)/python -m course.lab serve student "$(CURDIR)" $(LAB_ARGS)
"""

STUDENT_POSTBUILD = """#!/usr/bin/env bash
# Binder, after environment.yml (which installs requirements-binder.lock): install the course helpers, switch
# nbgrader's student extensions on, and make the student's copy (my_work/, with the landing page) that the badge's
# urlpath opens.
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


# The locks (``make lock``): the student lock is uv's universal one (every platform, markers included), from
# pyproject.toml without extras; Binder's is written from it by :func:`binder_lock`.
STUDENT_LOCK = "requirements-student.lock"
BINDER_LOCK = "requirements-binder.lock"
CPU_INDEX = "https://download.pytorch.org/whl/cpu"
# What only torch's CUDA build needs (torch's own metadata asks for them on Linux only): not on Binder.
CUDA_ONLY = re.compile(r"^(nvidia-[a-z0-9-]+|cuda-[a-z0-9-]+|triton)$")
_PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;\\]+)")

BINDER_LOCK_HEADER = f"""# Binder's lock: environment.yml installs it (pip, with the PyTorch CPU index {CPU_INDEX}).
# Written by `make lock` from {STUDENT_LOCK} (course/serving/publish.py, binder_lock), never by hand:
# the same versions, without the packages only torch's CUDA build needs (nvidia-*, cuda-*, triton), and torch and
# torchvision as the +cpu builds of the same releases (no CUDA libraries: a small image). No hashes: pip checks
# hashes only when every line has them, and the +cpu wheels are other files than the ones the student lock hashes.
"""


def lock_pins(text: str) -> dict[str, str]:
    """``{normalized name: version}`` of the ``name==version`` lines of a requirements or lock file."""
    pins = {}
    for line in text.splitlines():
        m = _PIN.match(line)
        if m:
            pins[re.sub(r"[-_.]+", "-", m.group(1)).lower()] = m.group(2)
    return pins


def lock_markers(text: str) -> dict[str, str]:
    """``{normalized name: environment marker}`` of the ``name==version ; marker`` lines of a universal lock."""
    markers = {}
    for line in text.splitlines():
        m = _PIN.match(line)
        if m and ";" in line:
            marker = line.split(";", 1)[1].rstrip(" \\").strip()
            markers[re.sub(r"[-_.]+", "-", m.group(1)).lower()] = marker
    return markers


def binder_lock(student_lock: str) -> str:
    """Binder's lock from the student lock's text: its pins, CPU-only (see ``BINDER_LOCK_HEADER``). The student
    lock is universal: a line's environment marker (``appnope==... ; sys_platform == 'darwin'``) is kept, so pip on
    Binder's Linux skips what only macOS or Windows installs."""
    lines, markers = [], lock_markers(student_lock)
    for name, version in sorted(lock_pins(student_lock).items()):
        if CUDA_ONLY.match(name):
            continue
        if name in ("torch", "torchvision"):
            version = version.split("+")[0] + "+cpu"
        lines.append(f"{name}=={version}" + (f" ; {markers[name]}" if name in markers else ""))
    return BINDER_LOCK_HEADER + "\n".join(lines) + "\n"


def write_binder_lock(root: Path = REPO) -> Path:
    """Write ``requirements-binder.lock`` from ``requirements-student.lock`` (``make lock``); return its path."""
    out = root / BINDER_LOCK
    out.write_text(binder_lock((root / STUDENT_LOCK).read_text()))
    return out


PLACEHOLDER_REPO = "OWNER/REPO"
# The student repository's commits: one author, whoever publishes (and without a git identity configured).
AUTHOR = {"GIT_AUTHOR_NAME": "PyTorch Internals publish", "GIT_AUTHOR_EMAIL": "publish@pytorch-internals.invalid",
          "GIT_COMMITTER_NAME": "PyTorch Internals publish",
          "GIT_COMMITTER_EMAIL": "publish@pytorch-internals.invalid"}
_GITHUB = re.compile(r"^(?:https?://(?:[^@/]+@)?github\.com/|git@github\.com:|ssh://git@github\.com/)"
                     r"([A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+?)(?:\.git)?/?$")
_REPO = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")


def github_repo(url: str) -> str | None:
    """``owner/name`` of a GitHub remote URL (https, ssh or scp-like), or None."""
    m = _GITHUB.match(url.strip())
    return m.group(1) if m else None


def remote_repo(dest: Path) -> str | None:
    """``owner/name`` of DEST's ``origin`` remote when DEST is a git repository whose origin is on GitHub."""
    if not (Path(dest) / ".git").exists():
        return None
    proc = subprocess.run(["git", "-C", str(dest), "remote", "get-url", "origin"], capture_output=True, text=True)
    return github_repo(proc.stdout) if proc.returncode == 0 else None


def readme_repo(dest: Path) -> str | None:
    """``owner/name`` of the Binder badge in DEST's README from an earlier publish (None: none, or the
    placeholder)."""
    try:
        text = (Path(dest) / "README.md").read_text()
        m = re.search(r"mybinder\.org/v2/gh/([A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+)/main\?", text)
    except OSError:
        return None
    return m.group(1) if m and m.group(1) != PLACEHOLDER_REPO else None


def student_readme(repo: str | None) -> str:
    """The student repository's README, its Binder badge pointing at ``repo`` (``owner/name``)."""
    if repo is not None and not _REPO.match(repo):
        raise ValueError(f"--repo {repo!r}: expected OWNER/NAME, as in github.com/OWNER/NAME")
    return STUDENT_README.replace(f"/v2/gh/{PLACEHOLDER_REPO}/", f"/v2/gh/{repo or PLACEHOLDER_REPO}/")


def commit(dest: Path, message: str) -> str | None:
    """Commit everything in ``dest`` (``git init -b main`` first if needed) with the fixed author; return the new
    commit's id, or None when nothing changed since the last commit."""
    dest = Path(dest)
    env = {**os.environ, **AUTHOR}

    def git(*args: str, check: bool = False) -> subprocess.CompletedProcess:
        return subprocess.run(["git", "-C", str(dest), *args], env=env, capture_output=True, text=True, check=check)

    if not (dest / ".git").exists():
        git("init", "-q", "-b", "main", check=True)
    git("add", "--all", "--", ".", check=True)
    has_head = git("rev-parse", "--verify", "-q", "HEAD").returncode == 0
    if has_head and git("diff", "--cached", "--quiet").returncode == 0:
        return None
    git("commit", "-q", "--no-verify", "--no-gpg-sign", "-m", message, check=True)
    return git("rev-parse", "HEAD", check=True).stdout.strip()


def student_pyproject(text: str) -> str:
    """The instructor's ``pyproject.toml`` for students: the same pins, the helpers only, no test extras."""
    text = re.sub(r"\[project\.optional-dependencies\].*?(?=\n\[)", "", text, flags=re.S)
    text = re.sub(r'packages = \[[^\]]*\]', 'packages = ["course"]', text)
    text = re.sub(r"\[tool\.pytest\.ini_options\].*", "", text, flags=re.S)
    return text.rstrip() + "\n"


def publish(dest: Path, root: Path = REPO, force: bool = False, repo: str | None = None) -> Path:
    """Write the student repository into ``dest``; return it. ``repo`` (``owner/name``) is the Binder badge's
    repository (default: DEST's GitHub ``origin``, else the badge of DEST's README, else the placeholder)."""
    from course import lab

    dest = Path(dest).resolve()
    repo = repo or remote_repo(dest) or readme_repo(dest)
    readme = student_readme(repo)
    if dest.exists() and any(dest.iterdir()):
        if not force:
            raise FileExistsError(f"{dest} exists (pass --force to replace it)")
        for p in dest.iterdir():  # everything but .git: the repository's history and remote stay
            if p.name == ".git":
                continue
            if p.is_dir() and not p.is_symlink():
                shutil.rmtree(p)
            else:
                p.unlink()
    dest.mkdir(parents=True, exist_ok=True)
    shutil.copytree(root / "release", dest / "release",
                    ignore=shutil.ignore_patterns(".ipynb_checkpoints", "judge.py", "exercises", "profiles.json"))
    shutil.copytree(root / "course", dest / "course",
                    ignore=shutil.ignore_patterns("grading", "serving", "__pycache__", "*.pyc"))
    (dest / "pyproject.toml").write_text(student_pyproject((root / "pyproject.toml").read_text()))
    shutil.copy2(root / "environment.yml", dest / "environment.yml")
    for lock_file in (STUDENT_LOCK, BINDER_LOCK):
        shutil.copy2(root / lock_file, dest / lock_file)
    (dest / "postBuild").write_text(STUDENT_POSTBUILD)
    (dest / "postBuild").chmod(0o755)
    (dest / "Makefile").write_text(STUDENT_MAKEFILE)
    (dest / "README.md").write_text(readme)
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
    for bad in ("source", "course/grading", "course/serving", "tests", "autograded", "submitted", "feedback", "gradebook.db",
                "nbgrader_config.py", ".judge", "benchmarks", "tools"):
        if (dest / bad).exists():
            problems.append(f"{bad} is in the student repository")
    secret, regions = _regions(root)
    solution_windows = set().union(*(_windows(r) for r in regions)) if regions else set()
    probes = re.compile(r"judge\.probe|def probe_|hidden_test\(")
    markers = re.compile(r"### BEGIN (SOLUTION|HIDDEN TESTS)")
    for p in sorted(dest.rglob("*")):
        if p.relative_to(dest).parts[0] == ".git":
            continue
        if p.is_symlink():
            problems.append(f"{p.relative_to(dest)} is a symbolic link")
            continue
        if not p.is_file():
            continue
        if p.name == "judge.py":
            problems.append(f"{p.relative_to(dest)}: a judge file")
        if "exercises" in p.relative_to(dest).parts[:-1] or p.name == "profiles.json":
            problems.append(f"{p.relative_to(dest)}: an exercise's hidden tests or known answers")
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


def source_commit(root: Path = REPO) -> str:
    """The instructor repository's commit (short id, '+ changes' when its tree differs), for the commit message."""
    head = subprocess.run(["git", "-C", str(root), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    if head.returncode != 0:
        return "an instructor repository without git"
    dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--", "release", "course",
                            "pyproject.toml", "environment.yml", STUDENT_LOCK, BINDER_LOCK],
                           capture_output=True, text=True).stdout.strip()
    return head.stdout.strip() + (" + uncommitted changes" if dirty else "")


def main(dest: Path, force: bool = False, repo: str | None = None) -> int:
    try:
        out = publish(dest, force=force, repo=repo)
    except (FileExistsError, ValueError) as err:
        print(f"publish: {err}{' (make publish ... FORCE=1)' if isinstance(err, FileExistsError) else ''}")
        return 2
    problems = check(out)
    for line in problems:
        print("PROBLEM:", line)
    files = sum(1 for p in out.rglob("*") if p.is_file() and ".git" not in p.relative_to(out).parts)
    size = sum(p.stat().st_size for p in out.rglob("*") if p.is_file() and ".git" not in p.relative_to(out).parts)
    print(f"wrote the student repository to {out}: {files} files, {size / 2**20:.1f} MiB; "
          f"{'NOT SAFE: see the problems above' if problems else 'no solution line, probe or hidden test in it'}")
    if problems:
        return 1
    made = commit(out, f"Student repository, published from {source_commit()}")
    print(f"committed {made[:12]} in {out}" if made else f"nothing changed in {out} since its last commit")
    badge = readme_repo(out)
    print(f"Binder badge: {badge}" if badge else
          "Binder badge: OWNER/REPO, a placeholder: publish again with REPO=owner/name (make publish DEST=... "
          "REPO=...), or after adding DEST's GitHub remote (git -C DEST remote add origin ...)")
    return 0


if __name__ == "__main__":  # make publish DEST=... [REPO=owner/name] [FORCE=1]; make lock: --binder-lock
    import argparse

    if sys.argv[1:] == ["--binder-lock"]:
        print(f"wrote {write_binder_lock()}")
        sys.exit(0)
    ap = argparse.ArgumentParser(description="write and commit the student repository (--binder-lock alone: write "
                                 f"{BINDER_LOCK} from {STUDENT_LOCK})")
    ap.add_argument("dest", type=Path)
    ap.add_argument("--force", action="store_true", help="replace DEST's files (its .git stays)")
    ap.add_argument("--repo", help="OWNER/NAME of the student repository on GitHub (the Binder badge)")
    a = ap.parse_args()
    sys.exit(main(a.dest, a.force, a.repo))
