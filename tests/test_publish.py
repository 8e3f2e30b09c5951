"""The student repository (``make publish``): what a student may see, and provably nothing else."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from conftest import REPO
from course.serving import publish


@pytest.fixture(scope="module")
def published(tmp_path_factory):
    dest = tmp_path_factory.mktemp("student") / "repo"
    proc = subprocess.run([sys.executable, "-m", "course.grading", "publish", str(dest)], cwd=REPO,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return dest


def test_it_holds_the_release_the_landing_page_and_the_student_helpers(published):
    chapters = sorted(p.name for p in (REPO / "release").iterdir() if p.is_dir())
    assert sorted(p.name for p in (published / "release").iterdir()) == chapters
    for ch in chapters:
        assert (published / "release" / ch / f"{ch}.ipynb").read_bytes() == \
            (REPO / "release" / ch / f"{ch}.ipynb").read_bytes()
    assert (published / "index.ipynb").is_file() and (published / "postBuild").stat().st_mode & 0o111
    assert {"Makefile", "README.md", "pyproject.toml", "environment.yml"} <= {p.name for p in published.iterdir()}
    assert (published / "course" / "checks.py").is_file() and (published / "course" / "lab.py").is_file()
    assert 'packages = ["course"]' in (published / "pyproject.toml").read_text()
    assert (published / "environment.yml").read_text() == (REPO / "environment.yml").read_text()


def test_it_installs_from_the_locks(published):
    """The student repository carries the student lock (its Makefile installs from it) and Binder's lock (its
    environment.yml installs it), byte for byte the instructor's."""
    for lock_file in (publish.STUDENT_LOCK, publish.BINDER_LOCK):
        assert (published / lock_file).read_bytes() == (REPO / lock_file).read_bytes(), lock_file
    makefile = (published / "Makefile").read_text()
    assert "$(STAMP): pyproject.toml requirements-student.lock\n" in makefile
    assert "pip install --quiet --disable-pip-version-check --no-deps -r requirements-student.lock\n" in makefile
    assert "-r requirements-binder.lock" in (published / "environment.yml").read_text()
    assert "pip install --no-deps -e ." in (published / "postBuild").read_text()


def test_it_holds_no_solution_probe_or_instructor_tool(published):
    assert publish.check(published) == []
    for bad in ("source", "tests", "course/grading", "course/serving", "nbgrader_config.py", "benchmarks", "tools", ".ci"):
        assert not (published / bad).exists(), bad
    assert not list(published.rglob("judge.py")) and not list(published.rglob("exercises"))
    assert not list(published.rglob("profiles.json"))
    text = "\n".join(p.read_text(errors="replace") for p in published.rglob("*") if p.is_file())
    assert "def probe_" not in text and "judge.probe" not in text and "BEGIN SOLUTION" not in text


