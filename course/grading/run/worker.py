"""The student's side of the judge: a notebook's kernel inside a sandbox, and the probes sent to it.

:func:`run_submission` copies a submission into a scratch folder, starts a
Jupyter kernel for it inside a :class:`~course.grading.run.sandbox.Sandbox`
(the judge talks to it over Unix sockets), executes the notebook's cells as
nbgrader would (errors allowed, a timeout per cell), then sends each probe
(a small function that calls the student's code on inputs built from a seed)
and collects what the probe wrote, as plain data. It never decides a grade:
that is :mod:`course.grading.judge.verdicts`'s job, in the trusted process.

An attack inside the kernel can make a probe fail, time out, crash the
kernel or return garbage. The worker survives each: a timed-out probe is
interrupted, a dead kernel is restarted (the notebook's setup, locked and
solution cells are replayed) so the next exercise is still graded, and the
whole process tree is killed at the end, or earlier when it exceeds a cap.
"""
from __future__ import annotations

import asyncio
import json
import logging
import os
import random
import re
import shutil
import sys
import tempfile
import time
from queue import Empty
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
import zmq
from jupyter_client.kernelspec import KernelSpec
from jupyter_client.manager import AsyncKernelManager
from nbclient import NotebookClient
from nbclient.exceptions import DeadKernelError
from nbclient.util import ensure_async, run_sync

from course.grading.intake import files as intake
from course.grading import paths
from course.grading.run import needed, wire
from course.grading.config import Limits
from course.grading.run.sandbox import Inotify, Sandbox, Watchdog, descendants, detect, kill_tree, start_time
from course.grading.records import WorkerResult, grade_id
from course.grading.text import one_line
from nbgrader.preprocessors import ClearHiddenTests
from nbgrader.utils import is_grade, is_locked, is_solution

DECOY_TEXT = ("This is a decoy. While a submission is graded, the course's solutions, hidden tests and "
              "gradebook are not in the sandbox. Reading this file is reported to the instructor.\n")


#: Said in a report's sandbox line when the submission's compile cache held the machine's vector-ISA checks.
SEEDED_TEXT = ", compile cache seeded with this machine's vector-ISA checks"
SKIPPED_TEXT = ("[not run by the grader: a demonstration whose results no answer, test cell or hidden test reads; "
                "it runs as usual in your own notebook]\n")


@dataclass(frozen=True)
class ProbeCode:
    """One probe as the worker receives it: the function's source, its name, and the grade cell it serves."""

    test: str
    name: str
    source: str
    seconds: float | None = None  # this probe's own time limit (a probe that compiles); None: limits.probe_seconds


def strip_hidden_tests(source: str) -> str:
    """Remove ``### BEGIN/END HIDDEN TESTS`` regions: what the release keeps of a test cell (nbgrader's own
    ``ClearHiddenTests``, which ``generate_assignment`` runs)."""
    cell = nbformat.v4.new_code_cell(source)
    ClearHiddenTests(enforce_metadata=False)._remove_hidden_test_region(cell)
    return cell.source


