"""Source notebooks are committed clean, and their nbgrader metadata is complete."""
import json
import re

import pytest

from conftest import CHAPTERS, REPO
from course import grading
from course.grading import judge as judging
from tools.nbtool import HIDDEN_CALL

SOURCES = {ch: grading.notebook_path(ch) for ch in CHAPTERS}
EXPECTED_CHAPTERS = ["01_dynamic_graphs", "02_autograd", "03_torchscript", "04_ecosystem",
                     "05_engineering_traps", "06_torch_compile"]


def test_chapters_exist():
    assert CHAPTERS, "no chapters under source/"
    assert set(CHAPTERS) <= set(EXPECTED_CHAPTERS), f"unexpected chapter folders: {set(CHAPTERS) - set(EXPECTED_CHAPTERS)}"
    assert "01_dynamic_graphs" in CHAPTERS


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_source_is_clean(chapter):
    raw = json.loads(SOURCES[chapter].read_text())
    assert raw["metadata"]["kernelspec"]["name"] == "python3"
    assert "widgets" not in raw["metadata"], "widget state must not be committed"
    for i, cell in enumerate(raw["cells"]):
        if cell["cell_type"] == "code":
            assert cell["outputs"] == [], f"cell {i} has outputs"
            assert cell["execution_count"] is None, f"cell {i} has an execution count"
        assert "widgets" not in cell.get("metadata", {})


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_nbgrader_metadata(chapter):
    nb = grading.read(SOURCES[chapter])
    ids = [grading.grade_id(c) for c in nb.cells if grading.grade_id(c)]
    assert len(ids) == len(set(ids)), f"duplicate grade_ids: {sorted({i for i in ids if ids.count(i) > 1})}"
    for gid in ids:
        assert re.fullmatch(r"[a-z0-9_\-]+", gid), f"grade_id {gid!r} is not a slug"
    graded = grading.graded_cells(nb)
    assert graded, "a chapter must have graded cells"
    assert all(points > 0 for points in graded.values()), f"grade cells without points: {graded}"
    sols = grading.solution_cells(nb)
    assert sols, "a chapter must have exercises"
    for cell in nb.cells:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if meta.get("grade"):
            assert meta.get("locked") is True, f"{meta['grade_id']} must be locked"
            assert cell.source.lstrip().startswith('"""'), f"{meta['grade_id']} must open with a docstring"
            hidden = re.findall(r"^### BEGIN HIDDEN TESTS\n(.*?)\n### END HIDDEN TESTS$", cell.source, re.M | re.S)
            assert hidden == [HIDDEN_CALL.format(grade_id=meta["grade_id"])], (
                f"{meta['grade_id']}: the hidden region must be exactly the one-line call into judge.py "
                f"(tools.nbtool.judge_hidden_region); the hidden test itself lives in source/{chapter}/judge.py")
            assert cell.source.rstrip().endswith("### END HIDDEN TESTS"), f"{meta['grade_id']}: hidden region must end the cell"
        if meta.get("solution"):
            assert "### BEGIN SOLUTION" in cell.source and "### END SOLUTION" in cell.source
    setup = [c for c in nb.cells if grading.grade_id(c) == "setup"]
    assert setup and setup[0].metadata["nbgrader"]["locked"], "the setup cell must exist and be locked"
    assert "from course import checks" in setup[0].source, "the setup cell imports course.checks before student code"
    first_solution = next(i for i, c in enumerate(nb.cells) if c.get("metadata", {}).get("nbgrader", {}).get("solution"))
    assert nb.cells.index(setup[0]) < first_solution


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_tests_use_course_checks_not_bare_asserts(chapter):
    nb = grading.read(SOURCES[chapter])
    for cell in nb.cells:
        if cell.get("metadata", {}).get("nbgrader", {}).get("grade"):
            code = cell.source
            assert not re.search(r"^\s*assert\s", code, re.M), f"{grading.grade_id(cell)}: use course.checks, not assert"
            for banned in ("torch.allclose(", "torch.equal(", "assert_close("):
                assert banned not in code, f"{grading.grade_id(cell)} uses {banned}, which a student can replace"


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_exercises_have_known_answers(chapter):
    nb = grading.read(SOURCES[chapter])
    sols = set(grading.solution_cells(nb))
    mutants = grading.load_variants(chapter, "mutant")
    alternatives = grading.load_variants(chapter, "alternative")
    for cell in sols:
        n_mut = sum(v.cell == cell for v in mutants)
        n_alt = sum(v.cell == cell for v in alternatives)
        assert n_mut >= 4, f"{chapter}: exercise {cell} has {n_mut} mutants, needs at least 4 (different mistake classes)"
        assert n_alt >= 1, f"{chapter}: exercise {cell} has no alternative correct answer"
    for v in mutants + alternatives:
        assert v.description and v.description != v.name, f"{v.name}: give it a one-line docstring"


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_release_has_no_solutions_or_hidden_tests(chapter):
    source = grading.read(SOURCES[chapter])
    release = grading.read(grading.notebook_path(chapter, REPO, "release"))
    secret, public = set(), set()
    for cell in source.cells:
        inside = False
        for line in cell.source.splitlines():
            if re.match(r"\s*### BEGIN (SOLUTION|HIDDEN TESTS)", line):
                inside = True
                continue
            if re.match(r"\s*### END (SOLUTION|HIDDEN TESTS)", line):
                inside = False
                continue
            (secret if inside else public).add(line.strip())
    only_secret = {line for line in secret - public if len(line) > 3}
    text = "\n".join(c.source for c in release.cells)
    assert "BEGIN SOLUTION" not in text and "BEGIN HIDDEN TESTS" not in text
    leaked = sorted(line for c in release.cells for line in (l.strip() for l in c.source.splitlines())
                    if line in only_secret)
    assert not leaked, f"release lines that exist only in solution/hidden regions of the source: {leaked[:5]}"


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_judge_covers_every_grade_cell(chapter):
    """source/<chapter>/judge.py has exactly one probe, with a verdict, per grade cell."""
    nb = grading.read(SOURCES[chapter])
    j = judging.load(chapter, REPO)
    judging.check_coverage(j, list(grading.graded_cells(nb)), chapter)
    for test, probe in j.probes.items():
        assert probe.check is not None, f"{test}: no verdict"
        assert probe.source.startswith("def "), f"{test}: the probe must be a plain def"


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_release_has_no_judge(chapter):
    """The hidden tests never reach the student's folder."""
    release = REPO / "release" / chapter
    assert not (release / "judge.py").exists()
    text = "\n".join(p.read_text(errors="replace") for p in release.rglob("*") if p.is_file())
    assert "hidden_test(" not in text and "judge.probe" not in text


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_student_view_cells(chapter):
    """Test and solution cells are tagged raises-exception (Run All runs on), and the chapter ends with the progress cell."""
    nb = grading.read(SOURCES[chapter])
    for cell in nb.cells:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if cell.cell_type == "code" and (meta.get("grade") or meta.get("solution")):
            assert "raises-exception" in cell.metadata.get("tags", []), f"{meta['grade_id']}: tag raises-exception"
    last = nb.cells[-1]
    assert grading.grade_id(last) == "progress" and f'summary("{chapter}")' in last.source
