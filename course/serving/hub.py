"""A class on one machine: JupyterHub for the students and the instructor, nbgrader's exchange between them.

``python -m course.grading hub --instructor NAME --students NAME,NAME [...]`` (``make hub``), as root, starts
JupyterHub (PyPI) behind ``configurable-http-proxy`` (npm) on loopback, for real local Unix users:

* **Log-in**: PAM, JupyterHub's default: the users' own system passwords; only the named users may log in.
* **Students**: a JupyterLab server each, started as that user in their home folder, with the course's Python
  packages and the student's nbgrader configuration (:func:`course.lab.write_student_config`, in
  ``JUPYTER_CONFIG_PATH``): the Assignments tab and Validate, no Formgrader and no Create Assignment. Fetch
  makes ``~/<chapter>/``, the one working copy; Submit hands it in (and says so when nothing was answered).
* **The instructor**: a JupyterLab server rooted at the course folder (``--course``, owned by the
  instructor), with Formgrader (open ``/user/<instructor>/formgrader`` in its own tab: JupyterHub >= 4.1 forbids
  the iframe) and ``COURSE_EXCHANGE`` set to the shared exchange in every terminal.
* **The exchange** (``--exchange``, default nbgrader's ``/usr/local/share/nbgrader/exchange``): the modes
  nbgrader documents and sets itself: the root ``1777`` (nbgrader asks for ``0777``; the sticky bit also stops a
  student renaming the instructor's course folder), ``<course_id>/`` and ``outbound/`` ``0755``, ``inbound/``
  ``2733`` (students can add, not list), ``feedback/`` ``0711`` (students can read a file whose name they know,
  the hash of their own submission's secret, not list). All of it is created here, owned by the instructor,
  before any student can squat the names.
* **State** (``--state``, default ``/srv/pytorch-internals-hub``): ``private/`` (``0700``: the hub's database,
  cookie secret, proxy token, configuration and log), ``student-config/`` and ``instructor-config/`` (read by
  the users' servers), and, where the course's Python interpreter is not readable by other users (a pyenv
  under ``/root``), ``python/``: a copy of that same interpreter (standard library and ``libpython``, about
  90 MB) that imports the course venv's packages (a ``.pth``) and shares its Jupyter data, so every user
  runs exactly the course's interpreter and packages.

Everything listens on ``--ip`` (default ``127.0.0.1``). The instructor's command line, in their hub terminal
(``COURSE_EXCHANGE`` is set there): ``nbgrader release_assignment CH``, ``nbgrader collect CH``,
``python -m course.grading grade-class CH``, ``nbgrader generate_feedback CH``, ``nbgrader release_feedback CH``.
``tests/test_hub.py`` runs that whole term through the hub in headless Chromium.
"""
from __future__ import annotations

import argparse
import json
import os
import pwd
import shutil
import socket
import stat
import subprocess
import sys
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path

COURSE_ID = "pytorch-internals"
DEFAULT_EXCHANGE = "/usr/local/share/nbgrader/exchange"
DEFAULT_STATE = "/srv/pytorch-internals-hub"
#: Defaults: the inbound filesystem's size, and what one submission (and one student, all their submissions
#: together) may hold there; the intake refuses a larger submission anyway at collect.
INBOUND_FS_BYTES = 2 * 1024**3
SUBMISSION_BYTES = 200 * 1024**2
STUDENT_BYTES = 400 * 1024**2
SUBMISSION_ENTRIES = 2000


@dataclass
class HubSettings:
    """Everything the hub's configuration needs (written as JSON beside ``jupyterhub_config.py``)."""

    course: str
    instructor: str
    students: list[str]
    exchange: str
    state: str
    ip: str = "127.0.0.1"
    port: int = 8000
    hub_port: int = 0
    proxy_api_port: int = 0
    python: str = ""              # the interpreter the students' servers run
    bindir: str = ""              # first on their PATH (nbgrader, jupyter, alembic)
    instructor_python: str = ""   # the instructor's (default: the students')
    instructor_bindir: str = ""
    proxy: str = ""               # configurable-http-proxy
    course_id: str = COURSE_ID
    inbound_bytes: int = INBOUND_FS_BYTES  # 0: inbound/ stays on the exchange's filesystem
    extra_env: dict[str, str] = field(default_factory=dict)

    @property
    def private(self) -> Path:
        return Path(self.state) / "private"

    @property
    def student_config(self) -> Path:
        return Path(self.state) / "student-config"

    @property
    def instructor_config(self) -> Path:
        return Path(self.state) / "instructor-config"


# --- the machine: users, permissions, the interpreter ---------------------------------------------------------

def free_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def readable_by_others(path: Path, execute: bool = False) -> bool:
    """Whether a user other than the owner (and not in its group) can reach ``path`` (and read, or run, it)."""
    path = Path(path).resolve()
    for parent in reversed(path.parents):
        if not os.stat(parent).st_mode & stat.S_IXOTH:
            return False
    mode = os.stat(path).st_mode
    if path.is_dir():
        return bool(mode & stat.S_IXOTH and mode & stat.S_IROTH)
    return bool(mode & stat.S_IROTH and (not execute or mode & stat.S_IXOTH))


def course_venv() -> Path:
    """The course's virtual environment (the one running this)."""
    return Path(sys.prefix)


#: What a copy of the course's Python installation leaves out: packages (the venv's are used), tests, build files.
_NOT_COPIED = ("site-packages", "test", "idlelib", "tkinter", "turtledemo", "ensurepip", "lib2to3")


