"""Run untrusted code where it can read only its own folder and the installed environment.

One :class:`Sandbox` per submission. :meth:`Sandbox.wrap` turns a command
(the Jupyter kernel of the student's notebook) into one that runs inside it,
and :meth:`Sandbox.preexec` (the ``preexec_fn`` of that command) applies the
resource limits. :class:`Watchdog` enforces the limits that rlimits cannot
(the memory and process count of the whole process tree, the wall time) and
kills the tree at the end.

Mechanism (see the README's "How much to trust the grades"):

* **bubblewrap** (``bwrap``, Debian package ``bubblewrap``) builds an empty
  root with new mount, PID, network, IPC and UTS namespaces. Mounted
  read-only: the system (``/usr`` and friends, a few files of ``/etc``), the
  Python installation, the virtual environment and the ``course`` package.
  Mounted writable: the submission's own scratch folder and the folder that
  carries the kernel's sockets and the probes' results. Nothing else exists:
  not ``source/``, not the gradebook, not other students' folders, not the
  instructor's home. With a new network namespace there is no network; the
  judge talks to the kernel over Unix sockets.
* **As root**, the code inside also drops to an unprivileged uid of its own
  (``setpriv``), so ``RLIMIT_NPROC`` applies and files it can see are not
  root's. **As a normal user**, bubblewrap uses an unprivileged user
  namespace and the code keeps the instructor's uid (mapped).
* **Limits**: ``RLIMIT_NPROC`` (processes), ``RLIMIT_DATA`` (memory per
  process), ``RLIMIT_FSIZE``, ``RLIMIT_CORE=0``; a cgroup (v2, or v1 as on
  this machine) with ``memory`` and ``pids`` limits for the whole tree where
  one can be created; and the :class:`Watchdog`, which sums the tree's
  resident memory and counts its processes every 0.2 s, and kills it when a
  cap or the wall time is exceeded.
* **Degraded mode.** Where bubblewrap is missing or cannot create
  namespaces, the code runs as a plain child process with the same limits,
  a clean environment and the scratch folder as its working directory, but
  **without** filesystem or network isolation. This is never silent:
  :func:`detect` says why, the grading command prints a warning banner, and
  every report carries the flag ``sandbox degraded``. ``--require-sandbox``
  turns it into an error.
"""
from __future__ import annotations

import ctypes
import os
import random
import resource
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from course.grading.config import GiB, Limits  # noqa: F401 - Limits is part of this module's interface
from course.grading.run.scratch import compile_caches


@dataclass(frozen=True)
class Mechanism:
    """What this machine can do: ``kind`` is "bwrap" or "none"; ``why`` says why not bwrap."""

    kind: str
    bwrap: str | None
    setpriv: str | None
    why: str = ""

    @property
    def degraded(self) -> bool:
        return self.kind != "bwrap"


def _system_binds() -> list[str]:
    """bwrap arguments that mount the operating system read-only (merged-/usr or not)."""
    args = ["--ro-bind", "/usr", "/usr"]
    for top in ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"):
        p = Path(top)
        if p.is_symlink():
            args += ["--symlink", os.readlink(top), top]
        elif p.is_dir():
            args += ["--ro-bind", top, top]
    # The few files of /etc that the dynamic loader, compilers and fonts need. Parents that bwrap
    # creates itself are 0700, which an unprivileged uid cannot traverse: make them 0755.
    args += ["--perms", "0755", "--dir", "/etc"]
    for name in ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "alternatives", "localtime",
                 "fonts", "mime.types", "nsswitch.conf"):
        p = Path("/etc") / name
        if p.exists():
            args += ["--ro-bind", str(p), str(p)]
    # CPU topology, which torch's cpuinfo reads (it warns on stderr without it).
    cpu = Path("/sys/devices/system/cpu")
    if cpu.is_dir():
        for parent in ("/sys", "/sys/devices", "/sys/devices/system"):
            args += ["--perms", "0755", "--dir", parent]
        args += ["--ro-bind", str(cpu), str(cpu)]
    return args


