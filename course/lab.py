"""Set up JupyterLab for a student (``make lab``) or an instructor (``make instructor``).

* **Student.** ``my_work/`` is the student's own, git-ignored copy of
  ``release/`` (files already there are never overwritten) plus the course's
  landing page ``index.ipynb``. JupyterLab is rooted there, so ``source/``,
  ``tests/`` and the gradebook are not in its file browser, and it runs with a
  configuration of its own (``.student/jupyter``): nbgrader's student
  extensions only (Assignments and Validate; Formgrader and Create Assignment
  are disabled), and an nbgrader configuration with the course id and the
  local exchange.
* **Local exchange.** :func:`default_exchange`: ``$COURSE_EXCHANGE`` if set, else
  ``$XDG_DATA_HOME/pytorch-internals/exchange`` (``~/.local/share/...``), outside
  every repository, so the instructor's repository (its ``nbgrader_config.py``)
  and the student repository (``make publish``) use the same one on one machine
  without configuration. Every chapter is released into it, so the Assignments
  tab can fetch a chapter and submit it back; the instructor then runs
  ``nbgrader collect``.
* **Unsaved work.** The student's kernels record when they last ran a cell of
  their notebook (an IPython startup file, ``.student/ipython``; records in
  ``.student/runs``): :mod:`course.submit` refuses to hand in a notebook whose
  file is older than its last run, since the open document then holds changes
  that are not on disk.
* **Instructor.** JupyterLab rooted at the course, with Formgrader.

``python -m course.lab student|instructor|exchange ROOT`` prepares these and
prints the folder to open.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import sys
from pathlib import Path

COURSE_ID = "pytorch-internals"
LANDING_URL = "/lab/tree/index.ipynb"
INSTRUCTOR_PLUGINS = ["@jupyter/nbgrader:formgrader", "@jupyter/nbgrader:create-assignment",
                      "@jupyter/nbgrader:course-list"]
# Jupyter's news poll ("get notified about official Jupyter news?"): the course runs offline.
NEWS_PLUGIN = "@jupyterlab/apputils-extension:announcements"

STUDENT_NBGRADER_CONFIG = '''"""nbgrader, as a student's JupyterLab sees it (written by course.lab; the hub writes the same for a class)."""
c = get_config()  # noqa: F821
c.CourseDirectory.course_id = {course_id!r}
c.Exchange.root = {exchange!r}
# One working copy per chapter: <root>/<chapter>/, the folder the landing page opens. Fetch creates it
# (or only adds files missing there), Submit hands in exactly that folder.
c.Exchange.path_includes_course = False
{assignment_dir}c.ExchangeFetchAssignment.replace_missing_files = True
# Submit refuses once, with a message in the Assignments tab, when no answer differs from the release.
c.ExchangeFactory.submit = "course.submit.ExchangeSubmit"
# Fetch gives each notebook it copies this kernel's language_info, so a fetched chapter opens saved.
c.ExchangeFactory.fetch_assignment = "course.submit.ExchangeFetchAssignment"
from course.submit import install as _submit_message  # noqa: E402
_submit_message()
from course.validate import install as _short_validate  # noqa: E402
_short_validate()
'''


EXCHANGE_ENV = "COURSE_EXCHANGE"
RUN_LOG_ENV = "COURSE_RUN_LOG"


def default_exchange() -> Path:
    """The local class's exchange: ``$COURSE_EXCHANGE`` if set, else ``$XDG_DATA_HOME/pytorch-internals/exchange``
    (``~/.local/share/pytorch-internals/exchange`` by default).

    The instructor's ``nbgrader_config.py`` and every student lab on this machine (``make lab`` in the instructor's
    repository or in the student repository) compute the same folder, so what one side releases or submits the
    other fetches or collects. It is per user: for a class of several Unix users on one machine, set
    ``COURSE_EXCHANGE`` to a folder they share (or run the hub, which sets it)."""
    env = os.environ.get(EXCHANGE_ENV)
    if env:
        return Path(env).expanduser()
    data = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return Path(data) / COURSE_ID / "exchange"


def run_record(folder: str | Path, notebook: str | Path) -> Path:
    """Where a kernel records its last run of a cell of ``notebook`` (one small JSON file per notebook)."""
    import hashlib

    key = hashlib.sha256(os.path.realpath(notebook).encode()).hexdigest()[:32]
    return Path(folder) / f"{key}.json"


def record_run(folder: str | Path, notebook: str | Path, when: float | None = None) -> None:
    """Record that a cell of ``notebook`` finished running at ``when`` (seconds since the epoch; default now)."""
    import time

    path = run_record(folder, notebook)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps({"notebook": os.path.realpath(notebook), "time": time.time() if when is None else when}))
    os.replace(tmp, path)


def last_run(folder: str | Path, notebook: str | Path) -> float | None:
    """When a cell of ``notebook`` last finished running in a kernel of the student's lab (None: never recorded)."""
    try:
        return float(json.loads(run_record(folder, notebook).read_text())["time"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


# Runs in every kernel of the student's lab (IPYTHONDIR/profile_default/startup/). After each cell the student runs
# (not silent executions: the tab's own requests), it records the time for the kernel's notebook: jupyter_server
# names it in JPY_SESSION_NAME (the absolute path when JupyterLab gives the file name, as it does).
RUN_RECORDER = '''\
def _course_run_recorder():
    import os
    ip, folder, name = get_ipython(), os.environ.get("COURSE_RUN_LOG"), os.environ.get("JPY_SESSION_NAME")
    if ip is None or not folder or not name:
        return
    notebook = name if os.path.isabs(name) else os.path.join(os.getcwd(), os.path.basename(name))

    def post_run_cell(result):
        try:
            from course.lab import record_run
            record_run(folder, notebook)
        except Exception:  # never disturb the student's cell
            pass

    ip.events.register("post_run_cell", post_run_cell)