def copy_interpreter(base: Path, dest: Path) -> Path:
    """Copy the Python installation at ``base`` (``sys.base_prefix``) to ``dest``; return the copy's ``python``.

    The interpreter, ``libpython`` and the standard library (without its tests and build files); the
    interpreter's library search path (``RUNPATH``, absolute in a pyenv build) is rewritten to
    ``$ORIGIN/../lib``, so the copy finds its own ``libpython`` wherever it is, inside the grading sandbox too."""
    base, dest = Path(base), Path(dest)
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    exe = dest / "bin" / version
    stamp = dest / ".copied-from"
    if exe.exists() and stamp.is_file() and stamp.read_text() == f"{base} {sys.version} with headers":
        return exe
    shutil.rmtree(dest, ignore_errors=True)
    (dest / "bin").mkdir(parents=True)
    data = (base / "bin" / version).read_bytes()
    old = f"{base}/lib".encode() + b"\0"
    if old in data:
        new = b"$ORIGIN/../lib\0"
        data = data.replace(old, new + b"\0" * (len(old) - len(new)))
    exe.write_bytes(data)
    exe.chmod(0o755)
    for name in ("python3", "python"):
        (dest / "bin" / name).symlink_to(version)
    (dest / "lib").mkdir()
    for lib in (base / "lib").glob("libpython*"):
        if lib.is_symlink():
            (dest / "lib" / lib.name).symlink_to(os.readlink(lib))
        elif lib.is_file():
            shutil.copy2(lib, dest / "lib" / lib.name)
    shutil.copytree(base / "lib" / version, dest / "lib" / version, symlinks=True,
                    ignore=lambda d, names: [n for n in names if n in _NOT_COPIED or n.startswith("config-")])
    (dest / "lib" / version / "site-packages").mkdir()
    # The C headers (about 1 MB): torch.compile on the CPU builds its kernels against Python.h.
    if (base / "include").is_dir():
        shutil.copytree(base / "include", dest / "include", symlinks=True)
    stamp.write_text(f"{base} {sys.version} with headers")
    return exe


def share_packages(target: Path, python: Path | str, venv: Path, site_packages: Path,
                   first: tuple[str, ...] = ()) -> None:
    """Let the Python at ``target`` (a copy of the interpreter, or a fresh venv) use the packages of ``venv``
    without copying them: a ``.pth`` puts ``first`` on ``sys.path`` (an instructor's clone, whose ``course``
    then wins) and adds ``site_packages``; the venv's Jupyter data and configuration are linked; its console
    scripts (``nbgrader``, ``jupyter``, ``alembic``, ...) are copied to start ``python``."""
    target, venv = Path(target), Path(venv)
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    own_site = target / "lib" / version / "site-packages"
    own_site.mkdir(parents=True, exist_ok=True)
    (own_site / "course-venv.pth").write_text(
        "".join(f"{p}\n" for p in first) + f"import site; site.addsitedir({str(site_packages)!r})\n")
    for sub in ("share/jupyter", "etc/jupyter"):
        link, real = target / sub, venv / sub
        link.parent.mkdir(parents=True, exist_ok=True)
        if real.exists() and not link.exists() and not link.is_symlink():
            link.symlink_to(real)
    shebang = f"#!{venv}/bin/python".encode()
    (target / "bin").mkdir(exist_ok=True)
    for script in (venv / "bin").iterdir():
        if script.name.startswith(("python", "activate", "Activate")) or script.is_symlink() or not script.is_file():
            continue  # symbolic links: configurable-http-proxy, the hub's own
        data = script.read_bytes()
        if data.startswith(shebang):
            dest = target / "bin" / script.name
            dest.write_bytes(f"#!{python}\n".encode() + data.split(b"\n", 1)[1])
            dest.chmod(0o755)


def share_main(argv: list[str]) -> int:
    """``python -m course.serving.hub --share-venv SHARED`` (``make setup SHARED_VENV=...``), run by a fresh
    ``.venv`` of an instructor's clone: use the packages of the installation's venv ``SHARED`` (readable by
    every user on a hub) instead of installing them again, and this clone's own ``course``."""
    shared = Path(argv[0]).resolve()
    clone = own_checkout()
    sites = sorted((shared / "lib").glob("python3*/site-packages"))
    if not sites:
        print(f"{shared} is not a virtual environment (no lib/python3*/site-packages)", file=sys.stderr)
        return 2
    share_packages(Path(sys.prefix), Path(sys.prefix) / "bin" / "python", shared, sites[0], first=(str(clone),))
    check = subprocess.run([str(Path(sys.prefix) / "bin" / "python"), "-c",
                            "import course, nbgrader, torch, ipykernel; print(course.__file__)"],
                           capture_output=True, text=True)
    if check.returncode != 0 or not check.stdout.strip().startswith(str(clone)):
        print(f"the shared packages do not import: {check.stderr.strip()[-800:] or check.stdout}", file=sys.stderr)
        return 2
    print(f"{sys.prefix} uses the packages of {shared} and this clone's course ({clone})")
    return 0


def user_python(state: Path, venv: Path | None = None) -> tuple[str, str]:
    """The interpreter and ``bin/`` folder the users' servers run.

    The course venv's own where every user can run it. Otherwise (a pyenv Python under ``/root``, as on the
    course's CI machines) ``state/python``: a copy of the same Python build (:func:`copy_interpreter`) whose
    ``site-packages`` imports the course venv's packages (a ``.pth`` running ``site.addsitedir``), with the
    venv's Jupyter data and configuration (symbolic links) and copies of its console scripts (``nbgrader``,
    ``jupyter``, ``alembic``, ...) that start this interpreter. Exactly the course's interpreter and
    packages, so nothing differs between what the instructor tested and what students run."""
    venv = Path(venv or course_venv())
    own = venv / "bin" / "python"
    base = Path(sys.base_prefix)
    stdlib = Path(os.__file__).parent
    if readable_by_others(Path(os.path.realpath(own)), execute=True) and readable_by_others(stdlib) \
            and readable_by_others(venv / "lib"):
        return str(own), str(venv / "bin")
    site_packages = next(p for p in map(Path, sys.path) if p.name == "site-packages" and venv in p.parents)
    if not readable_by_others(site_packages):
        raise SystemExit(f"the course's packages ({site_packages}) cannot be read by other users (a private course "
                         "folder?): give the students a venv they can read with --python (python3.11 -m venv "
                         "/opt/pytorch-internals; /opt/pytorch-internals/bin/pip install the student repository)")
    target = Path(state) / "python"
    py = copy_interpreter(base, target)
    share_packages(target, py, venv, site_packages)
    for d in [target, *target.rglob("*")]:
        if not d.is_symlink():
            d.chmod(d.stat().st_mode | (0o755 if d.is_dir() or os.access(d, os.X_OK) else 0o644))
    check = subprocess.run([str(py), "-c", "import site, course"], capture_output=True, text=True)
    if check.returncode != 0:
        raise SystemExit(f"the users' interpreter {py} does not run: {check.stderr.strip()[-800:]}")
    return str(py), str(target / "bin")


