"""What a notebook needs from its environment while nbgrader runs it.

nbgrader 0.9 gives a test cell **zero points if it writes anything to
stderr** (``nbgrader.utils.is_failed``), so a library's harmless warning
(a ``UserWarning`` from torch, Lightning's start-up log) would fail correct
work. :func:`route_stderr_to_stdout` sends stderr to stdout while grading;
``import course`` calls it automatically when ``NBGRADER_EXECUTION`` is set.
Failures still count: a failing test raises, and an error output is what
nbgrader scores as 0.
"""
from __future__ import annotations

import logging
import os
import sys


def route_stderr_to_stdout() -> bool:
    """Send Python-level and fd-level stderr to stdout; return True if anything was redirected."""
    changed = False
    old = sys.stderr
    if sys.stdout is not None and sys.stderr is not sys.stdout:
        sys.stderr = sys.stdout
        changed = True
    # Loggers created before now hold the old stream.
    loggers = [logging.getLogger()] + [lg for lg in logging.Logger.manager.loggerDict.values()
                                       if isinstance(lg, logging.Logger)]
    for lg in loggers:
        for h in lg.handlers:
            if isinstance(h, logging.StreamHandler) and getattr(h, "stream", None) is old:
                h.setStream(sys.stdout)
    # Output written by C/C++ code straight to file descriptor 2.
    try:
        sys.__stdout__.flush()
        os.dup2(1, 2)
    except (OSError, AttributeError, ValueError):
        pass
    return changed


def scratch_folder(prefix: str) -> "Path":
    """A new folder of this process's own for files a notebook writes (traces, saved models, a compile cache),
    removed when the kernel shuts down (Shut Down or Restart in Jupyter, or the end of the process).

    ``tempfile.mkdtemp``: in the temporary folder, under a name no one can guess in advance, readable by its owner
    only, so on a machine where students share ``/tmp`` no classmate can read it or plant a file in it. Without
    the removal, every run of a chapter would leave one behind. A kernel that is killed (out of memory, or stuck
    until Jupyter gives up on it) runs no clean-up and leaves its folder. Only the process that made the folder
    removes it: a child that inherits the clean-up (a forked worker that exits normally) leaves it alone.

    A kernel that is sent SIGTERM removes its folders too (:func:`_remove_on_sigterm`). That is how Jupyter ends a
    kernel that does not exit within half its shutdown wait, and a kernel that started processes with spawn or
    forkserver (macOS's and Windows' default, DataLoader workers) never exits sooner: at shutdown ipykernel asks
    its children to stop, and multiprocessing's resource tracker ignores SIGTERM, so Shut Down and Restart end in
    SIGTERM, 2.5 s later, where no atexit handler runs (measured here: every such kernel left its folder behind)."""
    import atexit
    import tempfile
    from pathlib import Path

    folder = Path(tempfile.mkdtemp(prefix=prefix))
    atexit.register(_remove_if_mine, folder, os.getpid())
    _FOLDERS.append((folder, os.getpid()))
    _remove_on_sigterm()
    return folder


#: (folder, the process that made it): what :func:`_remove_on_sigterm`'s handler removes.
_FOLDERS: list = []


def _remove_if_mine(folder, owner: int) -> None:
    import shutil

    if os.getpid() == owner:
        shutil.rmtree(folder, ignore_errors=True)


def _remove_on_sigterm() -> bool:
    """On SIGTERM, remove this process's scratch folders, then end as SIGTERM ends it (the default action, sent
    again). Installed once, from the main thread, and only where SIGTERM still has its default action: a handler
    someone else installed is left alone. Returns whether the handler is in place."""
    import signal
    import threading

    if getattr(_remove_on_sigterm, "installed", False):
        return True
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "SIGTERM") \
            or signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
        return False

    def on_sigterm(signum, frame):
        for folder, owner in list(_FOLDERS):
            _remove_if_mine(folder, owner)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGTERM)

    try:
        signal.signal(signal.SIGTERM, on_sigterm)
    except (ValueError, OSError):
        return False
    _remove_on_sigterm.installed = True
    return True
