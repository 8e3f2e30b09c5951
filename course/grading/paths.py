"""Where the instructor-only files live: ``<course>/.judge/`` and what is inside it, named in one place.

The course's own folders (``source``, ``release``, ``submitted``, ``autograded``, ``feedback``) are nbgrader's, named
in ``nbgrader_config.py``; everything the judge adds lives under :func:`judge_dir`, mode 0700, which the sandbox
never maps and ``publish`` never copies.
"""
from __future__ import annotations

from pathlib import Path

#: This course's own folder (where ``course/`` is): the default of every command that takes a course.
REPO = Path(__file__).resolve().parents[2]
JUDGE = ".judge"
#: The Dask cluster's certificates, relative to the course (``dask-certs``' default).
DASK_CERTS = Path(JUDGE) / "dask"


def judge_dir(root: Path) -> Path:
    """The instructor-only folder of the judge (seed, caches, reports): ``<course>/.judge``, made 0700."""
    d = Path(root) / JUDGE
    d.mkdir(mode=0o700, exist_ok=True)
    if d.stat().st_mode & 0o077 and not d.is_symlink():  # made by an older version, or by hand
        d.chmod(0o700)
    return d


def judge_subdir(root: Path, *parts: str) -> Path:
    """``<course>/.judge/<parts...>``, each level made 0700 (``mkdir(parents=True)`` would make them 0755)."""
    d = judge_dir(root)
    for part in parts:
        d = d / part
        d.mkdir(mode=0o700, exist_ok=True)
    return d


def intake_log(root: Path, chapter: str, student: str) -> Path:
    """Where the collect-time intake report of a submission is kept (instructor only); its folder is made."""
    return judge_subdir(root, "intake", chapter) / f"{student}.json"


def intake_log_path(root: Path, chapter: str, student: str) -> Path:
    """The same path as :func:`intake_log`, for reading: nothing is made."""
    return Path(root) / JUDGE / "intake" / chapter / f"{student}.json"


def source_notebooks(root: Path, chapter: str) -> list[Path]:
    """The notebooks of ``source/<chapter>/`` (a chapter has exactly one: its source notebook)."""
    return sorted((Path(root) / "source" / chapter).glob("*.ipynb"))


def report_path(root: Path, chapter: str, student: str) -> Path:
    """Where the judge's report of one submission is kept (instructor only): ``.judge/reports/<chapter>/<student>.json``."""
    return judge_subdir(root, "reports", chapter) / f"{student}.json"