def root_code_problems(paths: list[Path], walk: list[Path] = ()) -> list[str]:
    """Why root should not run this code (empty when it may): every path given, and every folder above it, must
    belong to root and be writable by root only; every file under ``walk`` too. The hub's root part runs only
    code that no instructor or student can change."""
    out, seen = [], set()

    def check(p: Path) -> None:
        if p in seen:
            return
        seen.add(p)
        try:
            st = os.lstat(p)
        except FileNotFoundError:
            return
        if st.st_uid != 0:
            out.append(f"{p} belongs to uid {st.st_uid}")
        elif st.st_mode & 0o022 and not stat.S_ISLNK(st.st_mode):
            out.append(f"{p} is writable by users other than root")

    for path in paths:
        real = Path(os.path.realpath(path))
        for p in [real, *real.parents]:
            check(p)
    for top in walk:
        for dirpath, dirnames, filenames in os.walk(os.path.realpath(top)):
            for name in [*dirnames, *filenames]:
                check(Path(dirpath) / name)
            if len(out) > 20:
                break
    return out


def own_checkout() -> Path:
    """The course checkout this code runs from (the installation root runs the hub from)."""
    return Path(__file__).resolve().parents[2]


#: Run at start-up by every student process (student-lib is on their PYTHONPATH): the installation's editable
#: finder, which maps any ``course.*`` name to the installation's checkout, is removed, so ``course`` and all its
#: submodules come from student-lib alone.
STUDENT_SITECUSTOMIZE = '''"""Written by course.serving.hub: students import the course only from this folder."""
import sys
sys.meta_path[:] = [f for f in sys.meta_path if not getattr(f, "__module__", "").startswith("__editable___course")]
'''


def student_lib(state: Path, checkout: Path | None = None) -> Path:
    """``STATE/student-lib``: the student-side ``course`` helpers alone (every module but ``course/grading`` and ``course/serving``), owned
    by root and read-only: what the students' servers and kernels import (first on their ``PYTHONPATH``), so that
    nothing a student imports lives beside the hidden tests."""
    src = Path(checkout or own_checkout()) / "course"
    dest = Path(state) / "student-lib"
    tmp = Path(state) / ".student-lib.new"
    shutil.rmtree(tmp, ignore_errors=True)
    shutil.copytree(src, tmp / "course", symlinks=False,
                    ignore=shutil.ignore_patterns("grading", "serving", "__pycache__", "*.pyc"))
    (tmp / "sitecustomize.py").write_text(STUDENT_SITECUSTOMIZE)
    from course import lab
    # The IPython startup file that records each kernel's last run (Submit refuses a notebook run after its last
    # save); read through PYTHONSTARTUP, which a plain python REPL also runs, hence the guard.
    (tmp / "course-run-recorder.py").write_text(
        "try:\n    get_ipython\nexcept NameError:\n    pass\nelse:\n"
        + "".join(f"    {line}\n" if line.strip() else "\n" for line in lab.RUN_RECORDER.splitlines()))
    lab.write_index(Path(checkout or own_checkout()), tmp / "index.ipynb")
    for p in [tmp, *tmp.rglob("*")]:
        os.lchown(p, 0, 0)
        p.chmod(0o755 if p.is_dir() else 0o644)
    shutil.rmtree(dest, ignore_errors=True)
    tmp.rename(dest)
    return dest


def find_proxy() -> str:
    """The ``configurable-http-proxy`` command: the course venv's (``make hub-system``), else the one on PATH."""
    own = course_venv() / "bin" / "configurable-http-proxy"
    found = str(own) if own.exists() else shutil.which("configurable-http-proxy")
    if not found:
        raise SystemExit("configurable-http-proxy is not installed: run `make hub-system` "
                         "(npm install -g --prefix .venv configurable-http-proxy)")
    return found


def ids(name: str) -> tuple[int, int]:
    entry = pwd.getpwnam(name)
    return entry.pw_uid, entry.pw_gid


#: The exchange's folders below the root: nbgrader's modes; ``inbound/`` also sticky (no student renames or removes
#: another's submission) and setgid.
EXCHANGE_MODES = (("", 0o755), ("outbound", 0o755), ("inbound", 0o3733), ("feedback", 0o711))


def _safe_parents(path: Path) -> list[str]:
    """Why root should not create or change ``path`` (empty when it may): every folder above it must be a real
    folder owned by root that nobody else can write, so that nobody can swap a link in while root works."""
    out = []
    for parent in reversed(Path(path).parents):
        try:
            st = os.lstat(parent)
        except FileNotFoundError:
            break
        if stat.S_ISLNK(st.st_mode):
            target = Path(os.path.realpath(parent))
            if os.lstat(target).st_uid != 0 or os.lstat(os.path.dirname(parent) or "/").st_uid != 0:
                out.append(f"{parent} is a link that a user other than root controls")
            continue
        if st.st_uid != 0 or st.st_mode & 0o022:
            out.append(f"{parent} is writable by, or owned by, a user other than root")
    return out


def _open_nofollow(name: str, dir_fd: int | None = None) -> int:
    return os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=dir_fd)


def _ensure_dir(parent_fd: int, name: str, uid: int, gid: int, mode: int, accept_owners: set[int]) -> int:
    """Create (or open) ``name`` in ``parent_fd`` without following a link, give it ``uid``/``gid`` and ``mode``
    through the open folder (``fchown``/``fchmod``), and return its descriptor. A link, a non-folder or a folder
    owned by a user outside ``accept_owners`` (a squatter) is refused."""
    try:
        os.mkdir(name, 0o700, dir_fd=parent_fd)
    except FileExistsError:
        pass
    try:
        fd = _open_nofollow(name, parent_fd)
    except OSError as err:
        raise SystemExit(f"exchange: {name!r} is not a plain folder (a link?): remove it and start again ({err})")
    st = os.fstat(fd)
    if st.st_uid not in accept_owners:
        os.close(fd)
        raise SystemExit(f"exchange: {name!r} belongs to uid {st.st_uid}, not to root or the instructor (squatted "
                         "before the hub ran?): remove it and start again")
    os.fchown(fd, uid, gid)
    os.fchmod(fd, mode)
    return fd


