"""The installed ``course`` package holds no hidden test and no reference solution."""
import re
import subprocess
import sys
import zipfile

from conftest import CHAPTERS, REPO
from course.grading.authoring import notebooks
from course.grading.judge.verdicts import judge_files


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def secrets() -> list[str]:
    """What must never be in the package: each reference solution region (3+ lines) and each judge's code."""
    out = []
    for ch in CHAPTERS:
        nb = notebooks.read(notebooks.notebook_path(ch))
        for cell in nb.cells:
            for block in re.findall(r"### BEGIN SOLUTION\n(.*?)### END SOLUTION", cell.source, re.S):
                if block.count("\n") >= 3:
                    out.append(_norm(block))
        judge = "\n".join(f.read_text() for f in judge_files(ch, REPO))
        out += [_norm(b) for b in re.findall(r"^def [^\n]*\n(?:[ \t]+[^\n]*\n|\n)+", judge, re.M)
                if b.count("\n") >= 4]
    return out


def test_the_wheel_holds_no_hidden_test_or_solution(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", str(REPO), "--no-deps", "--no-build-isolation",
                           "-w", str(tmp_path), "-q"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-2000:]
    wheel = next(tmp_path.glob("course-*.whl"))
    with zipfile.ZipFile(wheel) as zf:
        names = zf.namelist()
        assert any(n == "course/grading/judge/verdicts.py" for n in names), "the judge machinery is part of the package"
        missing = sorted(str(f.relative_to(REPO)) for f in (REPO / "course").rglob("*.py")
                         if "__pycache__" not in f.parts and str(f.relative_to(REPO)) not in names)
        assert not missing, f"pyproject's packages leave out {missing}"
        assert any(n == "course/serving/hub.py" for n in names), "the class tools are part of the package"
        assert not any(re.search(r"(^|/)source/|\.ipynb$", n) for n in names), names
        text = "\n".join(zf.read(n).decode(errors="replace") for n in names if n.endswith(".py"))
    text = _norm(text)
    leaked = [block[:80] for block in secrets() if block in text]
    assert not leaked, f"package files contain a reference solution or a hidden test: {leaked[:3]}"