class SandboxedKernelManager(AsyncKernelManager):
    """An ipykernel started inside a sandbox, reached over Unix sockets, interrupted by message."""

    def __init__(self, sandbox: Sandbox, log_path: Path, **kw) -> None:
        super().__init__(transport="ipc", ip=str(sandbox.ipcdir / "k"), **kw)
        self.sandbox = sandbox
        self.log_path = log_path
        self.connection_file = str(sandbox.ipcdir / "kernel.json")
        self._kernel_spec = KernelSpec(
            argv=[sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
            display_name="Python 3 (judge sandbox)", language="python", interrupt_mode="message",
            env={}, metadata={})

    def client(self, **kw):  # noqa: D102
        kc = super().client(**kw)
        # The kernel is the student's: a single message over the cap is refused by ZeroMQ before it is
        # received (its sender is disconnected), so a 1 GiB print never exists in the judge's memory.
        kc.context.setsockopt(zmq.MAXMSGSIZE, self.sandbox.limits.message_bytes)
        return kc

    def format_kernel_cmd(self, extra_arguments=None):  # noqa: D102
        cmd = super().format_kernel_cmd(extra_arguments)
        return self.sandbox.wrap(cmd)

    def write_connection_file(self, **kwargs) -> None:  # noqa: D102
        super().write_connection_file(**kwargs)
        # The kernel runs under the sandbox's uid and must read it.
        os.chmod(self.connection_file, 0o644)

    async def _async_launch_kernel(self, kernel_cmd, **kw):  # noqa: D102
        self._log = open(self.log_path, "ab")
        kw.update(stdout=self._log, stderr=self._log, stdin=None, preexec_fn=self.sandbox.preexec)
        # The wrapped command sets the whole environment inside; nothing of the instructor's leaks in.
        kw["env"] = {"PATH": "/usr/local/bin:/usr/bin:/bin"}
        return await super()._async_launch_kernel(kernel_cmd, **kw)

    @property
    def process_pid(self) -> int | None:
        prov = getattr(self, "provisioner", None)
        proc = getattr(prov, "process", None)
        return getattr(proc, "pid", None)


_OUTPUT_TYPES = {"stream", "display_data", "execute_result", "error", "update_display_data"}


def _message_bytes(msg: dict) -> int:
    content = msg.get("content") or {}
    kind = msg.get("msg_type")
    if kind == "stream":
        return len(content.get("text", ""))
    if kind == "error":
        return len(str(content.get("evalue", ""))) + sum(len(str(t)) for t in content.get("traceback", []))
    if kind.startswith("comm"):
        return len(json.dumps(content.get("data", {}), default=str)) + sum(len(b) for b in msg.get("buffers", []))
    return sum(len(v) if isinstance(v, str) else len(json.dumps(v, default=str))
               for v in (content.get("data") or {}).values())


@dataclass
class OutputBudget:
    """What the caps have let through so far for one submission (kept across kernel restarts)."""

    limits: Limits
    frozen: bool = False
    cell_bytes: dict[int, int] = field(default_factory=dict)
    total_bytes: int = 0
    cut_cells: set[int] = field(default_factory=set)
    dropped_while_frozen: int = 0
    iopub_stalls: int = 0

    def flags(self) -> list[str]:
        out = []
        if self.cut_cells:
            out.append(f"output capped: {len(self.cut_cells)} cell(s) printed more than the grader keeps "
                       f"({self.limits.cell_output_bytes / 2**10:.0f} KiB per cell, "
                       f"{self.limits.notebook_output_bytes / 2**20:.0f} MiB per notebook)")
        if self.iopub_stalls:
            out.append(f"output refused: the kernel's output channel stalled {self.iopub_stalls} time(s) "
                       f"(a message over the {self.limits.message_bytes / 2**20:.0f} MiB cap is refused)")
        return out


#: The longest a kernel client waits on one channel in one go (seconds); see :class:`Client`.
POLL_SLICE = 1.0


class _SlicedChannel:
    """A kernel client's channel whose ``get_msg`` waits in slices of at most :data:`POLL_SLICE` seconds."""

    def __init__(self, channel) -> None:
        self._channel = channel

    def __getattr__(self, name: str):
        return getattr(self._channel, name)

    async def get_msg(self, timeout: float | None = None) -> dict:
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            left = POLL_SLICE if deadline is None else min(POLL_SLICE, max(0.0, deadline - time.monotonic()))
            try:
                return await ensure_async(self._channel.get_msg(timeout=left))
            except Empty:
                if deadline is not None and time.monotonic() >= deadline:
                    raise


class Client(NotebookClient):
    """nbclient's client, but no wait on the kernel's channels lasts longer than :data:`POLL_SLICE` seconds.

    pyzmq's asyncio poller watches a socket's edge-triggered file descriptor. When it misses an edge, a
    message that has arrived is only seen by the final check at the poll's timeout, and nbclient polls
    the shell channel with the whole cell timeout. A full test run showed it twice, at the same place:
    Chapter 4's Lightning cell (a progress bar, many output messages) replied after 0.8 s, and the next
    cell began 479.2 s later, just as the 480 s cell timeout ran out (nbclient got the reply at that last
    check, so nothing failed; the run was 8 minutes longer). Polling in short slices, up to the same
    deadline, sees such a message within a slice. Every notebook the project runs uses this client.
    """

    async def async_start_new_kernel_client(self):  # noqa: D102
        kc = await super().async_start_new_kernel_client()
        for name in ("_shell_channel", "_iopub_channel"):
            channel = getattr(kc, name, None)
            if channel is not None and not isinstance(channel, _SlicedChannel):
                setattr(kc, name, _SlicedChannel(channel))
        return kc

    # nbclient binds the synchronous form to its own coroutine; bind it to this one (setup_kernel uses it)
    start_new_kernel_client = run_sync(async_start_new_kernel_client)


class CappedClient(Client):
    """nbclient's client with the judge's caps on what the student's kernel sends back.

    * Outputs are capped in bytes per cell and per notebook; past a cap, the cell says what was cut
      (nbgrader's own ``LimitOutput`` counts lines, and one line can be a gigabyte).
    * While ``budget.frozen`` (the sentinels and the probes, after the notebook has run), everything the
      kernel emits is dropped, except its status: a probe's prints, display updates aimed at earlier cells,
      ``clear_output`` and widget messages never reach the graded notebook, so code that reads the probe
      (its source, its inputs) has no channel to show them to anyone.
    """

    def __init__(self, *a, budget: OutputBudget, **kw) -> None:
        super().__init__(*a, **kw)
        self.budget = budget

        class _Stalls(logging.Handler):
            def emit(self, record):  # nbclient's "Timeout waiting for IOPub output": a refused message?
                if "IOPub" in record.getMessage():
                    budget.iopub_stalls += 1
        self.log.addHandler(_Stalls(level=logging.WARNING))

    def process_message(self, msg, cell, cell_index):  # noqa: D102
        b = self.budget
        kind = msg.get("msg_type", "")
        if kind in ("status", "execute_input"):
            return super().process_message(msg, cell, cell_index)
        if b.frozen:
            b.dropped_while_frozen += 1
            return None
        if kind in _OUTPUT_TYPES or kind.startswith("comm"):
            size = _message_bytes(msg)
            used = b.cell_bytes.get(cell_index, 0)
            room = min(b.limits.cell_output_bytes - used, b.limits.notebook_output_bytes - b.total_bytes)
            if size > room:
                if kind == "stream" and room > 0:
                    msg = dict(msg, content=dict(msg["content"], text=msg["content"]["text"][:room]))
                    size = room
                    super().process_message(msg, cell, cell_index)
                    b.cell_bytes[cell_index] = used + size
                    b.total_bytes += size
                self._cut(cell, cell_index)
                return None
            b.cell_bytes[cell_index] = used + size
            b.total_bytes += size
        return super().process_message(msg, cell, cell_index)

    def _cut(self, cell, cell_index: int) -> None:
        b = self.budget
        if cell_index in b.cut_cells:
            return
        b.cut_cells.add(cell_index)
        which = "notebook" if b.total_bytes >= b.limits.notebook_output_bytes else "cell"
        cap = b.limits.notebook_output_bytes if which == "notebook" else b.limits.cell_output_bytes
        cell.setdefault("outputs", []).append(nbformat.v4.new_output(
            "stream", name="stderr", text=f"[the grader cut this cell's output here: over the cap of "
                                          f"{cap / 2**10:.0f} KiB per {which}]\n"))


def _decoys(course: Path, chapter: str, notebook_name: str) -> list[Path]:
    """Write decoy instructor files where a student's code would look for them; return what to watch."""
    paths = [course / "nbgrader_config.py", course / "gradebook.db",
             course / "source" / chapter / notebook_name, course / "source" / chapter / "judge.py",
             course / "source" / chapter / "exercises" / "profiles.json"]
    for p in paths:
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(DECOY_TEXT)
        os.chmod(p, 0o644)
    for d in (course, course / "source", course / "source" / chapter, course / "source" / chapter / "exercises",
              course / "autograded"):
        os.chmod(d, 0o755)
    return paths + [course / "source", course / "source" / chapter, course / "source" / chapter / "exercises"]


class _Run:
    """The state of one submission's run (kernel, client, sandbox, deadline)."""

    def __init__(self, nb, sandbox: Sandbox, limits: Limits, scratch: Path, result: WorkerResult) -> None:
        self.nb, self.sandbox, self.limits, self.scratch, self.result = nb, sandbox, limits, scratch, result
        self.deadline = time.monotonic() + limits.wall_seconds
        self.budget = OutputBudget(limits)
        self.results_bytes = 0
        self.code_lines: tuple[set[str], str] | None = None  # the notebook's code, to vouch for error lines
        self.trusted = False  # the reference run (skip_tests): its exceptions are shown whole, to the instructor
        self.client: NotebookClient | None = None
        self.km: SandboxedKernelManager | None = None
        self.watchdog: Watchdog | None = None
        self.kernel: tuple[int, int | None] | None = None  # the kernel's (pid, start time): it, not its PID's next owner
        self.last_reply: dict | None = None

    def time_left(self) -> float:
        return self.deadline - time.monotonic()

    async def start(self) -> None:
        self.km = SandboxedKernelManager(self.sandbox, self.scratch / "kernel.log")
        self.client = CappedClient(
            self.nb, km=self.km, budget=self.budget, timeout=int(self.limits.cell_seconds), interrupt_on_timeout=True,
            allow_errors=True, startup_timeout=120, kernel_name="python3",
            extra_arguments=["--HistoryManager.hist_file=:memory:"],
            error_on_timeout={"ename": "CellTimeoutError", "evalue": "",
                              "traceback": [f"CellTimeoutError: the cell ran longer than "
                                            f"{self.limits.cell_seconds:g} s and was interrupted"]},
            resources={"metadata": {"path": str(self.sandbox.workdir)}})
        self.client.on_cell_executed = self._on_executed
        await self.client.async_start_new_kernel(cwd=str(self.sandbox.workdir))
        await self.client.async_start_new_kernel_client()
        pid = self.km.process_pid
        if pid:
            self.kernel = (pid, start_time(pid))  # not reaped yet: the provisioner has not polled it
            self.watchdog = Watchdog(pid, self.limits, self.deadline, dirs=self.sandbox.watched_dirs(),
                                     started=self.kernel[1])
            self.watchdog.start()

    def _on_executed(self, **kw) -> None:
        self.last_reply = kw.get("execute_reply")

    async def stop(self) -> None:
        kernel, self.kernel = self.kernel, None
        if self.watchdog:
            self.watchdog.stop()
            if self.watchdog.reason and self.watchdog.reason not in self.result.flags:
                self.result.flags.append(self.watchdog.reason)
            self.result.peak_memory = max(self.result.peak_memory, self.watchdog.peak_rss)
        if self.client is not None and self.km is not None:
            try:
                await asyncio.wait_for(self.km.shutdown_kernel(now=True), 15)
            except Exception:  # noqa: BLE001 - the kernel may be long dead
                pass
            try:
                if self.client.kc is not None:
                    self.client.kc.stop_channels()
            except Exception:  # noqa: BLE001
                pass
        if kernel:  # shutdown_kernel reaped it: by PID alone this could name another process, even its group
            kill_tree(*kernel)
        await asyncio.to_thread(self.sandbox.reap)
        log = getattr(self.km, "_log", None)
        if log:
            log.close()
        self.client = None

    def dead_reason(self) -> str:
        if self.watchdog and self.watchdog.reason:
            return self.watchdog.reason
        proc = getattr(getattr(self.km, "provisioner", None), "process", None)
        code = proc.poll() if proc is not None else None
        if code is None:
            return "the kernel stopped responding"
        sig = -code if code < 0 else code - 128 if code > 128 else 0  # bwrap reports a signal as 128 + n
        if sig:
            name = {4: "SIGILL", 6: "SIGABRT", 7: "SIGBUS", 8: "SIGFPE", 9: "SIGKILL", 11: "SIGSEGV"}.get(sig, f"signal {sig}")
            what = {11: "a segmentation fault", 9: "killed (out of memory?)", 6: "an abort"}.get(sig, "a crash")
            return f"the kernel died from {name}: {what}"
        return f"the kernel exited with code {code} (os._exit(), or exit() from C code)"

    async def execute(self, cell, index: int, timeout: float) -> str:
        """Execute one code cell; return "ok", "error", "timeout" or "dead"."""
        assert self.client is not None
        self.client.timeout = int(max(1, min(timeout, self.time_left())))
        self.last_reply = None
        cells = self.client.nb.cells
        synthetic = index >= len(cells) or cells[index] is not cell
        if synthetic:  # nbclient looks cells up by index: give the probe a slot at the end
            index = len(cells)
            cells.append(cell)
        try:
            await self.client.async_execute_cell(cell, index, execution_count=index + 1)
        except DeadKernelError:
            return "dead"
        except Exception as err:  # noqa: BLE001 - nbclient raises a few kinds on timeouts
            if "Timeout" in type(err).__name__ or "timeout" in str(err).lower():
                return "timeout"
            if not await self.alive():
                return "dead"
            raise
        finally:
            if synthetic and cells and cells[-1] is cell:
                cells.pop()
        content = (self.last_reply or {}).get("content", {})
        if content.get("status") == "error":
            # As nbgrader's Execute does: an error the kernel replied with but did not display
            # (a timeout, or a shell that hides tracebacks) is recorded in the cell.
            outputs = cell.setdefault("outputs", [])
            if not any(o.get("output_type") == "error" and o.get("ename") == content.get("ename") for o in outputs):
                outputs.append(nbformat.v4.new_output("error", ename=content.get("ename", "Error"),
                                                      evalue=content.get("evalue", ""),
                                                      traceback=content.get("traceback") or
                                                      [f"{content.get('ename', 'Error')}: {content.get('evalue', '')}"]))
            return "timeout" if content.get("ename") == "CellTimeoutError" else "error"
        return "ok"

    def processes(self) -> int:
        return len(descendants(*self.kernel)) if self.kernel else 0

    def crowded(self) -> bool:
        """Whether the sandbox holds far more processes than a kernel needs (a fork bomb's leftovers)."""
        return self.processes() > max(24, self.limits.processes // 2)

    async def alive(self) -> bool:
        try:
            return bool(self.km and await self.km.is_alive())
        except Exception:  # noqa: BLE001
            return False

    async def responsive(self) -> bool:
        """Whether the kernel answers a trivial request within 10 s."""
        if not await self.alive():
            return False
        cell = nbformat.v4.new_code_cell("pass")
        try:
            return await self.execute(cell, 0, 10) in ("ok", "error")
        except Exception:  # noqa: BLE001
            return False


def _replay_cells(nb) -> list[tuple[int, object]]:
    """Cells replayed after a restart: setup, locked and solution code cells (not demos, not tests)."""
    out = []
    for i, c in enumerate(nb.cells):
        if c.cell_type == "code" and (is_solution(c) or (is_locked(c) and not is_grade(c))):
            out.append((i, c))
    return out


async def _restart(run: _Run, why: str, skip: set[int], upto: int | None = None) -> bool:
    """Restart a dead or stuck kernel and replay the notebook's definitions; return whether it worked."""
    run.result.events.append(f"restarting the kernel: {why}")
    reason = run.watchdog.reason if run.watchdog else ""
    await run.stop()
    if reason.startswith("wall time") or run.time_left() < 5 or run.result.restarts >= 3:
        run.result.events.append("no restart: " + ("the submission's time is up" if run.time_left() < 5 or
                                                    reason.startswith("wall time") else "too many restarts"))
        return False
    run.result.restarts += 1
    run.sandbox.clear_ipc()
    try:
        await run.start()
    except Exception as err:  # noqa: BLE001
        run.result.events.append(f"the kernel did not start again: {err}")
        return False
    for i, cell in _replay_cells(run.nb):
        if i in skip or (upto is not None and i >= upto):
            continue
        scratch = nbformat.from_dict(cell)
        status = await run.execute(scratch, i, run.limits.cell_seconds)
        if status in ("dead", "timeout"):
            run.result.events.append(f"replaying cell {i} after the restart: {status}")
            return False
    return True


# Before each probe, the torch modes the notebook left entered are popped: the probes run after the whole
# notebook, so a mode that one answer left on (a dispatch mode entered by hand, not exited when its function
# raised) would otherwise intercept, and change the rounding of, the probes of exercises that ran before it in
# the notebook, which the student's own notebook never did. The answer that left it loses its own exercise's
# points (its probe and visible test see the mode); no other's. A default-device context stays.
_RESET_MODES = (
    "from torch.utils._python_dispatch import _get_current_dispatch_mode_stack as __judge_dm, _pop_mode as __judge_pop\n"
    "from torch.overrides import _get_current_function_mode_stack as __judge_fm\n"
    "import torch._C as __judge_C\n"
    "while __judge_dm():\n"
    "    __judge_pop()\n"
    "while __judge_fm() and type(__judge_fm()[-1]).__name__ != 'DeviceContext':\n"
    "    __judge_C._pop_torch_function_stack()\n"
    "del __judge_dm, __judge_pop, __judge_fm, __judge_C\n")


#: Sent before each probe, once the notebook has run: Dynamo stops timing new guards (a metric no probe reads; 35 %
#: of Chapter 6's probe time), where the notebook imported Dynamo (course.grading.run.guards).
_PROBE_PRELUDE = ("try:\n"
                  "    from course.grading.run.guards import skip_guard_latency_profile as __judge_skip\n"
                  "    __judge_skip()\n"
                  "    del __judge_skip\n"
                  "except Exception:\n"
                  "    pass\n")


def _probe_snippet(probe: ProbeCode, seed: int, out_path: Path, nonce: int) -> str:
    return (_RESET_MODES + _PROBE_PRELUDE + "from course.grading.run.wire import run_probe as __judge_run_probe\n"
            f"__judge_run_probe({probe.source!r}, {probe.name!r}, {seed}, {str(out_path)!r}, {nonce})\n"
            "del __judge_run_probe\n")


_SENTINEL = ProbeCode("__sentinel__", "judge_sentinel", "def judge_sentinel(seed):\n    return seed * 7 + 3\n")
_TAMPER_INFO = ProbeCode("__tampering__", "judge_tampering_info",
                         "def judge_tampering_info(seed):\n"
                         "    import sys\n"
                         "    checks = sys.modules.get('course.checks')\n"
                         "    return list(checks.tampering()) if checks is not None else ['course.checks not imported']\n")


def run_to_completion(coro):
    """``asyncio.run(coro)``, also where this thread already runs an event loop: Formgrader runs nbgrader's
    autograde inside the Jupyter server's loop, where ``asyncio.run`` refuses; there the coroutine runs on a loop
    of its own in a thread of its own, and this call waits for it (as nbgrader's own call does)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    import threading

    box: dict = {}

    def target() -> None:
        try:
            box["value"] = asyncio.run(coro)
        except BaseException as err:  # noqa: BLE001 - handed back to the caller's thread
            box["error"] = err

    thread = threading.Thread(target=target, name="judge-worker", daemon=True)
    thread.start()
    thread.join()
    if "error" in box:
        raise box["error"]
    return box.get("value")


async def _run_async(nb, sandbox: Sandbox, limits: Limits, probes: list[ProbeCode], seed: int,
                     scratch: Path, result: WorkerResult, skip_cells: set[int], replay_only: bool, trusted: bool,
                     extra_seeds: tuple[int, ...] = ()) -> None:
    run = _Run(nb, sandbox, limits, scratch, result)
    run.trusted = trusted
    clock = _Phases(result.phases)
    await run.start()
    clock.lap("kernel start")
    killed_at: set[int] = set()
    alive = True
    try:
        # 1. The notebook, top to bottom, as nbgrader runs it.
        cells = _replay_cells(nb) if replay_only else list(enumerate(nb.cells))
        for index, cell in cells:
            if cell.cell_type != "code" or index in skip_cells or not cell.source.strip():
                continue
            if run.time_left() <= 0:
                result.flags.append(f"wall time exceeded ({limits.wall_seconds:g} s) while running the notebook")
                alive = False
                break
            status = await run.execute(cell, index, limits.cell_seconds)
            clock.lap(_cell_phase(cell))
            if status == "error" and is_solution(cell):
                err = next((o for o in cell.get("outputs", []) if o.get("output_type") == "error"), {})
                result.events.append(f"cell {index} (solution {one_line(grade_id(cell), 60)}) raised "
                                     f"{one_line(err.get('ename', 'an error'), 60)}: {one_line(err.get('evalue', ''))}"
                                     + _cause_hint(err, limits))
            if status == "timeout":
                killed_at.add(index)
                result.events.append(f"cell {index} timed out after {limits.cell_seconds:g} s")
                if run.crowded():
                    alive = await _restart(run, f"cell {index} left {run.processes()} processes running "
                                                "(a fork bomb?)", killed_at, upto=index)
                elif not await run.responsive():
                    alive = await _restart(run, f"cell {index} did not stop after an interrupt", killed_at, upto=index)
            elif status == "dead":
                why = run.dead_reason()
                killed_at.add(index)
                result.events.append(f"cell {index}: {why}")
                cell.setdefault("outputs", []).append(nbformat.v4.new_output(
                    "error", ename="KernelDied", evalue=why, traceback=[f"KernelDied: {why}"]))
                alive = await _restart(run, why, killed_at, upto=index)
            clock.lap("restarts")  # a dead or stuck kernel restarted, its definitions replayed (if anything)
            if not alive:
                break
        # 2. Sentinels: does the kernel run the judge's code, and report exceptions? From here on, nothing
        # the kernel emits reaches the graded notebook (see CappedClient).
        run.budget.frozen = True
        if alive:
            nonce = random.randrange(1, 2 ** 31)
            rec, alive = await _one_probe(run, _SENTINEL, seed, nonce, killed_at)
            if not (rec.get("ok") and rec.get("value") == seed * 7 + 3 and rec.get("nonce") == nonce):
                result.flags.append("possible tampering: the kernel did not run the judge's code faithfully "
                                    "(an input transformer or a patched shell?)")
        if alive:
            token = f"judge-sentinel-{random.randrange(1, 2 ** 31)}"
            cell = nbformat.v4.new_code_cell(f"raise RuntimeError({token!r})")
            status = await run.execute(cell, len(nb.cells), 30)
            if status == "ok":
                result.flags.append("possible tampering: the kernel hides exceptions (a cell that raises "
                                    "reported success)")
            elif status in ("dead", "timeout"):
                alive = await _restart(run, "the exception sentinel " + status, killed_at)
        if alive:
            rec, alive = await _one_probe(run, _TAMPER_INFO, seed, random.randrange(1, 2 ** 31), killed_at)
            names = rec.get("value") if rec.get("ok") else None
            if type(names) is list and names:
                result.flags.append("possible tampering: the kernel reports replaced functions: "
                                    + ", ".join(str(n) for n in names[:8]))
        clock.lap("sentinels")
        # 3. The probes (the reference run sends them once per seed of the class).
        result.by_seed[seed] = result.results
        for each_seed in [seed, *extra_seeds]:
            into = result.results if each_seed == seed else result.by_seed.setdefault(each_seed, {})
            for probe in probes:
                if not alive:
                    into[probe.test] = {"ok": False, "error": "not run: the kernel could not be restarted "
                                        "after an earlier crash or timeout"}
                    continue
                nonce = random.randrange(1, 2 ** 31)
                rec, alive = await _one_probe(run, probe, each_seed, nonce, killed_at)
                if rec.get("ok") is True and rec.get("nonce") != nonce:
                    rec = {"ok": False, "error": "the result did not come from the judge's probe (forged?)"}
                    if "possible tampering: forged probe results" not in result.flags:
                        result.flags.append("possible tampering: forged probe results")
                into[probe.test] = rec
                if each_seed != seed:
                    run.result.raw.pop(probe.test, None)
        clock.lap("probes")
    finally:
        clock.lap("interrupted")  # a run cut short by an exception: the time since the last phase
        await run.stop()
        clock.lap("kernel stop")
        result.flags.extend(f for f in run.budget.flags() if f not in result.flags)


class _Phases:
    """Wall time per phase of a sandboxed run, added into ``into`` (phase -> seconds): where a submission's time goes
    (``make bench`` sums them over a class)."""

    def __init__(self, into: dict[str, float]) -> None:
        self.into = into
        self.t = time.perf_counter()

    def lap(self, phase: str) -> None:
        now = time.perf_counter()
        if now - self.t > 0.0005 or phase in self.into:
            self.into[phase] = round(self.into.get(phase, 0.0) + now - self.t, 4)
        self.t = now


def _cell_phase(cell) -> str:
    """The phase a notebook cell's time counts in: the student's answers, the visible tests, or the rest (set-up,
    demonstrations, widgets)."""
    if is_solution(cell):
        return "answer cells"
    if is_grade(cell):
        return "visible test cells"
    return "other cells"


def _cause_hint(err: dict, limits: Limits) -> str:
    text = f"{err.get('ename', '')} {err.get('evalue', '')}"
    if "MemoryError" in text or "allocate memory" in text or "Cannot allocate" in text:
        return f" (the memory cap is {limits.memory_bytes / 2**30:g} GiB per submission)"
    if "Resource temporarily unavailable" in text or "BlockingIOError" in text:
        return f" (the process cap is {limits.processes} processes per submission)"
    if "No space left on device" in text or "Disk quota exceeded" in text:
        return f" (the disk cap is {limits.disk_bytes / 2**20:.0f} MiB per submission)"
    if "Permission denied" in text or "Read-only file system" in text:
        return " (a submission may write only inside its own folder)"
    if "Network is unreachable" in text or "Connection refused" in text:
        return " (grading runs without network)"
    return ""


async def _one_probe(run: _Run, probe: ProbeCode, seed: int, nonce: int, killed_at: set[int]) -> tuple[dict, bool]:
    """Send one probe; return its record and whether the kernel is still usable."""
    out = run.sandbox.ipcdir / f"probe-{nonce}.pt"
    cell = nbformat.v4.new_code_cell(_probe_snippet(probe, seed, out, nonce))
    seconds = probe.seconds or run.limits.probe_seconds
    status = await run.execute(cell, len(run.nb.cells), seconds)
    alive = True
    rec: dict
    try:
        if run.results_bytes >= run.limits.submission_results_bytes:
            raise ValueError(f"not read: this submission's results passed the cap of "
                             f"{run.limits.submission_results_bytes / 2**20:.0f} MiB in all")
        rec, data = wire.read_result(out, run.limits.probe_result_bytes, keep_bytes=True)
        run.results_bytes += len(data)
        run.result.raw[probe.test] = data
        if not rec.get("ok") and run.trusted:  # the reference run: the instructor needs the whole message
            rec["error"], rec["where"] = wire.raw_failure_text(rec)
        elif not rec.get("ok"):
            # The student's process wrote this exception: keep only what the judge can vouch for.
            if run.code_lines is None:
                run.code_lines = wire.notebook_text(run.nb)
            rec["error"], rec["where"] = wire.failure_text(rec, *run.code_lines)
            run.result.raw.pop(probe.test, None)  # saved runs keep this vetted text, not the student's bytes
        rec.pop("exc", None)
    except (ValueError, OSError, MemoryError) as err:
        rec = {"ok": False, "error": str(err) if not isinstance(err, MemoryError) else
               "the probe's result was too large for the grader's memory"}
    if status == "timeout":
        if not rec.get("ok"):
            rec = {"ok": False, "error": f"timed out: the test did not finish within {seconds:g} s "
                                         "(an endless loop, or far too slow?)"}
        if run.crowded():
            alive = await _restart(run, f"probe {probe.test} left {run.processes()} processes running", killed_at)
        elif not await run.responsive():
            alive = await _restart(run, f"probe {probe.test} did not stop after an interrupt", killed_at)
    elif status == "dead":
        why = run.dead_reason()
        rec = {"ok": False, "error": f"the kernel died while this test ran: {why}"}
        alive = await _restart(run, why, killed_at)
    elif "error" not in rec and not rec.get("ok"):
        rec = {"ok": False, "error": "the probe wrote no result"}
    try:
        out.unlink()
    except OSError:
        pass
    return rec, alive


def kernel_status(nb) -> dict[str, str]:
    """Return {grade_id: "pass" | "fail" | "not run"} for the graded code cells, as the kernel reported them."""
    out = {}
    for c in nb.cells:
        if c.cell_type == "code" and is_grade(c):
            if c.get("execution_count") is None and not c.get("outputs"):
                out[grade_id(c)] = "not run"
            elif any(o.get("output_type") == "error" for o in c.get("outputs", [])):
                out[grade_id(c)] = "fail"
            else:
                out[grade_id(c)] = "pass"
    return out


def run_submission(nb: nbformat.NotebookNode, chapter: str, student: str, probes: list[ProbeCode], seed: int,
                   files: Path | None = None, limits: Limits | None = None, course_root: Path | None = None,
                   decoys: bool = True, threads: int | None = None, skip_tests: bool = False,
                   replay_only: bool = False, scratch_base: Path | None = None, keep: bool = False,
                   extra_env: dict[str, str] | None = None, extra_seeds: tuple[int, ...] = ()) -> WorkerResult:
    """Execute ``nb`` in a sandbox, then send it ``probes``; return what came back (nothing is judged here).

    ``files``: a folder whose files (other than notebooks) the submission
    needs next to it. ``skip_tests``: do not run the graded test cells (the
    reference run, which is trusted: its probes' exceptions are kept whole, for the instructor; a student's
    are cut to what the judge can vouch for, see :func:`course.grading.run.wire.failure_text`). ``replay_only``: run only setup, locked and solution
    cells. Hidden-test regions are always removed from test cells first.
    """
    limits = limits or Limits()
    t_setup = time.perf_counter()
    nb = nbformat.from_dict(nb)
    for c in nb.cells:
        if c.cell_type == "code":
            c.outputs, c.execution_count = [], None
            if is_grade(c):
                c.source = strip_hidden_tests(c.source)
    skip = {i for i, c in enumerate(nb.cells) if skip_tests and is_grade(c)}
    demonstrations: set[int] = set()
    instructor = paths.source_notebooks(course_root, chapter) if course_root is not None else []
    if not (limits.run_every_cell or replay_only) and len(instructor) == 1:
        demonstrations = needed.skippable(nb, [p.source for p in probes], nbformat.read(instructor[0], as_version=4))
    if scratch_base is None:
        from course.grading.run.scratch import private_tmpdir
        scratch_base = Path(private_tmpdir())  # not /tmp itself: the folder below is opened up for the sandbox
    scratch = Path(tempfile.mkdtemp(prefix="judge-", dir=scratch_base))
    os.chmod(scratch, 0o755)
    fake_course = scratch / "course"
    workdir = fake_course / "autograded" / re.sub(r"[^A-Za-z0-9_.-]", "_", student) / chapter
    workdir.mkdir(parents=True)
    intake_report = None
    if files is not None and Path(files).is_dir():
        # The submission's other files, through the intake (no link followed, no special file opened).
        intake_report = intake.copy_submission(Path(files), workdir, limits)
        for item in workdir.glob("*.ipynb"):
            item.unlink()
    nb_name = f"{chapter}.ipynb"
    watch = _decoys(fake_course, chapter, nb_name) if decoys else []
    env = {"NBGRADER_EXECUTION": "autograde"}
    env.update(extra_env or {})
    sandbox = Sandbox(workdir=workdir, ipcdir=scratch / "ipc", limits=limits, visible=[fake_course],
                      course_root=course_root, env=env, threads=threads)
    seeded = False
    if any(p.seconds for p in probes) and not skip_tests:
        # A probe that compiles (not in the reference run, which skips it): Inductor's vector-ISA checks of this
        # machine, made once by the grader, copied into this submission's own compile cache before the sandbox
        # is prepared (which hands it to the sandbox's uid). Without them, Inductor checks inside, as it always did.
        from course.grading.run.scratch import seed_compile_cache, vec_isa_checks
        seeded = seed_compile_cache(sandbox.cache, vec_isa_checks())
    sandbox.prepare()
    sandbox.enter_cgroup()
    result = WorkerResult(notebook=nb, sandbox=sandbox.describe() + (SEEDED_TEXT if seeded else ""),
                          skipped=sorted(demonstrations))
    if intake_report is not None:
        result.flags.extend(intake_report.flags())
    if sandbox.mechanism.degraded:
        result.flags.append("sandbox degraded: " + sandbox.mechanism.why)
    notify = Inotify()
    for p in watch:
        notify.watch(p)
    t0 = time.perf_counter()
    result.phases["sandbox set-up"] = round(t0 - t_setup, 4)
    try:
        run_to_completion(_run_async(nb, sandbox, limits, probes, seed, scratch, result, skip | demonstrations,
                                     replay_only, skip_tests,
                               tuple(s for s in dict.fromkeys(extra_seeds) if s != seed)))
    except Exception as err:  # noqa: BLE001 - the worker must report, never crash the class run
        result.flags.append(f"the worker failed: {type(err).__name__}: {str(err)[:300]}")
        for p in probes:
            result.results.setdefault(p.test, {"ok": False, "error": f"not run: the worker failed ({type(err).__name__})"})
    finally:
        result.seconds = time.perf_counter() - t0
        result.decoy_hits = [str(Path(h).relative_to(fake_course)) for h in notify.hits()
                             if Path(h).is_relative_to(fake_course)]
        notify.close()
        sandbox.reap()
        result.flags.extend(e for e in sandbox.cap_events() if e not in result.flags)
        sandbox.cleanup()
        if not keep:
            shutil.rmtree(scratch, ignore_errors=True)
        result.phases["sandbox clean-up"] = round(time.perf_counter() - t0 - result.seconds, 4)
    if result.decoy_hits:
        result.flags.append("possible tampering: the submission opened the instructor's files "
                            f"({', '.join(sorted(set(result.decoy_hits)))}); it saw decoys only")
    result.kernel_status = kernel_status(nb)
    for index in result.skipped:  # what the student reads in the graded notebook, where the outputs would be
        nb.cells[index].outputs = [nbformat.v4.new_output("stream", name="stdout", text=SKIPPED_TEXT)]
    import resource
    result.judge_peak_memory = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    return result


def describe_mechanism() -> str:
    """One line for banners: which sandbox grading will use here."""
    m = detect()
    if m.degraded:
        return f"WARNING: no sandbox ({m.why}). Student code will run WITHOUT filesystem or network isolation."
    return "sandbox: bubblewrap (no network; only the submission's folder is writable)"