def prepare_exchange(exchange: Path, instructor: str, course_id: str = COURSE_ID) -> Path:
    """Create the exchange with nbgrader's modes, the course's folders owned by the instructor; return the root.

    Root follows no link here: every folder above the exchange must be root's and writable by root only, and the
    exchange's own folders are opened with ``O_NOFOLLOW`` and changed through their descriptors. Modes are set
    even on existing folders; files in them are left alone."""
    exchange = Path(os.path.abspath(exchange))
    for parent in exchange.parents:
        if os.path.isdir(parent) and not os.stat(parent).st_mode & stat.S_IXOTH:
            raise SystemExit(f"{parent} is not reachable by other users: the exchange must be (chmod o+x)")
    problems = _safe_parents(exchange)
    if problems:
        raise SystemExit("refusing to prepare the exchange: " + "; ".join(problems))
    exchange.parent.mkdir(parents=True, exist_ok=True)
    uid, gid = ids(instructor)
    top = _open_nofollow(str(exchange.parent))
    fds = [top]
    try:
        root_fd = _ensure_dir(top, exchange.name, 0, 0, 0o1777, {0})
        fds.append(root_fd)
        course_fd = _ensure_dir(root_fd, course_id, uid, gid, 0o755, {0, uid})
        fds.append(course_fd)
        for name, mode in EXCHANGE_MODES[1:]:
            fds.append(_ensure_dir(course_fd, name, uid, gid, mode, {0, uid}))
    finally:
        for fd in fds:
            os.close(fd)
    return exchange


# --- inbound/: a filesystem of its own, and a size limit per submission ------------------------------------------

def is_mount_point(path: Path) -> bool:
    target = os.path.realpath(path)
    with open("/proc/self/mountinfo") as f:
        return any(line.split()[4] == target for line in f)