@lru_cache(maxsize=None)
def detect() -> Mechanism:
    """Return the sandbox mechanism available here (cached): bubblewrap if it works, else "none" with the reason."""
    if os.environ.get("COURSE_SANDBOX", "").lower() == "none":
        return Mechanism("none", None, None, "COURSE_SANDBOX=none is set")
    bwrap = shutil.which("bwrap")
    if not bwrap:
        return Mechanism("none", None, None, "bubblewrap (bwrap) is not installed: apt-get install bubblewrap")
    setpriv = shutil.which("setpriv") if os.geteuid() == 0 else None
    if os.geteuid() == 0 and not setpriv:
        return Mechanism("none", bwrap, None, "running as root, but setpriv (util-linux) is missing to drop privileges")
    probe = [bwrap, *_system_binds(), "--proc", "/proc", "--dev", "/dev", "--unshare-pid",
             "--unshare-net", "--unshare-ipc", "--die-with-parent", "--new-session", "/bin/true"]
    try:
        proc = subprocess.run(probe, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as err:
        return Mechanism("none", bwrap, setpriv, f"bwrap could not start: {err}")
    if proc.returncode != 0:
        return Mechanism("none", bwrap, setpriv, "bwrap cannot create namespaces here: "
                         + (proc.stderr.strip() or f"exit code {proc.returncode}"))
    return Mechanism("bwrap", bwrap, setpriv)


def python_roots(python: str = sys.executable) -> list[Path]:
    """Return the folders the interpreter may need read-only: its installation, the venv, its import paths."""
    roots = {Path(sys.base_prefix).resolve(), Path(sys.prefix).resolve(), Path(python).resolve().parent.parent}
    for entry in sys.path:
        if entry and Path(entry).is_dir():
            roots.add(Path(entry).resolve())
    # Editable installs point outside site-packages (course/ in this repository).
    import importlib.util
    spec = importlib.util.find_spec("course")
    if spec and spec.submodule_search_locations:
        for loc in spec.submodule_search_locations:
            roots.add(Path(loc).resolve())
    return sorted(roots)


def outermost(paths: list[Path]) -> list[Path]:
    """Drop the paths that lie inside another one of them."""
    out: list[Path] = []
    for r in sorted(paths, key=lambda p: len(p.parts)):
        if not any(r == o or o in r.parents for o in out):
            out.append(r)
    return out


def _forbidden_roots(course_root: Path | None) -> list[Path]:
    """Folders that must never be mounted, even if an import path points into them."""
    out = [Path.home().resolve()] if Path.home().exists() else []
    if course_root is not None:
        out.append(course_root.resolve())
    return out


def _mountable(root: Path, forbidden: list[Path], course_root: Path | None) -> bool:
    """Whether an import root may be mounted: never the home or course folder (or above them); inside the
    course folder only the virtual environment and the ``course`` package."""
    if any(root == f or root in f.parents for f in forbidden):
        return False
    if course_root is not None and course_root.resolve() in root.parents:
        venv = Path(sys.prefix).resolve()
        is_pkg = root.name == "course" and (root / "__init__.py").exists()
        return is_pkg or root == venv or venv in root.parents
    return True


def _cgroup_dirs(name: str, limits: Limits) -> list[Path]:
    """Create a cgroup (v2, else v1 memory + pids) limiting the tree; return its folders (empty if impossible)."""
    made: list[Path] = []
    base = Path("/sys/fs/cgroup")
    try:
        own = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return []
    v1 = {}
    for line in own:
        parts = line.split(":", 2)
        if len(parts) == 3:
            for ctrl in parts[1].split(","):
                v1[ctrl] = parts[2]
    try:
        if (base / "cgroup.controllers").exists():  # pure v2
            parent = base / v1.get("", "/").lstrip("/")
            d = parent / name
            d.mkdir()
            made.append(d)
            (d / "memory.max").write_text(str(limits.memory_bytes))
            (d / "pids.max").write_text(str(limits.processes))
            return made
        for ctrl, fname, value in (("memory", "memory.limit_in_bytes", limits.memory_bytes),
                                   ("pids", "pids.max", limits.processes)):
            root = base / ctrl
            if not root.is_dir() or ctrl not in v1:
                continue
            d = root / v1[ctrl].lstrip("/") / name
            d.mkdir()
            made.append(d)
            (d / fname).write_text(str(value))
    except OSError:
        for d in reversed(made):
            try:
                d.rmdir()
            except OSError:
                pass
        return []
    return made


class Inotify:
    """Report opens of decoy files (Linux inotify through ctypes; silently inactive where unavailable)."""

    IN_ACCESS, IN_OPEN = 0x1, 0x20

    def __init__(self) -> None:
        self.fd = -1
        self.watches: dict[int, str] = {}
        try:
            self._libc = ctypes.CDLL(None, use_errno=True)
            self.fd = self._libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
        except (OSError, AttributeError):
            self.fd = -1

    def watch(self, path: Path) -> None:
        if self.fd < 0:
            return
        wd = self._libc.inotify_add_watch(self.fd, str(path).encode(), self.IN_OPEN | self.IN_ACCESS)
        if wd >= 0:
            self.watches[wd] = str(path)

    def hits(self) -> list[str]:
        """Return the watched paths opened or read since the last call (each once)."""
        seen: list[str] = []
        if self.fd < 0:
            return seen
        while True:
            try:
                data = os.read(self.fd, 65536)
            except (BlockingIOError, OSError):
                break
            if not data:
                break
            i = 0
            while i + 16 <= len(data):
                wd, _mask, _cookie, length = struct.unpack_from("iIII", data, i)
                name = data[i + 16:i + 16 + length].rstrip(b"\0").decode(errors="replace")
                i += 16 + length
                path = self.watches.get(wd, "?") + (f"/{name}" if name else "")
                if path not in seen:
                    seen.append(path)
        return seen

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


SEED = "/run/submission-files"  # inside the sandbox: the host's working folder, read-only, copied in at start


def disk_use(path: Path, cap_bytes: int, cap_entries: int = 20_000) -> tuple[int, int]:
    """(bytes on disk, entries) under ``path``, without following links; stops counting once past a cap."""
    used, entries, todo = 0, 0, [str(path)]
    while todo and used <= cap_bytes and entries <= cap_entries:
        try:
            with os.scandir(todo.pop()) as it:
                for e in it:
                    entries += 1
                    try:
                        st = e.stat(follow_symlinks=False)
                    except OSError:
                        continue
                    used += max(st.st_blocks * 512, 0)
                    if e.is_dir(follow_symlinks=False):
                        todo.append(e.path)
        except OSError:
            continue
    return used, entries


@dataclass
class Sandbox:
    """A sandbox for one submission.

    ``workdir`` (the submission's scratch folder) and ``ipcdir`` (sockets,
    connection file, probe results) are writable inside; ``visible`` are
    extra read-only folders (the decoy course around ``workdir``).
    """

    workdir: Path
    ipcdir: Path
    limits: Limits = field(default_factory=Limits)
    visible: list[Path] = field(default_factory=list)
    course_root: Path | None = None
    env: dict[str, str] = field(default_factory=dict)
    mechanism: Mechanism = field(default_factory=detect)
    threads: int | None = None

    def __post_init__(self) -> None:
        self.workdir = Path(self.workdir).resolve()
        self.ipcdir = Path(self.ipcdir).resolve()
        self.uid: int | None = None
        if os.geteuid() == 0 and not self.mechanism.degraded:
            # An unprivileged uid of its own: RLIMIT_NPROC counts per uid, and root is exempt from it.
            self.uid = random.randrange(200_000, 2_000_000)
        self.cgroups: list[Path] = []
        self.home = self.workdir / ".home"
        self.short_tmp = self.workdir / ".tmp"
        self.cache = self.workdir / ".cache"  # the code's caches inside (compile caches: scratch.compile_caches)

    # --- preparing ----------------------------------------------------------
    def prepare(self) -> None:
        """Create the writable folders, owned by the sandbox's uid, and the environment inside."""
        if self.mechanism.degraded:
            self.short_tmp = Path(tempfile.mkdtemp(prefix="jt-"))
        for d in (self.workdir, self.ipcdir, self.home, self.short_tmp):
            d.mkdir(parents=True, exist_ok=True)
        if self.uid is not None:
            for d in (self.workdir, self.ipcdir):
                for path in [d, *d.rglob("*")]:
                    try:
                        os.lchown(path, self.uid, self.uid)
                    except OSError:
                        pass
        (self.ipcdir / "passwd").write_text(
            f"student:x:{self.inner_uid}:{self.inner_uid}:student:{self.home}:/bin/sh\n")
        (self.ipcdir / "group").write_text(f"student:x:{self.inner_uid}:\n")
        os.chmod(self.ipcdir / "passwd", 0o644)
        os.chmod(self.ipcdir / "group", 0o644)

    @property
    def inner_uid(self) -> int:
        return self.uid if self.uid is not None else os.getuid()

    def environment(self) -> dict[str, str]:
        """Return the clean environment of the code inside (nothing of the instructor's own)."""
        venv_bin = str(Path(sys.executable).parent)
        cache = self.cache
        env = {
            "PATH": f"{venv_bin}:/usr/local/bin:/usr/bin:/bin",
            "HOME": str(self.home), "USER": "student", "LOGNAME": "student",
            "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8",
            # A short TMPDIR: multiprocessing puts AF_UNIX sockets there (DataLoader workers pass shared
            # tensors through them) and a socket path over 107 bytes fails inside a worker's feeder thread,
            # where the batch is silently lost and the loader waits forever. Inside bubblewrap /tmp is the
            # sandbox's own tmpfs; degraded, a short folder of its own (see prepare()).
            "TMPDIR": "/tmp" if not self.mechanism.degraded else str(self.short_tmp),
            "MPLCONFIGDIR": str(cache / "matplotlib"),
            "IPYTHONDIR": str(cache / "ipython"),
            "JUPYTER_RUNTIME_DIR": str(cache / "jupyter-runtime"),
            "JUPYTER_CONFIG_DIR": str(cache / "jupyter-config"),
            "JUPYTER_DATA_DIR": str(cache / "jupyter-data"),
            **compile_caches(cache),
            "TORCH_HOME": str(cache / "torch"),
            "HF_HOME": str(cache / "huggingface"),
            "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1",
            "PYTHONDONTWRITEBYTECODE": "1",
            "PYTHONWARNINGS": "ignore::DeprecationWarning",
            "PYDEVD_DISABLE_FILE_VALIDATION": "1",
        }
        # The course helpers as the judge imports them (an editable install's finder maps them to the same
        # folder; PYTHONPATH also covers a copy of the course elsewhere).
        import importlib.util
        spec = importlib.util.find_spec("course")
        if spec and spec.submodule_search_locations:
            env["PYTHONPATH"] = str(Path(list(spec.submodule_search_locations)[0]).resolve().parent)
        for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
            if self.threads:
                env[var] = str(self.threads)
            elif os.environ.get(var, "").isdigit():  # the grader's own thread budget (e.g. the test suite's)
                env[var] = os.environ[var]
        env.update(self.env)
        return env

    # --- the command --------------------------------------------------------
    def _parents(self, path: Path, done: set[Path]) -> list[str]:
        """bwrap arguments creating the parents of ``path`` as traversable (0755) folders."""
        args: list[str] = []
        for parent in reversed(path.parents):
            if parent == Path("/") or parent in done:
                continue
            done.add(parent)
            args += ["--perms", "0755", "--dir", str(parent)]
        return args

    def wrap(self, cmd: list[str]) -> list[str]:
        """Return ``cmd`` wrapped so that it runs inside the sandbox (or, degraded, with a clean environment)."""
        env = self.environment()
        if self.mechanism.degraded:
            return ["/usr/bin/env", "-i", *[f"{k}={v}" for k, v in env.items()], *cmd]
        m = self.mechanism
        args = [m.bwrap, *_system_binds(), "--proc", "/proc", "--dev", "/dev",
                "--perms", "01777", "--size", str(self.limits.tmpfs_bytes), "--tmpfs", "/tmp",
                "--perms", "01777", "--size", str(self.limits.tmpfs_bytes), "--tmpfs", "/dev/shm",
                "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
                "--hostname", "grader", "--die-with-parent", "--new-session", "--clearenv"]
        done: set[Path] = set()
        forbidden = _forbidden_roots(self.course_root)
        # Filter first (a stray '' or the course folder on sys.path must not hide the venv inside it), then
        # mount the outermost of what is left.
        for root in outermost([r for r in python_roots() if _mountable(r, forbidden, self.course_root)]):
            args += self._parents(root, done) + ["--ro-bind", str(root), str(root)]
        for root in self.visible:
            args += self._parents(root, done) + ["--ro-bind", str(root), str(root)]
        # The working folder is a tmpfs of its own, capped at limits.disk_bytes (a disk filler fills its own
        # quota, not the grader's disk); the intake's files are copied in from a read-only view of the host's
        # folder when the sandbox starts (SEED). The ipc folder stays the host's (the judge reads the probes'
        # results and reaches the kernel's sockets there): the Watchdog caps what is written into it.
        args += self._parents(self.workdir, done) + self._parents(Path(SEED), done) + [
                                                     "--ro-bind", str(self.workdir), SEED,
                                                     "--perms", "0777", "--size", str(self.limits.disk_bytes),
                                                     "--tmpfs", str(self.workdir)]
        args += self._parents(self.ipcdir, done) + ["--bind", str(self.ipcdir), str(self.ipcdir)]
        args += ["--ro-bind", str(self.ipcdir / "passwd"), "/etc/passwd",
                 "--ro-bind", str(self.ipcdir / "group"), "/etc/group"]
        for k, v in env.items():
            args += ["--setenv", k, v]
        args += ["--chdir", str(self.workdir)]
        if self.uid is not None:
            args += ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID", m.setpriv,
                     f"--reuid={self.uid}", f"--regid={self.uid}", "--clear-groups",
                     "--inh-caps=-all", "--bounding-set=-all", "--no-new-privs"]
        # As the student's uid: the submission's files into the capped working folder, then the command.
        copy_in = f'cp -R --preserve=mode,timestamps {SEED}/. "$PWD"/ 2>/dev/null; exec "$@"'
        return args + ["/bin/sh", "-c", copy_in, "sh"] + list(cmd)

    def clear_ipc(self) -> None:
        """Remove what the code inside left in the ipc folder (before a restart: a disk filler's files there must
        not kill the next kernel too); the judge's own passwd and group stay."""
        for entry in list(os.scandir(self.ipcdir)) if self.ipcdir.is_dir() else []:
            if entry.name in ("passwd", "group"):
                continue
            try:
                if entry.is_dir(follow_symlinks=False):
                    shutil.rmtree(entry.path, ignore_errors=True)
                else:
                    os.unlink(entry.path)
            except OSError:
                pass

    def watched_dirs(self) -> list[tuple[Path, int]]:
        """Host folders the code inside can write, with the bytes it may leave there (the Watchdog polls them):
        the ipc folder (a probe's result at most, twice, and the kernel's small files); degraded, also the
        working folder, which then has no tmpfs of its own."""
        out = [(self.ipcdir, 2 * self.limits.probe_result_bytes + 16 * 2 ** 20)]
        if self.mechanism.degraded:
            out.append((self.workdir, self.limits.disk_bytes))
        return out

    def preexec(self) -> None:
        """``preexec_fn`` of the wrapped command: a new session, rlimits, and the cgroup."""
        try:
            os.setsid()
        except OSError:  # already a session leader (jupyter_client starts a new session)
            pass
        lim = self.limits
        for res, value in ((resource.RLIMIT_CORE, 0),
                           (resource.RLIMIT_FSIZE, lim.file_bytes),
                           (resource.RLIMIT_NOFILE, lim.open_files),
                           (resource.RLIMIT_DATA, lim.memory_bytes)):
            try:
                resource.setrlimit(res, (value, value))
            except (ValueError, OSError):
                pass
        try:
            # Under its own uid (root case) the count starts at 0; under the instructor's uid, leave
            # room for the processes that user already runs.
            nproc = lim.processes if self.uid is not None else lim.processes + _count_own_processes()
            resource.setrlimit(resource.RLIMIT_NPROC, (nproc, nproc))
        except (ValueError, OSError):
            pass
        for d in self.cgroups:
            try:
                (d / "cgroup.procs").write_text(str(os.getpid()))
            except OSError:
                pass

    def enter_cgroup(self) -> bool:
        """Create this sandbox's cgroup (call before starting the command); return whether one exists."""
        self.cgroups = _cgroup_dirs(f"course-judge-{os.getpid()}-{id(self) & 0xffffff:x}", self.limits)
        return bool(self.cgroups)

    def survivors(self) -> list[int]:
        """Processes still alive in this sandbox's cgroup or under its uid (after a kill)."""
        pids: set[int] = set()
        for d in self.cgroups:
            try:
                pids.update(int(x) for x in (d / "cgroup.procs").read_text().split())
            except (OSError, ValueError):
                pass
        if self.uid is not None:
            for d in Path("/proc").iterdir():
                if d.name.isdigit():
                    try:
                        if d.stat().st_uid == self.uid:
                            pids.add(int(d.name))
                    except OSError:
                        pass
        return sorted(pids)

    def reap(self, timeout: float = 15.0) -> bool:
        """Kill whatever is left of the sandbox's processes and wait until none remain; return whether none do."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            left = self.survivors()
            if not left:
                return True
            for p in left:
                try:
                    os.kill(p, signal.SIGKILL)
                except OSError:
                    pass
            time.sleep(0.1)
        return not self.survivors()

    def cap_events(self) -> list[str]:
        """What the cgroup refused (forks over the process cap, allocations over the memory cap)."""
        out = []
        for d in self.cgroups:
            for name, what in (("pids.events", "process cap reached: {n} fork(s) refused (a fork bomb?)"),
                               ("memory.events", "memory cap reached: {n} time(s) (the kernel was killed for memory)"),
                               ("memory.failcnt", "memory cap reached: {n} allocation(s) refused")):
                f = d / name
                try:
                    text = f.read_text().split()
                except OSError:
                    continue
                if name == "memory.failcnt":
                    n = int(text[0]) if text else 0
                elif name == "memory.events":
                    n = int(text[text.index("oom_kill") + 1]) if "oom_kill" in text else 0
                else:
                    n = int(text[text.index("max") + 1]) if "max" in text else 0
                if n:
                    out.append(what.format(n=n))
        return out

    def cleanup(self) -> None:
        """Kill what is left, remove the cgroup and (degraded) the short temporary folder."""
        self.reap()
        if self.mechanism.degraded and self.short_tmp.name.startswith("jt-"):
            shutil.rmtree(self.short_tmp, ignore_errors=True)
        for d in self.cgroups:
            for _ in range(50):
                try:
                    d.rmdir()
                    break
                except OSError:
                    time.sleep(0.1)
        self.cgroups = []

    def describe(self) -> str:
        """One line: how this sandbox isolates (for reports)."""
        if self.mechanism.degraded:
            return f"degraded (no filesystem or network isolation): {self.mechanism.why}"
        who = f"uid {self.uid}" if self.uid is not None else f"uid {os.getuid()} in a user namespace"
        limits = f"memory {self.limits.memory_bytes / GiB:g} GiB, {self.limits.processes} processes"
        return f"bubblewrap, {who}, no network, {limits}" + (", cgroup" if self.cgroups else "")


def _count_own_processes() -> int:
    uid = os.getuid()
    n = 0
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                if d.stat().st_uid == uid:
                    n += 1
            except OSError:
                pass
    return n


def start_time(pid: int) -> int | None:
    """When ``pid`` started (clock ticks after boot, from /proc), or None if no such process.

    A PID is reused once its process is reaped: the pair (pid, start time) names one process for good.
    """
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        return int(stat[stat.rfind(")") + 2:].split()[19])
    except (OSError, ValueError, IndexError):
        return None


def descendants(pid: int, started: int | None = None) -> list[int]:
    """Return ``pid`` and every process below it (from /proc).

    With ``started`` (the root's :func:`start_time`), a root that is no longer that process (it ended and
    its PID went to another) has no tree: the list is empty, never a stranger's processes.
    """
    if started is not None and start_time(pid) != started:
        return []
    children: dict[int, list[int]] = {}
    # Every process's parent, from its /proc/<pid>/stat read as raw bytes (the watchdog does this five times a
    # second while a submission runs: a quarter of the CPU of reading each through pathlib's text decoding).
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            fd = os.open(f"/proc/{name}/stat", os.O_RDONLY)
            try:
                stat = os.read(fd, 4096)
            finally:
                os.close(fd)
            ppid = int(stat[stat.rfind(b")") + 2:].split(None, 2)[1])
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(ppid, []).append(int(name))
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(children.get(p, []))
    return out


_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def resident_bytes(pid: int) -> int:
    """A process's resident set size (every page it maps counted whole, shared or not), from ``/proc/<pid>/statm``:
    never below :func:`memory_bytes`, and about a thousand times cheaper to read for a process with torch loaded
    (0.01 ms against 11 ms here: ``smaps_rollup`` walks every mapping)."""
    try:
        with open(f"/proc/{pid}/statm", "rb") as f:
            return int(f.read().split()[1]) * _PAGE
    except (OSError, ValueError, IndexError):
        return 0


def memory_bytes(pid: int) -> int:
    """Return a process's proportional set size (shared pages split between sharers), else its RSS."""
    for path, key in ((f"/proc/{pid}/smaps_rollup", "Pss:"), (f"/proc/{pid}/status", "VmRSS:")):
        try:
            for line in Path(path).read_text().splitlines():
                if line.startswith(key):
                    return int(line.split()[1]) * 1024
        except (OSError, ValueError, IndexError):
            continue
    return 0


