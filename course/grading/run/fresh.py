"""A new process for a probe that must see a file work on its own, as a server would load it (Chapter 3's
AOTInductor package), imported inside students' kernels.

Each call forks a child from a small server process that imported torch once, when it started, and has done
nothing since: the child has never seen the package, the program it came from or anything the kernel holds, and
loads the file from disk. A ``python -c`` started for each call gave the same, at the price of a new interpreter
importing torch every time (4.4 s of CPU here): a grading kernel calls it once, but the in-process checks of
every variant and seed (:mod:`course.grading.authoring.sweep`) call it for each one. The server is started by the
first call (the cost of one ``python -c``), reads one request per line and ends when the process that started it
closes its input (when that process exits). It runs no autograd and no CUDA, so its children may fork from it.
It is not multiprocessing's forkserver: that one pickles the caller's ``__main__`` module for its children, which
an IPython shell run inside another program (the variant check) does not have.
"""
from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import threading
import time

#: The server: imports torch, then for each request (a JSON line) forks a child that loads the package, calls it on
#: the saved keywords and saves a tensor output (an exception's last line goes to the error file, exit code 1),
#: and answers with the child's pid, then its exit code (negative: killed by that signal).
SERVER = r"""
import json, os, sys
import torch, torch._inductor
for line in sys.stdin:
    req = json.loads(line)
    pid = os.fork()
    if pid == 0:
        code = 1
        os.dup2(os.open(os.devnull, os.O_WRONLY), 1)  # its output never mixes with the answers
        try:
            kw = torch.load(req["inputs"])
            with torch.no_grad():
                y = torch._inductor.aoti_load_package(req["path"])(**kw)
            torch.save(y if isinstance(y, torch.Tensor) else None, req["outputs"])
            code = 0
        except BaseException as err:
            text = f"{type(err).__name__}: {err}".strip()
            with open(req["error"], "w") as fh:
                fh.write(text.splitlines()[-1][:300])
        finally:
            os._exit(code)
    print(json.dumps({"pid": pid}), flush=True)
    _, status = os.waitpid(pid, 0)
    print(json.dumps({"exit": os.waitstatus_to_exitcode(status)}), flush=True)
"""

_LOCK = threading.Lock()
_SERVER: dict[str, subprocess.Popen] = {}


def _server() -> subprocess.Popen:
    proc = _SERVER.get("proc")
    if proc is None or proc.poll() is not None:
        proc = subprocess.Popen([sys.executable, "-c", SERVER], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL, text=True, bufsize=1)
        _SERVER["proc"] = proc
        _PENDING.clear()
    return proc


#: What was read from the server's output past the last answer returned. Its output is read from the pipe
#: directly (os.read), never through ``proc.stdout``'s buffer: a buffered readline can take both of a call's answer
#: lines at once, and a select() on the pipe would then wait for a second line that is already read (a load that
#: failed at once, read late by a busy caller, came back as "ran for over 180 s").
_PENDING = bytearray()


def _answer(proc: subprocess.Popen, deadline: float) -> dict | None:
    """The server's next answer line, or None if none came before ``deadline`` (time.monotonic()) or it ended."""
    fd = proc.stdout.fileno()
    while True:
        end = _PENDING.find(b"\n")
        if end >= 0:
            line = bytes(_PENDING[:end])
            del _PENDING[:end + 1]
            try:
                return json.loads(line)
            except ValueError:
                continue
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            return None
        chunk = os.read(fd, 65536)
        if not chunk:
            return None
        _PENDING.extend(chunk)


def run_package(path: str, inputs: str, outputs: str, timeout: float = 180.0) -> tuple[int | None, str]:
    """Run the AOTInductor package file ``path`` in a new process on the keywords saved in ``inputs`` (a
    ``torch.save`` of a dict), its tensor output saved to ``outputs``. Returns (exit code, the error's last line):
    (0, "") when it ran, (None, ...) when it ran past ``timeout`` seconds (it is killed) or the server failed."""
    error = outputs + ".error"
    with _LOCK:
        deadline = time.monotonic() + timeout
        proc = _server()
        try:
            proc.stdin.write(json.dumps({"path": str(path), "inputs": str(inputs), "outputs": str(outputs),
                                         "error": error}) + "\n")
            proc.stdin.flush()
        except OSError:
            _SERVER.pop("proc", None)
            return None, "the process that loads packages could not be started"
        started = _answer(proc, deadline)
        ended = _answer(proc, deadline) if started else None
        if ended is None:  # ran too long, or the server died: the child and the server go
            died = proc.poll()
            if started and isinstance(started.get("pid"), int):
                try:
                    os.kill(started["pid"], signal.SIGKILL)
                except OSError:
                    pass
            proc.kill()
            proc.wait()
            _SERVER.pop("proc", None)
            _PENDING.clear()
            return None, (f"ran for over {timeout:g} s" if died is None
                          else f"the process that loads packages ended (exit code {died})")
    why = ""
    if os.path.isfile(error):
        with open(error) as fh:
            why = fh.read(400)
    return int(ended.get("exit", 1)), why