_course_run_recorder()
del _course_run_recorder
'''


def write_run_recorder(ipython_dir: Path) -> Path:
    """Write the IPython startup file that records each kernel's last run (:data:`RUN_RECORDER`); return the dir."""
    startup = Path(ipython_dir) / "profile_default" / "startup"
    startup.mkdir(parents=True, exist_ok=True)
    (startup / "00-course-run-recorder.py").write_text(RUN_RECORDER)
    return Path(ipython_dir)


def student_nbgrader_config(exchange: str | Path, assignment_dir: str | Path | None = None,
                            course_id: str = COURSE_ID) -> str:
    """The student's ``nbgrader_config.py``: course id, exchange, one working copy per chapter, the checked Submit.

    ``assignment_dir``: where the working copies live (default: the Jupyter server's root folder)."""
    line = f"c.Exchange.assignment_dir = {str(assignment_dir)!r}\n" if assignment_dir else ""
    return STUDENT_NBGRADER_CONFIG.format(course_id=course_id, exchange=str(exchange), assignment_dir=line)


def write_student_config(config: Path, exchange: str | Path, assignment_dir: str | Path | None = None) -> Path:
    """Write a student's Jupyter configuration folder: nbgrader's config, the student extensions only.

    Used as ``JUPYTER_CONFIG_DIR`` by ``make lab`` and as an entry of ``JUPYTER_CONFIG_PATH`` by the hub."""
    config = Path(config)
    (config / "labconfig").mkdir(parents=True, exist_ok=True)
    (config / "nbgrader_config.py").write_text(student_nbgrader_config(exchange, assignment_dir))
    page = {"disabledExtensions": {name: True for name in [*INSTRUCTOR_PLUGINS, NEWS_PLUGIN]}}
    (config / "labconfig" / "page_config.json").write_text(json.dumps(page, indent=1))
    server = {"ServerApp": {"jpserver_extensions": {"nbgrader.server_extensions.formgrader": False,
                                                    "nbgrader.server_extensions.course_list": False,
                                                    "nbgrader.server_extensions.assignment_list": True,
                                                    "nbgrader.server_extensions.validate_assignment": True}}}
    (config / "jupyter_server_config.json").write_text(json.dumps(server, indent=1))
    return config


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
    for path in sorted(Path(src).rglob("*")):
        if path.is_dir() or ".ipynb_checkpoints" in path.parts:
            continue
        target = Path(dest) / path.relative_to(src)
        if not target.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            if path.suffix == ".ipynb":
                target.write_text(with_language_info(path.read_text()))
            else:
                shutil.copy2(path, target)
            copied.append(target)
    return copied


def with_language_info(text: str) -> str:
    """A notebook's JSON text with this machine's kernel ``language_info`` (:func:`copy_missing`, the student's
    Fetch: course.submit.ExchangeFetchAssignment). The release carries only ``{"name": "python"}``: the full one
    holds the Python version of the machine that generated it, which a student's kernel would write over."""
    nb = json.loads(text)
    nb.setdefault("metadata", {})["language_info"] = kernel_language_info()
    return json.dumps(nb, indent=1, ensure_ascii=False) + "\n"


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
    "05_engineering_traps": "CPU (DataLoader workers, autograd memory, bfloat16). A CUDA GPU adds the CUDA memory tools and float16.",
    "05b_distributed": "CPU (DDP and FSDP2 run on gloo). A CUDA GPU adds SyncBatchNorm across ranks.",
    "06_torch_compile": "CPU with a C++ compiler (Inductor). A CUDA GPU adds Triton kernels and CUDA graphs.",
}


# The title cell's time estimate: "**Time:** about 75 minutes", "**Estimated time:** 90 to 120 minutes",
# "**Estimated time:** 2.5 hours", "**Time:** 90-110 min" (either label, bold colon inside or outside).
_TIME = re.compile(r"\*\*(?:Estimated\s+)?time:?\*\*:?\s*(about\s+|around\s+|~\s*)?"
                   r"([0-9]+(?:\.[0-9]+)?)(?:\s*(?:to|-|–|—)\s*([0-9]+(?:\.[0-9]+)?))?\s*"
                   r"(minutes|minute|mins|min|hours|hour|hrs|hr|h)\b", re.I)


def estimated_time(text: str) -> str:
    """The time estimate in a chapter's markdown, in minutes ("about 75 min", "90–120 min"); "?" if none."""
    m = _TIME.search(text)
    if not m:
        return "?"
    scale = 60 if m.group(4).lower().startswith("h") else 1
    low, high = (float(g) * scale if g else None for g in (m.group(2), m.group(3)))
    span = f"{low:g}–{high:g}" if high is not None else f"{low:g}"
    return f"{'about ' if m.group(1) else ''}{span} min"


def chapter_facts(nb_path: Path) -> dict:
    """Title, time estimate ("time", e.g. "about 75 min"; "?" when the title cell gives none) and points."""
    nb = json.loads(Path(nb_path).read_text())
    text = "\n".join("".join(c["source"]) if isinstance(c["source"], list) else c["source"]
                     for c in nb["cells"] if c["cell_type"] == "markdown")
    title = re.search(r"^#\s+(.+)$", text, re.M)
    points = sum(float(c.get("metadata", {}).get("nbgrader", {}).get("points", 0)) for c in nb["cells"]
                 if c.get("metadata", {}).get("nbgrader", {}).get("grade"))
    return {"title": title.group(1).strip() if title else nb_path.stem, "time": estimated_time(text),
            "points": points}


def write_index(root: Path, dest: Path) -> Path:
    """Write the course's landing page (chapters, time, points, needs, and the student's progress)."""
    import nbformat

    rows = []
    for ch in chapters(root):
        nb_path = next((Path(root) / "release" / ch).glob("*.ipynb"))
        f = chapter_facts(nb_path)
        rows.append(f"| [{f['title']}]({ch}/{nb_path.name}) | {f['time']} | {f['points']:g} | {NEEDS.get(ch, 'CPU')} |")
    nb = nbformat.v4.new_notebook()
    # language_info as the kernel reports it: otherwise JupyterLab writes it on open and marks the page unsaved.
    nb.metadata = {"kernelspec": {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"},
                   "language_info": kernel_language_info()}
    nb.cells = [
        nbformat.v4.new_markdown_cell(
            "# PyTorch Internals\n\nSix chapters on how PyTorch really works (Chapter 5 in two notebooks: 5 and 5b, each "
            "graded on its own). Open a chapter, run it top to bottom "
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
    """Create the local exchange (:func:`default_exchange`) if needed and release every chapter of ``root`` that is
    not there yet (idempotent); return its folder.

    A folder made here for ``COURSE_EXCHANGE`` is world-writable with the sticky bit, as nbgrader asks of a shared
    exchange; the per-user default keeps the user's own mode."""
    root = Path(root).resolve()
    ex = default_exchange()
    if not ex.is_dir():
        ex.mkdir(parents=True)
        if os.environ.get(EXCHANGE_ENV):
            os.chmod(ex, 0o1777)
    for ch in chapters(root):
        if not (ex / COURSE_ID / "outbound" / ch).is_dir():
            release_to_exchange(root, ex, ch)
    return ex


def release_to_exchange(root: Path, ex: Path, chapter: str) -> None:
    """``nbgrader release_assignment CHAPTER`` into the exchange ``ex``, in this process (a second each,
    instead of a few seconds per chapter for a new nbgrader process), with the course's own configuration."""
    from traitlets.config import Config
    from traitlets.config.loader import PyFileConfigLoader
    from nbgrader.auth import Authenticator
    from nbgrader.coursedir import CourseDirectory
    from nbgrader.exchange import ExchangeFactory

    cfg = Config()
    if (Path(root) / "nbgrader_config.py").is_file():
        cfg.merge(PyFileConfigLoader("nbgrader_config.py", path=str(root)).load_config())
    cfg.CourseDirectory.root = str(root)
    cfg.CourseDirectory.course_id = COURSE_ID
    cfg.Exchange.root = str(ex)
    coursedir = CourseDirectory(config=cfg)
    coursedir.assignment_id = chapter
    ExchangeFactory(config=cfg).ReleaseAssignment(coursedir=coursedir, authenticator=Authenticator(config=cfg),
                                                  config=cfg).start()


def student(root: Path) -> Path:
    """Prepare ``my_work/`` and the student's Jupyter configuration; return the folder to open."""
    root = Path(root).resolve()
    work = root / "my_work"
    work.mkdir(exist_ok=True)
    copy_missing(root / "release", work)
    if not (work / "index.ipynb").exists():
        write_index(root, work / "index.ipynb")
    ex = exchange(root)
    write_student_config(root / ".student" / "jupyter", ex, assignment_dir=work)
    lab_settings(root / ".student" / "lab-settings")
    write_run_recorder(root / ".student" / "ipython")
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
                   JUPYTERLAB_SETTINGS_DIR=str(root / ".student" / "lab-settings"),
                   IPYTHONDIR=str(root / ".student" / "ipython"), **{RUN_LOG_ENV: str(root / ".student" / "runs")})
        # The landing page is the server's default URL: what the browser opens, and what `--no-browser` prints.
        return [jupyter, "lab", f"--ServerApp.root_dir={work}", f"--LabApp.default_url={LANDING_URL}",
                *(extra or [])], env, work
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
