"""The same hidden tests inside the kernel: what stock ``nbgrader autograde`` (``COURSE_GRADING=stock``) runs.

Each test cell of a source notebook ends with::

    ### BEGIN HIDDEN TESTS
    from course.grading.inkernel import hidden_test; hidden_test("test_some_behaviour")
    ### END HIDDEN TESTS

Under the judge (the default) that region is removed before the notebook
runs, and the probe is sent from outside. Under stock nbgrader, and when an
instructor runs a source notebook, the line runs the same probe here, in the
notebook's own kernel, and the same verdict on its result, against the same
references (computed once per seed by a separate reference worker, cached in
``.judge/stock-cache/``). The scores agree with the judge's on honest work
(the test suite compares them); but here the student's code shares the
kernel, so this path is not a trust boundary.
"""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

_REFS: dict[tuple, dict] = {}


def locate(chapter: str | None = None, start: Path | None = None) -> tuple[Path, str]:
    """Find the course root (a folder with ``nbgrader_config.py`` and ``source/``) above ``start``, and the chapter."""
    here = Path(start or Path.cwd()).resolve()
    for folder in [here, *here.parents]:
        if (folder / "nbgrader_config.py").is_file() and (folder / "source").is_dir():
            name = chapter or here.name
            if (folder / "source" / name / "judge.py").is_file():
                return folder, name
    raise FileNotFoundError(f"no course with source/{chapter or here.name}/judge.py above {here}: hidden tests "
                            "run only where the course's source folder is present (the instructor's side)")


def _references(chapter: str, root: Path, seed: int, judge) -> dict:
    from course.grading import paths
    from course.grading.nbgrader import wrapper as nbgrader_io
    from course.grading.judge import references

    key = references.cache_key(chapter, root, seed, judge)
    if (chapter, key) in _REFS:
        return _REFS[(chapter, key)]
    cache = paths.judge_dir(root) / "stock-cache"
    cache.mkdir(exist_ok=True)
    path = cache / f"{chapter}-{key}.pt"
    if not path.is_file():
        env = dict(os.environ)
        env.pop("NBGRADER_EXECUTION", None)
        proc = subprocess.run([sys.executable, "-m", "course.grading", "references", chapter, "--seed", str(seed),
                               "--out", str(path), "--root", str(root)], capture_output=True, text=True,
                              env=nbgrader_io.env(base=env))
        if proc.returncode != 0:
            raise RuntimeError(f"computing the reference results failed:\n{proc.stdout[-2000:]}\n{proc.stderr[-4000:]}")
    refs = references.load_saved(path)[seed]
    _REFS[(chapter, key)] = refs
    return refs


def hidden_test(test: str, chapter: str | None = None) -> None:
    """Run grade cell ``test``'s probe in this kernel and its verdict here; raise ``CheckFailed`` if it fails."""
    from course.checks import CheckFailed
    from course.grading.judge import references
    from course.grading.run import wire
    from course.grading.judge.verdicts import decide, load

    root, chapter = locate(chapter)
    judge = load(chapter, root)
    here = Path.cwd().resolve()  # nbgrader runs the kernel in autograded/<student>/<chapter>/
    student = here.parent.name if here.parent.parent.name == "autograded" else "instructor"
    seed = references.seed_for(root, chapter, student)
    refs = _references(chapter, root, seed, judge)
    code = judge.code(test)
    with tempfile.TemporaryDirectory(prefix="hidden-test-") as tmp:
        out = str(Path(tmp) / "result.pt")
        wire.run_probe(code.source, code.name, seed, out)
        try:
            got = wire.read_result(Path(out))
        except ValueError as err:
            got = {"ok": False, "error": str(err)}
    verdict = decide(judge.probes[test], got, refs[test])
    if not verdict.passed:
        raise CheckFailed(verdict.message)


def write_references(chapter: str, seed: int, out: Path, root: Path) -> int:
    """``python -m course.grading references CHAPTER --seed S --out FILE``: compute and save the references."""
    from course.grading import paths
    from course.grading.judge import references

    records = references.compute(chapter, root, [seed])
    tmp = out.with_suffix(".part")
    references.save(records, tmp)
    os.replace(tmp, out)
    print(f"wrote {len(records[seed])} reference results for {chapter} to {out}")
    return 0