def mount_inbound(inbound: Path, image: Path, size: int, uid: int, gid: int) -> str:
    """Put ``inbound/`` on a filesystem of its own (an ext4 image, ``nosuid,nodev,noexec``), so that what a student
    writes there can never fill the disk the grader and the other users need. Returns what was done."""
    inbound = Path(inbound)
    if is_mount_point(inbound):
        return f"{inbound} is already a filesystem of its own"
    if any(os.scandir(inbound)):
        raise SystemExit(f"{inbound} is not empty: collect, then empty it, before the hub gives it a filesystem of "
                         "its own (or start with --inbound-size 0)")
    if not image.exists():
        fd = os.open(image, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        os.ftruncate(fd, size)
        os.close(fd)
        # One inode per 4 KiB (four times ext4's default): the guard caps entries per student, and the
        # filesystem has room for many students' caps.
        subprocess.run(["mkfs.ext4", "-q", "-F", "-m", "0", "-i", "4096", "-E", "root_owner=0:0", str(image)],
                       check=True, capture_output=True)
    # Mount on the folder root opened without following a link (its /proc/self/fd path, not canonicalised), so
    # nobody can swap inbound/ for a link between the check and the mount; then set the new root's owner and
    # mode through that same path (which now leads into the mounted filesystem).
    # The new root is then reached from the parent's descriptor (a lookup crosses into the mount; a mount point
    # cannot be renamed away) and checked to be the new filesystem before its owner and mode are set.
    parent = _open_nofollow(str(inbound.parent))
    try:
        below = _open_nofollow(inbound.name, parent)
        try:
            st = os.fstat(below)
            if st.st_uid not in (0, uid):
                raise SystemExit(f"{inbound} belongs to uid {st.st_uid}, not to root or the instructor")
            subprocess.run(["mount", "--no-canonicalize", "-o", "loop,nosuid,nodev,noexec", str(image),
                            f"/proc/self/fd/{below}"], check=True, capture_output=True, pass_fds=(below,))
        finally:
            os.close(below)
        fd = _open_nofollow(inbound.name, parent)
        if os.fstat(fd).st_dev == os.fstat(parent).st_dev:
            os.close(fd)
            raise SystemExit(f"{inbound}: the new filesystem is not where it was mounted")
    finally:
        os.close(parent)
    try:
        try:
            os.rmdir("lost+found", dir_fd=fd)
        except FileNotFoundError:
            pass
        os.fchown(fd, uid, gid)
        os.fchmod(fd, dict(EXCHANGE_MODES)["inbound"])
    finally:
        os.close(fd)
    return f"{inbound}: a filesystem of its own ({size // 1024**2} MiB, {image})"


def _usage(dir_fd: int, name: str, limit: int, max_depth: int = 32) -> tuple[int, int]:
    """Bytes really allocated (``st_blocks``: a sparse or ``fallocate``d file counts for what it holds) and
    entries under ``name``, walked without recursion and without following a link; past ``limit`` entries or
    ``max_depth`` folders deep the count is ``limit + 1`` (over). One descriptor per folder level is open at a
    time. On the way every entry loses its write bits for group and others (nbgrader leaves a submission
    folder ``0777``: anyone who learned its name could change it)."""
    total = count = 0

    def visit(parent: int, entry: str) -> int | None:
        """Count ``entry``; return an open descriptor if it is a folder."""
        nonlocal total, count
        try:
            st = os.stat(entry, dir_fd=parent, follow_symlinks=False)
        except OSError:
            return None
        total, count = total + st.st_blocks * 512, count + 1
        if not (stat.S_ISDIR(st.st_mode) or stat.S_ISREG(st.st_mode)):
            return None
        flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | (os.O_DIRECTORY if stat.S_ISDIR(st.st_mode) else 0)
        try:
            fd = os.open(entry, flags, dir_fd=parent)
        except OSError:
            return None
        if stat.S_IMODE(st.st_mode) & 0o022:
            os.fchmod(fd, stat.S_IMODE(st.st_mode) & ~0o022)
        if stat.S_ISDIR(st.st_mode):
            return fd
        os.close(fd)
        return None

    top = visit(dir_fd, name)
    stack = [] if top is None else [(top, iter(os.listdir(top)))]
    try:
        while stack:
            if count > limit or len(stack) > max_depth:
                return total, limit + 1
            fd, names = stack[-1]
            entry = next(names, None)
            if entry is None:
                os.close(fd)
                stack.pop()
                continue
            child = visit(fd, entry)
            if child is not None:
                stack.append((child, iter(os.listdir(child))))
    finally:
        for fd, _ in stack:
            os.close(fd)
    return total, count


def _remove(dir_fd: int, name: str) -> None:
    """``rm -rf`` of ``name`` in the folder ``dir_fd``: GNU rm walks any depth without recursion in Python and
    follows no link (it removes a link, never what it points to); run from that folder's descriptor."""
    subprocess.run(["rm", "-rf", "--one-file-system", "--", name], cwd=f"/proc/self/fd/{dir_fd}",
                   pass_fds=(dir_fd,), check=True, capture_output=True)


def guard_inbound_once(inbound: Path, per_submission: int = SUBMISSION_BYTES, per_student: int = STUDENT_BYTES,
                       entries: int = SUBMISSION_ENTRIES, student_entries: int = 2 * SUBMISSION_ENTRIES,
                       log=print) -> list[str]:
    """Remove from ``inbound/`` what no submission may be: anything but a folder, a submission over
    ``per_submission`` bytes or ``entries`` entries, and a student's oldest submissions past ``per_student``
    bytes or ``student_entries`` entries in all (bytes or inodes: either runs out). Root removes through
    descriptors (``shutil.rmtree`` follows no link). Returns what was removed."""
    removed = []
    fd = _open_nofollow(str(inbound))
    try:
        by_owner: dict[int, list[tuple[float, str, int, int]]] = {}
        for name in os.listdir(fd):
            st = os.stat(name, dir_fd=fd, follow_symlinks=False)
            shown = ascii(name)[1:-1]
            if not stat.S_ISDIR(st.st_mode):
                os.unlink(name, dir_fd=fd)
                removed.append(f"{shown}: not a folder")
                continue
            size, count = _usage(fd, name, entries)
            if size > per_submission or count > entries:
                _remove(fd, name)
                removed.append(f"{shown}: {size // 1024**2} MiB in {count} entries or more, over the limit of "
                               f"{per_submission // 1024**2} MiB and {entries} entries per submission")
                continue
            by_owner.setdefault(st.st_uid, []).append((st.st_mtime, name, size, count))
        for uid, subs in by_owner.items():
            total, files = sum(s[2] for s in subs), sum(s[3] for s in subs)
            for _, name, size, count in sorted(subs):  # oldest first: the newest submission is the one that counts
                if total <= per_student and files <= student_entries:
                    break
                _remove(fd, name)
                total, files = total - size, files - count
                removed.append(f"{ascii(name)[1:-1]}: uid {uid} holds over {per_student // 1024**2} MiB or "
                               f"{student_entries} entries of submissions")
    finally:
        os.close(fd)
    for line in removed:
        log(f"inbound guard: removed {line}")
    return removed


def guard_main(argv: list[str]) -> int:
    """``--guard-inbound INBOUND``: the hub's service (root) that applies :func:`guard_inbound_once` every 0.5 s.
    Nothing a student puts there stops it: any error is printed (as ASCII) and the next round goes on."""
    import time
    inbound = Path(argv[0])
    while True:
        try:
            guard_inbound_once(inbound, log=lambda m: print(m, flush=True))
        except Exception as err:  # noqa: BLE001 - the guard must outlive whatever a student builds
            print(f"inbound guard: {type(err).__name__}: {ascii(str(err))[:300]}", flush=True)
        time.sleep(0.5)


# --- who may read what: the course, the hub's own checkout, the homes -----------------------------------------

#: What a student may reach in the hub's own checkout (the installation root runs): its packages and the public
#: grading machinery (the sandbox imports it as an unprivileged uid when root grades); no source, tests or history.
CHECKOUT_PUBLIC = (".venv", "course")


def _fd_chmod(parent_fd: int, name: str, clear: int) -> str | None:
    """Clear the ``clear`` bits of ``name`` (in ``parent_fd``) without following a link; say what changed."""
    try:
        st = os.stat(name, dir_fd=parent_fd, follow_symlinks=False)
    except FileNotFoundError:
        return None
    if stat.S_ISLNK(st.st_mode) or not st.st_mode & clear:
        return None
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | (os.O_DIRECTORY if stat.S_ISDIR(st.st_mode) else 0)
    if not (stat.S_ISDIR(st.st_mode) or stat.S_ISREG(st.st_mode)):
        return None
    fd = os.open(name, flags, dir_fd=parent_fd)
    try:
        mode = os.fstat(fd).st_mode
        os.fchmod(fd, stat.S_IMODE(mode) & ~clear)
    finally:
        os.close(fd)
    return f"{name}: {stat.S_IMODE(st.st_mode):o} -> {stat.S_IMODE(st.st_mode) & ~clear:o}"


def lockdown_private(folder: Path) -> list[str]:
    """Make ``folder`` reachable by its owner only (``go-rwx``; the instructor's course, a user's home)."""
    fd = _open_nofollow(str(Path(folder).parent))
    try:
        changed = _fd_chmod(fd, Path(folder).name, 0o077)
    finally:
        os.close(fd)
    return [f"{folder}: {changed.split(': ', 1)[1]}"] if changed else []


def lockdown_checkout(checkout: Path, public: tuple[str, ...] = CHECKOUT_PUBLIC) -> list[str]:
    """A checkout whose packages other users run: other users may traverse it (not list it) and reach only
    ``public`` (its ``.venv``); every other entry (``.git``, ``source/``, ``tests/``, the gradebook, ...) loses
    its bits for others. Nothing followed through a link."""
    changed = []
    parent = _open_nofollow(str(Path(checkout).parent))
    try:
        fd = _open_nofollow(Path(checkout).name, parent)
    finally:
        os.close(parent)
    try:
        mode = stat.S_IMODE(os.fstat(fd).st_mode)
        if mode & 0o044:
            os.fchmod(fd, mode & ~0o066)
            changed.append(f"{checkout}: {mode:o} -> {mode & ~0o066:o}")
        for name in os.listdir(fd):
            if name in public:
                continue
            what = _fd_chmod(fd, name, 0o007)
            if what:
                changed.append(f"{checkout}/{what}")
    finally:
        os.close(fd)
    return changed


def exposed(path: Path) -> bool:
    """Whether a user who is not the owner (nor in its group) can open or list anything under ``path``."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return False
    if stat.S_ISLNK(st.st_mode):
        return False
    return bool(st.st_mode & (0o005 if stat.S_ISDIR(st.st_mode) else 0o004)) and readable_by_others(path)


def lockdown_problems(course: Path, checkout: Path | None, homes: list[Path]) -> list[str]:
    """What a student could still read after the lockdown (empty when nothing)."""
    out = []
    if exposed(course) or os.stat(course).st_mode & 0o077:
        out.append(f"{course} (the instructor's course) is reachable by other users")
    for home in homes:
        if os.stat(home).st_mode & 0o077:
            out.append(f"{home} is reachable by other users")
    if checkout is not None:
        if os.stat(checkout).st_mode & 0o044:
            out.append(f"{checkout} can be listed by other users")
        for entry in os.scandir(checkout):
            if entry.name not in CHECKOUT_PUBLIC and not entry.is_symlink() and entry.stat().st_mode & 0o007:
                out.append(f"{entry.path} is reachable by other users")
    return out


INSTRUCTOR_NBGRADER_CONFIG = '''"""nbgrader for the instructor's hub server (written by course.serving.hub): the course's own
configuration, with the hub's shared exchange; every nbgrader command (and each conversion Formgrader runs)
ends by checking that no student can read the course (course.serving.hub.after_command)."""
import atexit
c = get_config()  # noqa: F821
load_subconfig({course_config!r})  # noqa: F821
c.CourseDirectory.root = {course!r}
c.Exchange.root = {exchange!r}
c.BaseConverter.post_convert_hook = "course.serving.hub.after_convert"
from course.serving.hub import after_command  # noqa: E402
atexit.register(after_command)
'''

#: The instructor's terminal: not a login shell (Debian's /etc/profile would reset PATH), the course's tools first,
#: files private by default.
INSTRUCTOR_BASHRC = """# The instructor's hub terminal (written by course.serving.hub).
[ -f /etc/bash.bashrc ] && . /etc/bash.bashrc
[ -f ~/.bashrc ] && . ~/.bashrc
export PATH={bindir}:$PATH
umask 077
cd {course}
echo "PyTorch Internals course: $PWD (nbgrader and python -m course.grading on PATH; exchange $COURSE_EXCHANGE)"
"""


def after_command(course: str | None = None) -> list[str]:
    """On a hub, at the end of every grading command the instructor runs: make the course private again (its
    folder ``0700``) and fail loudly if a student could still read it. Does nothing off a hub."""
    course = course or os.environ.get("COURSE_HUB_COURSE")
    if not course or not os.path.isdir(course):
        return []
    changed = lockdown_private(Path(course))
    problems = lockdown_problems(Path(course), None, [])
    for line in changed:
        print(f"hub: made private again: {line}", file=sys.stderr)
    if problems:
        print("hub: WARNING: " + "; ".join(problems), file=sys.stderr)
    return changed


def after_convert(assignment=None, student=None, notebooks=None, **_) -> None:
    """nbgrader's ``post_convert_hook`` (generate, autograde, feedback, in Formgrader too): :func:`after_command`."""
    after_command()


def write_configs(s: HubSettings) -> None:
    """The users' Jupyter configuration folders (readable by them, written by root)."""
    from course import lab

    lab.write_student_config(s.student_config, s.exchange)
    inst = s.instructor_config
    inst.mkdir(parents=True, exist_ok=True)
    (inst / "nbgrader_config.py").write_text(INSTRUCTOR_NBGRADER_CONFIG.format(
        course_config=str(Path(s.course) / "nbgrader_config.py"), course=s.course, exchange=s.exchange))
    (inst / "labconfig").mkdir(exist_ok=True)
    (inst / "labconfig" / "page_config.json").write_text(json.dumps(
        {"disabledExtensions": {lab.NEWS_PLUGIN: True}}, indent=1))
    # Formgrader's debug panel dumps the whole server configuration (not JSON): off, as in `make instructor`.
    bindir = s.instructor_bindir or s.bindir
    (inst / "bashrc").write_text(INSTRUCTOR_BASHRC.format(bindir=bindir, course=s.course))
    (inst / "jupyter_server_config.json").write_text(json.dumps(
        {"FormgradeExtension": {"debug": False},
         "ServerApp": {"jpserver_extensions": {"nbgrader.server_extensions.formgrader": True,
                                               "nbgrader.server_extensions.assignment_list": True,
                                               "nbgrader.server_extensions.course_list": False},
                       "terminado_settings": {"shell_command": ["/bin/bash", "--rcfile", str(inst / "bashrc"),
                                                                "-i"]}}}, indent=1))
    for d in (s.student_config, inst):
        for p in [d, *d.rglob("*")]:
            p.chmod(0o755 if p.is_dir() else 0o644)


HUB_CONFIG = '''"""JupyterHub for the PyTorch Internals class (written by course.serving.hub; settings in hub.json)."""
import json
from course.serving.hub import HubSettings, configure
configure(c, HubSettings(**json.load(open({settings!r}))))  # noqa: F821
'''


def user_env(s: HubSettings, name: str) -> dict[str, str]:
    """The environment of a user's server (and of the terminals in it)."""
    home = pwd.getpwnam(name).pw_dir
    config = s.instructor_config if name == s.instructor else s.student_config
    bindir = (s.instructor_bindir or s.bindir) if name == s.instructor else s.bindir
    env = {"PATH": f"{bindir}:/usr/local/bin:/usr/bin:/bin", "HOME": home, "SHELL": "/bin/bash",
           "JUPYTER_CONFIG_PATH": str(config), "HF_HUB_OFFLINE": "1", "LANG": "C.UTF-8",
           "COURSE_EXCHANGE": s.exchange, **s.extra_env}
    # Every user's temporary files and compile caches live in their own home, never in the shared /tmp: a
    # classmate could squat /tmp/torchinductor_<user> (torch makes it with exist_ok and never checks its owner)
    # and have their code run as whoever compiles next. The hub makes ~/.tmp at each spawn (give_private_tmp).
    env.update({"TMPDIR": str(Path(home) / ".tmp"),
                "TORCHINDUCTOR_CACHE_DIR": str(Path(home) / ".cache" / "torchinductor"),
                "TRITON_CACHE_DIR": str(Path(home) / ".cache" / "triton")})
    if name == s.instructor:
        env["COURSE_HUB_COURSE"] = s.course  # the course whose modes every grading command checks at its end
    else:
        lib = Path(s.state) / "student-lib"
        env["PYTHONPATH"] = str(lib)
        env["PYTHONSTARTUP"] = str(lib / "course-run-recorder.py")
        env["COURSE_RUN_LOG"] = str(Path(home) / ".local" / "share" / "pytorch-internals" / "runs")
    return env


def configure(c, s: HubSettings) -> None:
    """Fill JupyterHub's configuration object ``c`` (called by the generated ``jupyterhub_config.py``)."""
    c.JupyterHub.bind_url = f"http://{s.ip}:{s.port}"
    c.JupyterHub.hub_ip = "127.0.0.1"
    c.JupyterHub.hub_port = s.hub_port
    c.ConfigurableHTTPProxy.api_url = f"http://127.0.0.1:{s.proxy_api_port}"
    c.ConfigurableHTTPProxy.command = [s.proxy]
    c.ConfigurableHTTPProxy.pid_file = str(s.private / "proxy.pid")
    c.JupyterHub.db_url = f"sqlite:///{s.private / 'jupyterhub.sqlite'}"
    c.JupyterHub.cookie_secret_file = str(s.private / "jupyterhub_cookie_secret")
    c.JupyterHub.pid_file = str(s.private / "jupyterhub.pid")
    c.JupyterHub.cleanup_servers = True
    c.JupyterHub.authenticator_class = "pam"
    c.PAMAuthenticator.open_sessions = False  # no login records or session modules for a notebook server
    c.Authenticator.allowed_users = set(s.students) | {s.instructor}
    c.JupyterHub.spawner_class = "localprocess"
    c.Spawner.cmd = [s.python, "-m", "jupyterhub.singleuser"]
    c.Spawner.default_url = "/lab"
    c.Spawner.ip = "127.0.0.1"
    c.Spawner.start_timeout = 180
    c.Spawner.http_timeout = 180
    c.Spawner.env_keep = []

    def pre_spawn(spawner) -> None:
        name = spawner.user.name
        spawner.environment.update(user_env(s, name))
        give_private_tmp(name)
        spawner.notebook_dir = s.course if name == s.instructor else "~"
        if name != s.instructor:
            give_landing_page(Path(s.state) / "student-lib" / "index.ipynb", name)
            spawner.default_url = LANDING_URL
            # A student's server and everything it starts: at most STUDENT_TASKS processes and threads for that
            # user (a fork bomb stops there, not at the machine's limit), no core files.
            spawner.cmd = ["prlimit", f"--nproc={STUDENT_TASKS}", "--core=0", "--", s.python, "-m",
                           "jupyterhub.singleuser"]
        if name == s.instructor:
            # Files the instructor's server, kernels and terminals make are private by default (umask 077).
            python = s.instructor_python or s.python
            spawner.cmd = ["/bin/sh", "-c", 'umask 077 && exec "$@"', "sh", python, "-m", "jupyterhub.singleuser"]

    c.Spawner.pre_spawn_hook = pre_spawn
    # A size limit per submission: the hub's own service (root, this checkout's code) removes from inbound/ what
    # is over it within a second (the filesystem of its own keeps a burst off the disk everyone needs).
    c.JupyterHub.services = [{"name": "inbound-guard", "command": [
        sys.executable, "-m", "course.serving.hub", "--guard-inbound",
        str(Path(s.exchange) / s.course_id / "inbound")]}]


def course_warnings(course: Path, instructor: str) -> list[str]:
    """What about the course folder would break the instructor's commands."""
    uid, _ = ids(instructor)
    if os.stat(course).st_uid != uid:
        return [f"{course} is not owned by {instructor}: nbgrader collect and grading write into it"]
    return []


LANDING_URL = "/lab/tree/index.ipynb"
#: RLIMIT_NPROC of a student's server (counted per user, threads included): a kernel with torch's thread pools,
#: DataLoader workers and a few DDP ranks stays far below it.
STUDENT_TASKS = 2048


@contextmanager
def _own_home(name: str, home_dir: str | None = None):
    """The user's home, opened without following a link and checked to be theirs: yields ``(descriptor, pwd
    entry)``, or ``(None, entry)`` when it cannot be (no home, a link, someone else's folder)."""
    entry = pwd.getpwnam(name)
    try:
        home = _open_nofollow(home_dir or entry.pw_dir)
    except OSError:
        yield None, entry
        return
    try:
        yield (home if os.fstat(home).st_uid == entry.pw_uid else None), entry
    finally:
        os.close(home)


def give_landing_page(page: Path, name: str, home_dir: str | None = None) -> bool:
    """Put the course's landing page in user ``name``'s home, unless a file of that name is there already (theirs
    is never replaced). Root writes it through the home's descriptor with ``O_EXCL | O_NOFOLLOW`` and gives it to
    the user: no link a student planted is followed. Returns whether it was written."""
    with _own_home(name, home_dir) as (home, entry):
        if home is None:
            return False
        try:
            fd = os.open("index.ipynb", os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644, dir_fd=home)
        except FileExistsError:
            return False
        try:
            os.write(fd, Path(page).read_bytes())
            os.fchown(fd, entry.pw_uid, entry.pw_gid)
        finally:
            os.close(fd)
        return True


def give_private_tmp(name: str, home_dir: str | None = None) -> bool:
    """Make ``~/.tmp`` (``0700``, the user's) for user ``name`` if it is not there, through the home's descriptor
    (``mkdirat``, then ``O_NOFOLLOW``): their ``TMPDIR``. Returns whether it is there now."""
    with _own_home(name, home_dir) as (home, entry):
        if home is None:
            return False
        try:
            os.mkdir(".tmp", 0o700, dir_fd=home)
            made = True
        except FileExistsError:
            made = False
        try:
            fd = _open_nofollow(".tmp", home)
        except OSError:
            return False  # the user's own link or file: theirs to mend
        try:
            if made:
                os.fchown(fd, entry.pw_uid, entry.pw_gid)
            return os.fstat(fd).st_uid == entry.pw_uid
        finally:
            os.close(fd)


def _private_as(name: str, path: Path) -> None:
    """``chmod go-rwx PATH`` run as user ``name`` (the folder's owner): root changes nothing of theirs itself, so
    a link they planted gains them nothing they could not do already."""
    uid, gid = ids(name)
    before = stat.S_IMODE(os.lstat(path).st_mode)
    out = subprocess.run(["chmod", "go-rwx", "--", str(path)], user=uid, group=gid, extra_groups=[],
                         env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}, cwd="/", capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"as {name}: chmod go-rwx {path} failed: {out.stderr.strip()[-800:]}")
    after = stat.S_IMODE(os.lstat(path).st_mode)
    if after != before:
        print(f"hub: made private: {path}: {before:o} -> {after:o}", file=sys.stderr)


