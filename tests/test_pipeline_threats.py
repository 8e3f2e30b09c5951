"""The grading pipeline against what a student sends (issue 26, item 5): nothing forges a grade, leaks a hidden
test or stops the class.

``tests/test_threats.py`` grades one class of attacks on the sandbox, the files and the outputs. This file covers
the attacks that got through the code around them:

* **damaged notebooks** that made ``repair.stage`` raise, so that ``autograde`` and ``grade-class`` stopped
  before anyone was graded: a 200 KB deeply nested JSON notebook, a folder named like the notebook, and
  ``metadata.nbgrader`` of the wrong type;

Each threat is graded in one run of the toy chapter (``tests/toycourse.py``) with an honest classmate, who keeps
full marks.
"""
from __future__ import annotations

import json

import nbformat
import pytest

import toycourse
from course.grading import nbgrader_io, repair

CH = toycourse.CHAPTER
HONEST_SCALE = "def scale(x, k):\n    return x * k\n"
HONEST_COUNT = "def count_positive(t):\n    return int((t > 0).sum())\n"


def answered(release: dict, scale: str = HONEST_SCALE, count: str = HONEST_COUNT) -> dict:
    """The release with ``scale`` and ``count`` as the two answers (``tests/test_threats.py``'s helper)."""
    from test_threats import notebook

    return notebook(release, scale, count)


def deep_json(depth: int = 40_000) -> str:
    """A file that starts like a notebook and nests ``depth`` objects (200 KB at the default)."""
    return ('{"cells": [], "nbformat": 4, "nbformat_minor": 5, "metadata": ' + '{"a": ' * depth + "1"
            + "}" * depth + "}")


def wrong_metadata(release: dict, value) -> dict:
    """Honest answers, with every cell's ``metadata.nbgrader`` replaced by ``value`` (another editor's damage)."""
    nb = answered(release)
    for c in nb["cells"]:
        if "nbgrader" in c.get("metadata", {}):
            c["metadata"]["nbgrader"] = value
    return nb


def odd_types(release: dict) -> dict:
    """Honest answers, with wrong types all over the metadata (and in a few cells' fields)."""
    nb = answered(release)
    nb["metadata"] = "not a dict"
    nb["nbformat_minor"] = []
    cells = nb["cells"]
    graded = [c for c in cells if "nbgrader" in c.get("metadata", {})]
    graded[0]["metadata"] = ["a", "list"]
    graded[1]["metadata"]["nbgrader"]["grade_id"] = ["not", "a", "string"]
    graded[2]["metadata"]["nbgrader"]["points"] = {"a": 1}
    graded[-1]["id"] = {"not": "a string"}
    cells.append({"cell_type": "code", "metadata": 7, "source": ["x = ", 1], "outputs": {}, "id": []})
    cells.append("not a cell")
    return nb


# --- damaged notebooks: each graded on its own, the class goes on ----------------------------------------------

@pytest.fixture(scope="module")
def toy_release(tmp_path_factory):
    course = toycourse.make(tmp_path_factory.mktemp("pipeline-release") / "course")
    rel = nbgrader_io.generate(course, CH, nbgrader_io.sqlite(course / "gradebook.db"))
    return rel / f"{CH}.ipynb"


DAMAGED = {
    # name: (how the submission is written, whether the answers survive)
    "deep-json": (lambda d, rel: (d / f"{CH}.ipynb").write_text(deep_json()), False),
    "folder-notebook": (lambda d, rel: ((d / f"{CH}.ipynb").mkdir(), (d / f"{CH}.ipynb" / "x.py").write_text("1")),
                        False),
    "nbgrader-list": (lambda d, rel: (d / f"{CH}.ipynb").write_text(json.dumps(wrong_metadata(rel, []))), True),
    "nbgrader-string": (lambda d, rel: (d / f"{CH}.ipynb").write_text(json.dumps(wrong_metadata(rel, "x"))), True),
    "odd-types": (lambda d, rel: (d / f"{CH}.ipynb").write_text(json.dumps(odd_types(rel))), True),
}


@pytest.mark.parametrize("name", sorted(DAMAGED))
def test_a_damaged_notebook_is_staged_with_a_reason(tmp_path, toy_release, name):
    write, survives = DAMAGED[name]
    release = json.loads(toy_release.read_text())
    d = tmp_path / "submitted" / name / CH
    d.mkdir(parents=True)
    write(d, release)
    rep, taken = repair.stage(d, tmp_path / "staged" / name / CH, CH, toy_release, name)
    staged = tmp_path / "staged" / name / CH / f"{CH}.ipynb"
    nb = nbformat.read(str(staged), as_version=4)
    nbformat.validate(nb)
    answers = {c.metadata.nbgrader.grade_id: c.source for c in nb.cells if c.metadata.get("nbgrader", {}).get("solution")}
    if survives:
        assert answers == {"scale": HONEST_SCALE, "count_positive": HONEST_COUNT}, answers
        assert rep.repaired, "the repair must say what it put back"
    else:
        assert rep.damaged, "an unreadable notebook is graded as the release, and the report says why"
        assert all("NotImplementedError" in a or "raise" in a for a in answers.values()), answers
    assert not (staged.parent / f"{CH}.ipynb").is_dir()
