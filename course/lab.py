"""Set up JupyterLab for a student (``make lab``) or an instructor (``make instructor``).

* **Student.** ``my_work/`` is the student's own, git-ignored copy of
  ``release/`` (files already there are never overwritten) plus the course's
  landing page ``index.ipynb``. JupyterLab is rooted there, so ``source/``,
  ``tests/`` and the gradebook are not in its file browser, and it runs with a
  configuration of its own (``.student/jupyter``): nbgrader's student
  extensions only (Assignments and Validate; Formgrader and Create Assignment
  are disabled), and an nbgrader configuration with the course id and the
  local exchange.
* **Local exchange.** ``.exchange/`` (world-writable, as nbgrader requires)
  with every chapter released into it, so the Assignments tab can fetch a
  chapter, and submit it back; the instructor then runs ``nbgrader collect``.
* **Instructor.** JupyterLab rooted at the course, with Formgrader.

``python -m course.lab student|instructor|exchange ROOT`` prepares these and
prints the folder to open.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

COURSE_ID = "pytorch-internals"
INSTRUCTOR_PLUGINS = ["@jupyter/nbgrader:formgrader", "@jupyter/nbgrader:create-assignment",
                      "@jupyter/nbgrader:course-list"]

STUDENT_NBGRADER_CONFIG = '''"""nbgrader, as a student's JupyterLab sees it: the course id and the local exchange (written by course.lab)."""
c = get_config()  # noqa: F821
c.CourseDirectory.course_id = {course_id!r}
c.Exchange.root = {exchange!r}
c.Exchange.path_includes_course = True
from course.validate import install as _short_validate  # noqa: E402
_short_validate()
'''


def chapters(root: Path) -> list[str]:
    """The chapters released to students (folders of ``release/``)."""
    return sorted(p.name for p in (Path(root) / "release").iterdir() if p.is_dir() and not p.name.startswith("."))


def kernel_language_info() -> dict:
    """The ``language_info`` this machine's Python kernel reports (JupyterLab writes it on open)."""
    try:
        from ipykernel.ipkernel import IPythonKernel
        return dict(IPythonKernel.language_info)
    except ImportError:  # pragma: no cover
        import platform
        return {"name": "python", "version": platform.python_version()}


def copy_missing(src: Path, dest: Path) -> list[Path]:
    """Copy files from ``src`` into ``dest`` that are not there yet; never overwrite. Return what was copied.

    A copied notebook gets this machine's kernel ``language_info``: otherwise JupyterLab
    fills it in when the notebook opens, and the tab shows unsaved changes at once.
    """
    copied = []
    info = kernel_language_info()
    for path in sorted(Path(src).rglob("*")):
        if path.is_dir() or ".ipynb_checkpoints" in path.parts:
            continue
        target = Path(dest) / path.relative_to(src)
        if not target.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            if path.suffix == ".ipynb":
                nb = json.loads(path.read_text())
                nb.setdefault("metadata", {})["language_info"] = info
                target.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n")
            else:
                shutil.copy2(path, target)
            copied.append(target)
    return copied


def lab_settings(folder: Path) -> Path:
    """JupyterLab settings for the course's labs: no "get notified about Jupyter news?" prompt (no network here)."""
    d = Path(folder) / "@jupyterlab" / "apputils-extension"
    d.mkdir(parents=True, exist_ok=True)
    (d / "notification.jupyterlab-settings").write_text(json.dumps({"fetchNews": "false"}))
    return Path(folder)


NEEDS = {  # what a chapter needs; a GPU is never required
    "01_dynamic_graphs": "CPU. A CUDA GPU adds larger sizes to the per-op timing and shows asynchronous execution.",
    "02_autograd": "CPU. A CUDA GPU adds the allocator's peak-memory counters.",
    "03_torchscript": "CPU, and a C++ compiler for the AOTInductor and LibTorch parts (skipped without one).",
    "04_ecosystem": "CPU, offline (models are built without downloading weights).",
    "05_engineering_traps": "CPU (DDP runs on gloo). A CUDA GPU adds SyncBatchNorm across ranks and CUDA memory tools.",
    "06_torch_compile": "CPU with a C++ compiler (Inductor). A CUDA GPU adds Triton kernels and CUDA graphs.",
}


def chapter_facts(nb_path: Path) -> dict:
    """Title, time estimate and points of a chapter, read from its notebook."""
    import re

    nb = json.loads(Path(nb_path).read_text())
    text = "\n".join("".join(c["source"]) if isinstance(c["source"], list) else c["source"]
                     for c in nb["cells"] if c["cell_type"] == "markdown")
    title = re.search(r"^#\s+(.+)$", text, re.M)
    minutes = re.search(r"\*\*Time:?\*\*:?\s*(?:about\s+)?([0-9]+(?:\s*(?:to|-|–)\s*[0-9]+)?)\s*min", text)
    points = sum(float(c.get("metadata", {}).get("nbgrader", {}).get("points", 0)) for c in nb["cells"]
                 if c.get("metadata", {}).get("nbgrader", {}).get("grade"))
    return {"title": title.group(1).strip() if title else nb_path.stem,
            "minutes": minutes.group(1) if minutes else "?", "points": points}


def write_index(root: Path, dest: Path) -> Path:
    """Write the course's landing page (chapters, time, points, needs, and the student's progress)."""
    import nbformat

    rows = []
    for ch in chapters(root):
        nb_path = next((Path(root) / "release" / ch).glob("*.ipynb"))
        f = chapter_facts(nb_path)
        rows.append(f"| [{f['title']}]({ch}/{nb_path.name}) | {f['minutes']} min | {f['points']:g} | {NEEDS.get(ch, 'CPU')} |")
    nb = nbformat.v4.new_notebook()
    nb.metadata = {"kernelspec": {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}}
    nb.cells = [
        nbformat.v4.new_markdown_cell(
            "# PyTorch Internals\n\nSix chapters on how PyTorch really works. Open a chapter, run it top to bottom "
            "(*Run → Run All Cells*), then solve its exercises: each has a visible test, and the grader adds hidden "
            "tests on inputs you have not seen.\n\n| chapter | time | points | needs |\n|---|---|---|---|\n"
            + "\n".join(rows)
            + "\n\nEvery chapter runs on a CPU; none needs a GPU. **On Binder your edits vanish when the session "
              "ends**: use *File → Download* to keep them. In a class, the *Assignments* tab fetches a chapter and "
              "submits it back."),
        nbformat.v4.new_markdown_cell("## Your progress\n\nWhat each chapter's progress cell (its last cell) "
                                      "recorded, the last time you ran it:"),
        nbformat.v4.new_code_cell("from course.progress import overview\noverview()"),
    ]
    for i, c in enumerate(nb.cells):
        c["id"] = f"index-{i}"
    nbformat.write(nb, str(dest))
    return dest


def exchange(root: Path) -> Path:
    """Create the local exchange and release every chapter into it (idempotent); return its folder."""
    root = Path(root).resolve()
    ex = root / ".exchange"
    ex.mkdir(exist_ok=True)
    os.chmod(ex, 0o1777)
    bindir = Path(sys.executable).parent
    env = dict(os.environ, PATH=f"{bindir}{os.pathsep}{os.environ.get('PATH', '')}")
    for ch in chapters(root):
        if (ex / COURSE_ID / "outbound" / ch).is_dir():
            continue
        subprocess.run([str(bindir / "nbgrader"), "release_assignment", ch, f"--Exchange.root={ex}",
                        f"--CourseDirectory.course_id={COURSE_ID}"],
                       cwd=root, env=env, check=True, capture_output=True, text=True)
    return ex


def student(root: Path) -> Path:
    """Prepare ``my_work/`` and the student's Jupyter configuration; return the folder to open."""
    root = Path(root).resolve()
    work = root / "my_work"
    work.mkdir(exist_ok=True)
    copy_missing(root / "release", work)
    if not (work / "index.ipynb").exists():
        write_index(root, work / "index.ipynb")
    ex = exchange(root)
    config = root / ".student" / "jupyter"
    (config / "labconfig").mkdir(parents=True, exist_ok=True)
    (config / "nbgrader_config.py").write_text(STUDENT_NBGRADER_CONFIG.format(course_id=COURSE_ID, exchange=str(ex)))
    page = {"disabledExtensions": {name: True for name in INSTRUCTOR_PLUGINS}}
    (config / "labconfig" / "page_config.json").write_text(json.dumps(page, indent=1))
    server = {"ServerApp": {"jpserver_extensions": {"nbgrader.server_extensions.formgrader": False,
                                                    "nbgrader.server_extensions.course_list": False}}}
    (config / "jupyter_server_config.json").write_text(json.dumps(server, indent=1))
    lab_settings(root / ".student" / "lab-settings")
    return work


def instructor(root: Path) -> Path:
    """Prepare the exchange for the instructor's JupyterLab; return the course folder."""
    root = Path(root).resolve()
    exchange(root)
    lab_settings(root / ".instructor" / "lab-settings")
    return root


def command(who: str, root: Path, extra: list[str] | None = None,
            gradebook: str | None = None) -> tuple[list[str], dict[str, str], Path]:
    """The JupyterLab command, environment and working folder for a student's or the instructor's lab.

    ``make lab`` and ``make instructor`` run exactly this (through ``python -m course.lab serve``),
    and so do the browser tests.
    """
    root = Path(root).resolve()
    jupyter = str(Path(sys.executable).parent / "jupyter")
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
               HF_HUB_OFFLINE="1")
    env.pop("MPLBACKEND", None)
    if os.geteuid() == 0:
        extra = ["--allow-root", *(extra or [])]
    if who == "student":
        work = student(root)
        env.update(JUPYTER_CONFIG_DIR=str(root / ".student" / "jupyter"),
                   JUPYTERLAB_SETTINGS_DIR=str(root / ".student" / "lab-settings"))
        return [jupyter, "lab", f"--ServerApp.root_dir={work}", *(extra or [])], env, work
    instructor(root)
    env["JUPYTERLAB_SETTINGS_DIR"] = str(root / ".instructor" / "lab-settings")
    env["COURSE_GRADEBOOK_URL"] = f"sqlite:///{(root / (gradebook or 'gradebook.db')).resolve()}"
    # FormgradeExtension.debug (on by default) dumps the server's whole config as JSON into a panel, and warns
    # "Formgrader config is not serializable" on every visit, because the server's config is not JSON.
    return [jupyter, "lab", f"--ServerApp.root_dir={root}", "--FormgradeExtension.debug=False",
            *(extra or [])], env, root


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) >= 3 and args[0] == "serve" and args[1] in ("student", "instructor"):
        extra = args[3:]
        gradebook = os.environ.get("GRADEBOOK")
        cmd, env, cwd = command(args[1], Path(args[2]), extra, gradebook)
        if args[1] == "student" and not any(a.endswith(".ipynb") for a in extra):
            cmd.append("index.ipynb")
        os.chdir(cwd)
        os.execvpe(cmd[0], cmd, env)
    if len(args) != 2 or args[0] not in ("student", "instructor", "exchange"):
        print("usage: python -m course.lab student|instructor|exchange ROOT\n"
              "       python -m course.lab serve student|instructor ROOT [jupyter lab options]", file=sys.stderr)
        return 2
    out = {"student": student, "instructor": instructor, "exchange": exchange}[args[0]](Path(args[1]))
    print(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