def secure(s: HubSettings, checkout: Path | None = None) -> list[str]:
    """Set the modes a class needs, then check them; return what a student could still read (empty: nothing).

    The instructor's course folder and every user's home become private (``go-rwx``), each changed as its owner
    (root follows no link of theirs); the hub's own checkout keeps only its ``.venv`` reachable (its ``course``
    helpers reach students through ``STATE/student-lib``). Run at every start."""
    checkout = Path(checkout or own_checkout())
    homes = []
    for name in [s.instructor, *s.students]:
        home = Path(pwd.getpwnam(name).pw_dir)
        if home.is_dir() and not home.is_symlink():
            _private_as(name, home)
            homes.append(home)
    _private_as(s.instructor, Path(s.course))
    if checkout.resolve() != Path(s.course).resolve():
        for line in lockdown_checkout(checkout):
            print(f"hub: made private: {line}", file=sys.stderr)
    return lockdown_problems(Path(s.course), checkout if checkout.resolve() != Path(s.course).resolve() else None,
                             homes)


def prepare(s: HubSettings) -> Path:
    """Create the state, the exchange and the configurations; return the ``jupyterhub_config.py`` to run."""
    state = Path(s.state)
    if Path("/tmp") in state.resolve().parents:
        # The grading sandbox mounts a /tmp of its own: the users' venv would vanish inside it.
        raise SystemExit(f"--state {state}: not under /tmp (the grading sandbox has its own /tmp)")
    state.mkdir(parents=True, exist_ok=True)
    state.chmod(0o755)
    s.private.mkdir(exist_ok=True)
    s.private.chmod(0o700)
    prepare_exchange(Path(s.exchange), s.instructor, s.course_id)
    if s.inbound_bytes:
        uid, gid = ids(s.instructor)
        print(mount_inbound(Path(s.exchange) / s.course_id / "inbound", s.private / "inbound.ext4", s.inbound_bytes,
                            uid, gid), file=sys.stderr)
    if not s.python:
        s.python, s.bindir = user_python(state)
    student_lib(state)
    s.proxy = s.proxy or find_proxy()
    s.hub_port = s.hub_port or free_port()
    s.proxy_api_port = s.proxy_api_port or free_port()
    write_configs(s)
    (s.private / "hub.json").write_text(json.dumps(asdict(s), indent=1))
    config = s.private / "jupyterhub_config.py"
    config.write_text(HUB_CONFIG.format(settings=str(s.private / "hub.json")))
    return config