def test_the_check_would_catch_a_leak(published, tmp_path):
    import shutil
    leaky = tmp_path / "leaky"
    shutil.copytree(published, leaky, ignore=shutil.ignore_patterns(".git"))
    secret = sorted(publish.secret_lines())
    nb_path = next((leaky / "release").glob("*/*.ipynb"))
    nb = json.loads(nb_path.read_text())
    nb["cells"][-1]["source"] = secret[len(secret) // 2]
    nb_path.write_text(json.dumps(nb))
    (leaky / "source").mkdir()
    (leaky / "extra").mkdir()
    (leaky / "extra" / "judge.py").write_text("@judge.probe('x')\ndef probe_x(seed):\n    pass\n")
    (leaky / "release" / "exercises" / "sgd_step" / "mutants").mkdir(parents=True)  # an exercise's known answers
    (leaky / "release" / "exercises" / "sgd_step" / "mutants" / "m.py").write_text('CELL = "sgd_step"\n')
    (leaky / "extra" / "profiles.json").write_text("{}")
    problems = " | ".join(publish.check(leaky))
    assert "solution line" in problems and "source is in" in problems and "a judge file" in problems
    assert "release/exercises/sgd_step/mutants/m.py: an exercise's hidden tests or known answers" in problems
    assert "extra/profiles.json: an exercise's hidden tests or known answers" in problems


def test_the_student_repository_sets_up_its_own_lab(published):
    import sysconfig
    # As in the student's own environment: the published helpers, and the site-packages without this checkout's
    # editable install (-S skips the .pth file that maps `course` here).
    env = dict(os.environ, PYTHONPATH=f"{published}:{sysconfig.get_paths()['purelib']}",
               PATH=f"{os.path.dirname(sys.executable)}:{os.environ['PATH']}",
               COURSE_EXCHANGE=str(published.parent / "exchange"))  # not the user's own exchange
    where = subprocess.run([sys.executable, "-S", "-c", "import course, importlib.util; print(course.__file__); "
                            "print(importlib.util.find_spec('course.grading')); print(importlib.util.find_spec('course.serving'))"],
                           cwd=published, env=env,
                           capture_output=True, text=True, check=True).stdout.split("\n")
    assert where[0].startswith(str(published)) and where[1] == "None" and where[2] == "None"
    proc = subprocess.run([sys.executable, "-S", "-m", "course.lab", "student", str(published)], cwd=published, env=env,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    work = published / "my_work"
    assert (work / "index.ipynb").is_file()
    assert sorted(p.name for p in work.iterdir() if p.is_dir() and not p.name.startswith(".")) == \
        sorted(p.name for p in (published / "release").iterdir())


def test_it_is_a_committed_git_repository_with_a_fixed_author(published):
    log = subprocess.run(["git", "-C", str(published), "log", "--format=%an <%ae>|%s"], capture_output=True,
                         text=True, check=True).stdout.splitlines()
    assert len(log) == 1 and log[0].startswith("PyTorch Internals publish <publish@pytorch-internals.invalid>|"), log
    assert "published from" in log[0]
    status = subprocess.run(["git", "-C", str(published), "status", "--porcelain"], capture_output=True, text=True,
                            check=True).stdout
    branch = subprocess.run(["git", "-C", str(published), "branch", "--show-current"], capture_output=True,
                            text=True, check=True).stdout.strip()
    assert status == "" and branch == "main", (status, branch)


def test_the_binder_badge_comes_from_repo_or_the_remote(tmp_path):
    """REPO=owner/name names the badge's repository; without it, DEST's GitHub origin does; a second publish with
    --force keeps the history and adds one commit."""
    dest = tmp_path / "student"
    assert publish.main(dest, repo="ada/pytorch-internals-2027") == 0
    assert "mybinder.org/v2/gh/ada/pytorch-internals-2027/main?" in (dest / "README.md").read_text()
    subprocess.run(["git", "-C", str(dest), "remote", "add", "origin", "git@github.com:bob/pti-student.git"],
                   check=True)
    (dest / "release" / "stray.txt").write_text("removed by --force")
    assert publish.main(dest, force=True) == 0
    assert "mybinder.org/v2/gh/bob/pti-student/main?" in (dest / "README.md").read_text()
    assert not (dest / "release" / "stray.txt").exists()
    count = subprocess.run(["git", "-C", str(dest), "rev-list", "--count", "HEAD"], capture_output=True, text=True,
                           check=True).stdout.strip()
    assert count == "2", "the second publish commits the badge change on top of the first"
    assert publish.main(dest, force=True) == 0  # nothing changed: no empty commit
    assert subprocess.run(["git", "-C", str(dest), "rev-list", "--count", "HEAD"], capture_output=True, text=True,
                          check=True).stdout.strip() == "2"
    for url, repo in [("https://github.com/a/b.git", "a/b"), ("https://github.com/a/b", "a/b"),
                      ("ssh://git@github.com/a/b.git", "a/b"), ("https://gitlab.com/a/b.git", None)]:
        assert publish.github_repo(url) == repo, url
    with pytest.raises(ValueError):
        publish.student_readme("not a repo")
