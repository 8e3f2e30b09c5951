"""Where the grader's scratch lives: a fresh ``0700`` folder of the grading process's own.

The judge's sandboxes, the kernels' connection files (with their HMAC keys), the reference run's values and the
probes' results are written under the temporary folder. On a shared machine (a hub) every other user can list
``/tmp``, watch it with inotify and read whatever is not private; so every grading command, and the judge itself
when another program (Formgrader) runs it, first moves its temporary folder into a folder made by ``mkdtemp``
(``0700``, a random name nobody can squat), handed on to its children through ``TMPDIR`` and removed at exit.
"""
from __future__ import annotations

import os
import shutil
import tempfile

PREFIX = "pti-grader-"


def private_tmpdir() -> str:
    """Make this process's (and its children's) temporary folder a private one; return it. Idempotent: a child of a
    grading command, or a second call, keeps the folder it was given."""
    for current in (tempfile.tempdir or "", os.environ.get("TMPDIR", "")):
        if current and os.path.basename(current).startswith(PREFIX) and os.path.isdir(current):
            st = os.lstat(current)
            if st.st_uid == os.getuid() and not st.st_mode & 0o077 and not os.path.islink(current):
                os.environ["TMPDIR"] = tempfile.tempdir = current
                return current
    base = tempfile.mkdtemp(prefix=PREFIX)
    os.environ["TMPDIR"] = tempfile.tempdir = base
    # Removed at exit, after multiprocessing's own clean-up of the folders it made inside (its finalizers run at
    # exit priority -100; a plain atexit handler, registered later, would run first and leave it nothing to find).
    import multiprocessing.util as mp_util
    mp_util.Finalize(None, shutil.rmtree, args=(base, True), exitpriority=-101)
    return base


def compile_caches(folder) -> dict[str, str]:
    """The environment that puts torch's compile caches (Inductor's and Triton's) in ``folder``: a cache of one
    submission's (or one process's) own. Inductor's default is one folder per user, shared by every process, and
    AOTInductor packages a metadata file from it named after the generated code, not the metadata: two processes
    compiling one program with different metadata can each package the other's."""
    return {"TORCHINDUCTOR_CACHE_DIR": os.path.join(folder, "inductor"),
            "TRITON_CACHE_DIR": os.path.join(folder, "triton")}


#: Run by :func:`vec_isa_checks` in a process of the grader's own: Inductor's check of which CPU vector
#: instruction sets its C++ compiler can build for and this machine can load. It first asks Linux to kill it when
#: the thread that started it ends (PR_SET_PDEATHSIG), and stops if that has already happened: a grading process
#: killed by its pool cannot leave it writing into a private folder its parent is removing.
VEC_ISA_CHECK = """
import ctypes, os, signal, sys
try:
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)
except (OSError, AttributeError):
    pass
if os.getppid() != int(sys.argv[1]):
    sys.exit(3)
from torch._inductor.cpu_vec_isa import valid_vec_isa_list
valid_vec_isa_list()
"""


def vec_isa_checks(timeout: float = 600) -> str | None:
    """An Inductor cache folder holding only the CPU vector-ISA checks of this machine, made once per grading
    command (in its private temporary folder, under a lock its pool's processes share); ``None`` if they cannot be
    made here (then never tried again by this command).

    Before its first C++ compile, Inductor compiles and loads a small program for each vector instruction set the
    CPU reports (about ten ``g++`` runs, 9 s of CPU), and keeps the answers in its cache folder. Each submission
    has a cache folder of its own, so each one that compiles paid this again for the same answers. These come
    from the instructor's own process, never from a submission, and each submission gets a copy
    (:func:`seed_compile_cache`): one it can only spoil for itself. Inductor keeps only the sets that built and
    loaded, and keys each by its program, the compiler and its flags; a set missing, or keyed differently inside
    the sandbox, is checked there again, as before.
    """
    import fcntl
    import subprocess
    import sys

    try:
        base = os.path.join(private_tmpdir(), "vec-isa")
        os.makedirs(base, mode=0o700, exist_ok=True)
        cache = os.path.join(base, "inductor")
        with open(os.path.join(base, "lock"), "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            for name, answer in (("ok", cache), ("failed", None)):
                if os.path.exists(os.path.join(base, name)):
                    return answer
            made = False
            try:
                proc = subprocess.Popen([sys.executable, "-P", "-c", VEC_ISA_CHECK, str(os.getpid())], cwd=base,
                                        env={**os.environ, **compile_caches(base)}, stdin=subprocess.DEVNULL,
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                try:
                    made = proc.wait(timeout) == 0 and any(name.endswith(".load_ok")
                                                           for _, _, files in os.walk(cache) for name in files)
                finally:
                    if proc.poll() is None:
                        proc.kill()
                        proc.wait()
            except (OSError, subprocess.SubprocessError):
                pass
            shutil.rmtree(os.path.join(cache, "locks"), ignore_errors=True)
            open(os.path.join(base, "ok" if made else "failed"), "w").close()
            return cache if made else None
    except OSError:
        return None


def seed_compile_cache(cache_root, checks: str | None) -> bool:
    """Put a copy of :func:`vec_isa_checks`'s folder where :func:`compile_caches` (``cache_root``) puts Inductor's
    cache, unless something is there already. Returns whether it did; an error leaves the cache unseeded."""
    target = compile_caches(str(cache_root))["TORCHINDUCTOR_CACHE_DIR"]
    if not checks or os.path.lexists(target) or os.path.islink(cache_root) \
            or os.path.lexists(cache_root) and not os.path.isdir(cache_root):
        return False
    try:
        shutil.copytree(checks, target, symlinks=False)
    except (OSError, shutil.Error):
        shutil.rmtree(target, ignore_errors=True)
        return False
    return True