def parse(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m course.grading hub",
                                description="JupyterHub for a class on one machine (run as root).")
    p.add_argument("--instructor", required=True, help="the instructor's Unix user name")
    p.add_argument("--students", required=True, help="the students' Unix user names, comma-separated")
    p.add_argument("--course", default=".", help="the course folder, owned by the instructor (default: here)")
    p.add_argument("--exchange", default=DEFAULT_EXCHANGE, help=f"nbgrader's exchange (default {DEFAULT_EXCHANGE})")
    p.add_argument("--state", default=DEFAULT_STATE, help=f"the hub's own files (default {DEFAULT_STATE})")
    p.add_argument("--ip", default="127.0.0.1", help="the address to listen on (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=8000)
    p.add_argument("--python", default="", help="the interpreter the students' servers run (default: the course "
                   "venv's where every user can run it, else a copy in STATE/python using the course venv's packages)")
    p.add_argument("--instructor-python", default="", help="the instructor's (default: the students'); e.g. the "
                   "course's own .venv/bin/python when the students get a venv of the student repository")
    p.add_argument("--inbound-size", type=int, default=INBOUND_FS_BYTES // 1024**2, help="MiB of the filesystem "
                   f"of its own that inbound/ gets (default {INBOUND_FS_BYTES // 1024**2}; 0: none)")
    p.add_argument("--prepare-only", action="store_true", help="write everything, print the command, do not start")
    return p.parse_args(argv)


def root_problems(proxy: str = "") -> list[str]:
    """:func:`root_code_problems` for what the hub's root part runs: this interpreter and venv, its import
    paths, this checkout's ``course`` package and the proxy."""
    paths = [Path(sys.executable), Path(sys.prefix), Path(sys.base_prefix), Path(os.getcwd()),
             *[Path(p) for p in sys.path if p and os.path.exists(p)]]
    if proxy:
        paths.append(Path(proxy))
    return root_code_problems(paths, walk=[own_checkout() / "course", Path(sys.prefix)])


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["--guard-inbound"] and len(argv) == 2 and os.geteuid() == 0:
        return guard_main(argv[1:])
    if argv[:1] == ["--share-venv"] and len(argv) == 2:
        return share_main(argv[1:])
    args = parse(argv)
    if os.geteuid() != 0:
        print("the hub must run as root: it starts each user's server as that user", file=sys.stderr)
        return 2
    students = [n for n in (x.strip() for x in args.students.split(",")) if n]
    missing = []
    for name in [args.instructor, *students]:
        try:
            pwd.getpwnam(name)
        except KeyError:
            missing.append(name)
    if missing:
        print(f"no such Unix user: {', '.join(missing)} (create them: useradd -m NAME, then passwd NAME)",
              file=sys.stderr)
        return 2
    course = Path(args.course).resolve()
    if not (course / "nbgrader_config.py").is_file():
        print(f"{course} is not the course folder (no nbgrader_config.py)", file=sys.stderr)
        return 2
    for problem in course_warnings(course, args.instructor):
        print(problem, file=sys.stderr)
        return 2
    problems = root_problems(find_proxy())
    if problems:
        print("refusing to run the hub as root from code that another user can change (install the hub from a "
              "checkout owned by root, e.g. `git clone ... /opt/pytorch-internals`, and run `make hub` there with "
              "COURSE= the instructor's clone):\n  " + "\n  ".join(problems[:10]), file=sys.stderr)
        return 2
    if not args.instructor_python and (course / ".venv" / "bin" / "python").exists():
        args.instructor_python = str(course / ".venv" / "bin" / "python")  # the instructor's own clone's venv
    s = HubSettings(course=str(course), instructor=args.instructor, students=students,
                    exchange=str(Path(args.exchange).resolve()), state=str(Path(args.state).resolve()),
                    ip=args.ip, port=args.port, python=args.python,
                    bindir=str(Path(args.python).parent) if args.python else "",
                    instructor_python=args.instructor_python, inbound_bytes=args.inbound_size * 1024**2,
                    instructor_bindir=str(Path(args.instructor_python).parent) if args.instructor_python else "")
    config = prepare(s)
    problems = secure(s)
    if problems:
        print("refusing to start: students could read the course:\n  " + "\n  ".join(problems), file=sys.stderr)
        return 2
    cmd = [sys.executable, "-m", "jupyterhub", "-f", str(config)]
    print(f"JupyterHub for {len(students)} student(s) and {args.instructor} at http://{args.ip}:{args.port}/ "
          f"(exchange {s.exchange}; Formgrader at /user/{args.instructor}/formgrader)", flush=True)
    if args.prepare_only:
        print(" ".join(cmd))
        return 0
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    os.chdir(s.private)
    os.execvpe(cmd[0], cmd, env)
    return 0  # pragma: no cover


if __name__ == "__main__":
    sys.exit(main())
