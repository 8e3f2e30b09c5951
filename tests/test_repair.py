"""course.grading.intake.repair: every kind of damaged submission is staged as a gradable notebook, the original untouched."""
import hashlib
import json
from pathlib import Path

import nbformat
import pytest

from course.grading.authoring import trial
from course.grading.intake import repair
from tools.nbtool import md, setup, solution, write
from tools.nbtool import tests as graded_cell

CH = "00_toy"


@pytest.fixture
def course(tmp_path):
    """A two-exercise toy chapter: release (stubs) and the reference solutions."""
    root = tmp_path / "course"
    (root / "release" / CH).mkdir(parents=True)
    (root / "source" / CH).mkdir(parents=True)
    cells = [
        md("# toy"),
        setup("from course import checks as C"),
        md("### Exercise 1 · f"),
        solution("def f(x):\n    ### BEGIN SOLUTION\n    return 2 * x\n    ### END SOLUTION", "f"),
        graded_cell('"""f doubles."""\nC.check_true(f(2) == 4, "no")', "test_f", 1),
        md("### Exercise 2 · g"),
        solution("class G:\n    def __call__(self, x):\n        ### BEGIN SOLUTION\n        return x + 1\n        ### END SOLUTION", "g"),
        graded_cell('"""G adds one."""\nC.check_true(G()(1) == 2, "no")', "test_g", 1),
    ]
    write(str(root / "source" / CH / f"{CH}.ipynb"), cells)
    rel = nbformat.read(str(root / "source" / CH / f"{CH}.ipynb"), as_version=4)
    for c in rel.cells:
        if c.get("metadata", {}).get("nbgrader", {}).get("solution"):
            c.source = c.source.split("    ### BEGIN SOLUTION")[0] + "    raise NotImplementedError()"
    nbformat.write(rel, str(root / "release" / CH / f"{CH}.ipynb"))
    return root


def answered(course) -> dict:
    rel = nbformat.read(str(course / "release" / CH / f"{CH}.ipynb"), as_version=4)
    src = nbformat.read(str(course / "source" / CH / f"{CH}.ipynb"), as_version=4)
    return json.loads(nbformat.writes(trial.build_notebook(rel, src, {})))


def stage(course, student, nb_or_text, filename=f"{CH}.ipynb"):
    d = course / "submitted" / student / CH
    d.mkdir(parents=True)
    (d / filename).write_text(nb_or_text if isinstance(nb_or_text, str) else json.dumps(nb_or_text))
    (d / "timestamp.txt").write_text("2026-12-01 10:00:00")
    before = {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in d.iterdir()}
    rep, taken = repair.stage(d, course / "staged" / student / CH, CH, course / "release" / CH / f"{CH}.ipynb", student)
    assert not taken.dropped
    after = {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in d.iterdir()}
    assert before == after, "the submitted files must never change"
    out = nbformat.read(str(course / "staged" / student / CH / f"{CH}.ipynb"), as_version=4)
    nbformat.validate(out)
    assert (course / "staged" / student / CH / "timestamp.txt").is_file()
    return rep, out


def answers(nb) -> dict:
    return {c.metadata["nbgrader"]["grade_id"]: c.source for c in nb.cells
            if c.get("metadata", {}).get("nbgrader", {}).get("solution")}


def grade_ids(nb) -> list:
    return [c.metadata["nbgrader"]["grade_id"] for c in nb.cells if c.get("metadata", {}).get("nbgrader", {}).get("grade_id")]


def test_an_intact_notebook_is_staged_as_is(course):
    rep, out = stage(course, "ok", answered(course))
    assert rep.ok and "return 2 * x" in answers(out)["f"]


def test_invalid_json_is_graded_as_the_release(course):
    text = json.dumps(answered(course))
    rep, out = stage(course, "bad", text[: len(text) // 2])
    assert rep.damaged and "not valid JSON" in rep.damaged[0]
    assert "NotImplementedError" in answers(out)["f"]


def test_a_renamed_notebook_is_found(course):
    rep, out = stage(course, "renamed", answered(course), filename=f"{CH} (1).ipynb")
    assert any("renamed" in r for r in rep.repaired) and "return 2 * x" in answers(out)["f"]


def test_deleted_duplicated_moved_and_retyped_cells(course):
    nb = answered(course)
    del nb["cells"][4]                                  # test_f deleted
    nb["cells"].insert(1, json.loads(json.dumps(nb["cells"][5])))  # g's solution duplicated, above
    nb["cells"][-1], nb["cells"][-2] = nb["cells"][-2], nb["cells"][-1]  # test_g above its solution
    rep, out = stage(course, "messy", nb)
    assert grade_ids(out).count("g") == 1 and "test_f" in grade_ids(out)
    assert grade_ids(out) == ["setup", "f", "test_f", "g", "test_g"]
    text = " ".join(rep.repaired)
    assert "restored" in text and "duplicated" in text and "moved" in text
    nb = answered(course)
    nb["cells"][3]["cell_type"] = "markdown"
    nb["cells"][3].pop("outputs"), nb["cells"][3].pop("execution_count")
    rep, out = stage(course, "retyped", nb)
    f_cell = next(c for c in out.cells if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == "f")
    assert f_cell.cell_type == "code" and "return 2 * x" in f_cell.source and "markdown" in " ".join(rep.repaired)


def test_stripped_metadata_and_changed_grade_ids(course):
    nb = answered(course)
    for c in nb["cells"]:
        c["metadata"] = {}
        c.pop("id", None)
    nb["nbformat_minor"] = 4
    nb["cells"].insert(4, {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
                           "source": "def helper():\n    return 1"})
    rep, out = stage(course, "colab", nb)
    assert "return 2 * x" in answers(out)["f"] and "return x + 1" in answers(out)["g"]
    assert grade_ids(out) == ["setup", "f", "test_f", "g", "test_g"]
    assert any("def helper" in c.source for c in out.cells), "the student's own cells are kept"
    nb = answered(course)
    for c in nb["cells"]:
        if c.get("metadata", {}).get("nbgrader", {}).get("solution"):
            c["metadata"]["nbgrader"]["grade_id"] += "-x"
    rep, out = stage(course, "renamed-ids", nb)
    assert "return x + 1" in answers(out)["g"] and rep.repaired


def test_an_answer_that_cannot_be_found_is_reported(course):
    nb = answered(course)
    nb["cells"] = [c for c in nb["cells"] if "class G" not in "".join(c.get("source", ""))]
    rep, out = stage(course, "lost", nb)
    assert any("could not find your answer to g" in d for d in rep.damaged)
    assert "NotImplementedError" in answers(out)["g"]


def test_huge_outputs_are_dropped(course):
    nb = answered(course)
    nb["cells"][1]["outputs"] = [{"output_type": "stream", "name": "stdout", "text": "x" * (repair.HUGE_BYTES + 10)}]
    rep, out = stage(course, "huge", nb)
    assert any("MiB" in r for r in rep.repaired)
    assert all(not c.get("outputs") for c in out.cells if c.cell_type == "code")