def kill_tree(pid: int, started: int | None = None) -> None:
    """SIGKILL ``pid``, its session and every descendant.

    Give ``started`` (the root's :func:`start_time` while it ran): once the root has ended and been reaped,
    its PID, and its number as a process group, may belong to someone else's process, which must not be
    killed. A root that is no longer that process is left alone; what it left inside the sandbox is the
    sandbox's to reap (its cgroup and uid), and bwrap's pid namespace ends with it.
    """
    procs = descendants(pid, started)
    if not procs:
        return
    try:
        os.killpg(os.getpgid(pid), signal.SIGKILL)
    except (OSError, ProcessLookupError):
        pass
    for p in procs:
        try:
            os.kill(p, signal.SIGKILL)
        except (OSError, ProcessLookupError):
            pass


class Watchdog(threading.Thread):
    """Polls a process tree; kills it when it exceeds its memory, process or wall-time cap.

    ``reason`` says why it killed (empty if it did not). ``peak_rss`` (the tree's proportional set size, shared
    pages split between sharers) and ``peak_processes`` are what it saw.

    The memory cap is on the tree's proportional set size, and reading it (``smaps_rollup``) costs about 11 ms of
    CPU for a process with torch loaded: at five polls a second, 7.5 % of a core for every submission being graded.
    Each poll reads the tree's resident set instead (:func:`resident_bytes`, never below the proportional size),
    and reads the proportional size only when the resident set is over the cap (so the kill decision is the one
    the proportional size alone gives, at the same poll), when it is 2 % above the highest seen so far (a new
    peak), and every 5 s.
    """

    def __init__(self, pid: int, limits: Limits, deadline: float, interval: float = 0.2,
                 dirs: list[tuple[Path, int]] | None = None, started: int | None = None) -> None:
        super().__init__(daemon=True)
        self.pid, self.limits, self.deadline, self.interval = pid, limits, deadline, interval
        # the tree is this process's, not a later one's with its PID: the caller's reading of its start time, if any
        self.started = started if started is not None else start_time(pid)
        self.dirs = list(dirs or [])  # (host folder the code inside can write, bytes it may hold)
        self.reason = ""
        self.peak_rss = 0
        self.peak_processes = 0
        self._halt = threading.Event()

    def run(self) -> None:
        at_cap_since = None
        polls = 0
        high = 0  # the highest resident size at which the proportional size was read
        while not self._halt.wait(self.interval):
            polls += 1
            procs = descendants(self.pid, self.started)
            if not procs:  # the kernel ended: nothing left to watch (its PID may now be another's)
                return
            resident = sum(resident_bytes(p) for p in procs)
            rss = 0  # the proportional set size, where read
            if resident > self.limits.memory_bytes or resident > 1.02 * high or polls % 25 == 1:
                rss = sum(memory_bytes(p) for p in procs)
                self.peak_rss = max(self.peak_rss, rss)
                high = max(high, resident)
            self.peak_processes = max(self.peak_processes, len(procs))
            # A fork bomb held at the process cap by RLIMIT_NPROC spins every one of its processes on a refused
            # fork(): honest code never sits near the cap, so a few seconds there end the run.
            near_cap = len(procs) >= 0.9 * self.limits.processes
            at_cap_since = (at_cap_since or time.monotonic()) if near_cap else None
            if rss > self.limits.memory_bytes:
                self.reason = (f"memory cap exceeded: the submission's processes used "
                               f"{rss / GiB:.1f} GiB (cap {self.limits.memory_bytes / GiB:g} GiB)")
            elif len(procs) > self.limits.processes + 3:  # bwrap, its init and setpriv's parent are not the student's
                self.reason = f"process cap exceeded: {len(procs)} processes (cap {self.limits.processes})"
            elif at_cap_since is not None and time.monotonic() - at_cap_since > 3:
                self.reason = (f"process cap reached and held for 3 s: {len(procs)} processes "
                               f"(cap {self.limits.processes}; a fork bomb?)")
            elif time.monotonic() > self.deadline:
                self.reason = f"wall time exceeded ({self.limits.wall_seconds:g} s for the whole submission)"
            elif polls % 5 == 0:  # about once a second: the host folders it can write
                for path, cap in self.dirs:
                    used, entries = disk_use(path, cap)
                    if used > cap or entries > 20_000:
                        self.reason = (f"disk cap exceeded: the submission wrote {used / 2**20:.0f} MiB "
                                       f"({entries} entries) into {path.name}/ (cap {cap / 2**20:.0f} MiB)")
                        break
            if self.reason:
                kill_tree(self.pid, self.started)
                return

    def stop(self) -> None:
        self._halt.set()


def cap_memory(limit: int) -> None:
    """Cap this process's data segment at ``limit`` bytes (never raise a cap already lower)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_DATA)
    want = limit if soft == resource.RLIM_INFINITY else min(soft, limit)
    try:
        resource.setrlimit(resource.RLIMIT_DATA, (want, hard))
    except (ValueError, OSError):
        pass
