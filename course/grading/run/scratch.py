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
