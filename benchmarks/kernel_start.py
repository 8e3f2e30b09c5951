"""How long a sandboxed grading kernel takes to be ready with torch imported, two ways (issue 30, item 7).

1. **cold**, as grading starts every kernel now: ``SandboxedKernelManager`` (bubblewrap, then ipykernel), then a
   first cell that imports torch, numpy, matplotlib and the course's checks (every chapter's set-up cell does).
2. **forked**: a process that imported those modules once (the "zygote", one thread, no autograd, no CUDA) forks a
   child; the child joins the namespaces of the same kind of bubblewrap sandbox (a placeholder process that
   ``Sandbox.wrap`` starts: ``setns`` into its user namespaces, mount, pid, network, IPC, UTS and cgroup
   namespaces, ``chroot`` into its root), drops to its uid with no capabilities and no new privileges, forks once
   more (to be inside the pid namespace) and becomes the kernel. The same first cell then finds the imports done.

Grading does not use the second way: this measures what it would save, and checks that the forked kernel sees
what a cold one sees (uid, capabilities, no_new_privs, hostname, the sandbox's root, its working folder, the names
of its environment). ``python benchmarks/kernel_start.py [--runs 3]``; ``make bench`` runs it too.

Not a sandbox to copy into grading as it is. An independent review (issue 30, stop 48's note) found what it lacks
against the cold path: the kernel is outside the submission's cgroup and the watchdog's tree; a namespace equal
to the zygote's is skipped instead of refused; the zygote's start-up environment and argv stay readable in
/proc/self/environ and sys.orig_argv; the namespace and root descriptors stay open; requests are read ahead from
one pipe; torch's generator and multiprocessing's authkey are shared by every kernel; the privilege drops are
not all checked; matplotlib and libgomp keep what they read from the zygote's environment at import.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

#: The first cell of both kernels: the imports a chapter's set-up cell makes, then what the kernel can see.
CELL = r"""
import os, socket, json
import torch, numpy, matplotlib.pyplot
from course import checks
_status = dict(line.split(":\t", 1) for line in open("/proc/self/status").read().splitlines() if ":\t" in line)
import pwd
_student = pwd.getpwnam("student")  # the sandbox's own /etc/passwd: its uid, drawn for each sandbox
print("FACTS " + json.dumps({
    "uid_is_the_sandboxs": os.getuid() == _student.pw_uid != 0, "gid_is_the_sandboxs": os.getgid() == _student.pw_gid,
    "CapEff": _status["CapEff"], "CapBnd": _status["CapBnd"],
    "CapPrm": _status["CapPrm"], "NoNewPrivs": _status["NoNewPrivs"], "hostname": socket.gethostname(),
    # (not Max processes: under an instructor's own uid, Sandbox.preexec adds the processes that uid runs then)
    "limits": [line.split()[-3:] for line in open("/proc/self/limits").read().splitlines()[1:]
               if not line.startswith("Max processes")],
    "root": sorted(os.listdir("/")), "cwd_is_workdir": os.getcwd() == os.environ["HOME"].rsplit("/", 1)[0],
    "env": sorted(k for k in os.environ if k != "PWD" and not k.startswith(("JPY_", "PYDEVD"))),  # (sh sets PWD)
    "autograd": float((torch.ones(3, requires_grad=True) * 2).sum().backward() or 1.0)}))
"""

#: The zygote: imports once, then for each request (a JSON line) forks a child that joins the placeholder's
#: sandbox and becomes the kernel; answers with the child's pid. Ends when its input closes.
ZYGOTE = r"""
import ctypes, fcntl, json, os, resource, sys, time
t0 = time.perf_counter()
import torch, numpy, matplotlib.pyplot
import ipykernel.kernelapp
from course import checks
print(json.dumps({"imports": time.perf_counter() - t0, "tasks": len(os.listdir("/proc/self/task"))}), flush=True)
libc = ctypes.CDLL(None, use_errno=True)

def check(result, what):
    if result != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")

def same(a, b):
    return (a.st_ino, a.st_dev) == (b.st_ino, b.st_dev)

def join(holder):
    fds = {ns: os.open(f"/proc/{holder}/ns/{ns}", os.O_RDONLY)
           for ns in ("user", "ipc", "uts", "net", "pid", "cgroup", "mnt")
           if not same(os.stat(f"/proc/{holder}/ns/{ns}"), os.stat(f"/proc/self/ns/{ns}"))}
    root = os.open(f"/proc/{holder}/root", os.O_RDONLY)
    order = [(ns, fd) for ns, fd in fds.items() if ns != "user"]
    if "user" in fds:  # unprivileged bwrap nests the sandbox's user namespace in the one that owns the others
        chain, fd, mine = [], fds["user"], os.stat("/proc/self/ns/user")
        while True:
            try:
                parent = fcntl.ioctl(fd, 0xB702)  # NS_GET_PARENT
            except OSError:
                break
            if same(os.fstat(parent), mine):
                os.close(parent)
                break
            chain.append(parent)
            fd = parent
        order = [("user", f) for f in reversed(chain)] + order + [("user", fds["user"])]
    for ns, fd in order:
        check(libc.setns(fd, 0), f"setns {ns}")
    os.fchdir(root)
    os.chroot(".")

def drop(uid):
    for cap in range(64):
        libc.prctl(24, cap, 0, 0, 0)  # PR_CAPBSET_DROP
    try:
        os.setgroups([])
    except PermissionError:  # in a user namespace whose setgroups is denied: there are none to drop
        pass
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)
    header, data = (ctypes.c_uint32 * 2)(0x20080522, 0), (ctypes.c_uint32 * 6)()
    check(libc.syscall(126, header, data), "capset")  # capset: no capability left in any set
    check(libc.prctl(47, 4, 0, 0, 0), "clear ambient capabilities")  # PR_CAP_AMBIENT_CLEAR_ALL
    check(libc.prctl(38, 1, 0, 0, 0), "no_new_privs")  # PR_SET_NO_NEW_PRIVS
    libc.prctl(1, 9, 0, 0, 0)  # PR_SET_PDEATHSIG: SIGKILL when the parent goes

LIMITS = {"Max core file size": resource.RLIMIT_CORE, "Max file size": resource.RLIMIT_FSIZE,
          "Max open files": resource.RLIMIT_NOFILE, "Max data size": resource.RLIMIT_DATA,
          "Max processes": resource.RLIMIT_NPROC}

def limits_of(pid):
    # The rlimits Sandbox.preexec gave a process, read from /proc: prlimit() on another uid's process needs
    # CAP_SYS_RESOURCE, which a container's root may lack (this machine's does).
    out = {}
    for line in open(f"/proc/{pid}/limits").read().splitlines()[1:]:
        for name, r in LIMITS.items():
            if line.startswith(name):
                soft, hard = line[len(name):].split()[:2]
                out[r] = tuple(resource.RLIM_INFINITY if v == "unlimited" else int(v) for v in (soft, hard))
    return out

def reap():
    while True:
        try:
            if os.waitpid(-1, os.WNOHANG)[0] == 0:
                return
        except ChildProcessError:
            return

for line in sys.stdin:
    reap()
    req = json.loads(line)
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            devnull = os.open(os.devnull, os.O_RDWR)
            log = os.open(req["log"], os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
            os.dup2(devnull, 0)
            os.dup2(log, 1)
            os.dup2(log, 2)
            os.closerange(3, 1 << 16)
            limits = limits_of(req["holder"])  # the placeholder's, as Sandbox.preexec set them
            join(req["holder"])
            kernel = os.fork()  # the first process forked after setns(pid) is inside the pid namespace
            if kernel == 0:
                for r, value in limits.items():
                    resource.setrlimit(r, value)
                drop(req["uid"])
                os.chdir(req["cwd"])
                os.setsid()
                os.environ.clear()
                os.environ.update(req["env"])
                import random
                random.seed()
                numpy.random.seed()
                app = ipykernel.kernelapp.IPKernelApp.instance()
                app.initialize(["-f", req["connection_file"], "--HistoryManager.hist_file=:memory:"])
                try:
                    app.start()
                except BaseException:
                    import traceback
                    traceback.print_exc()
                    os._exit(1)
                os._exit(0)
            code = os.waitstatus_to_exitcode(os.waitpid(kernel, 0)[1])
        except BaseException:
            import traceback
            traceback.print_exc()
        finally:
            os._exit(code if isinstance(code, int) and code >= 0 else 1)
    print(json.dumps({"pid": pid}), flush=True)
reap()
"""


async def _first_cell(kc, t0: float) -> tuple[float, dict]:
    """Run CELL through the async client ``kc``: the seconds since ``t0`` to its reply, and the facts it printed."""
    out: list[str] = []
    await kc.wait_for_ready(timeout=120)
    reply = await kc.execute_interactive(CELL, timeout=120, output_hook=lambda m: out.append(
        m["content"].get("text", "") if m["msg_type"] == "stream" else ""))
    seconds = time.perf_counter() - t0
    assert reply["content"]["status"] == "ok", reply["content"]
    for line in "".join(out).splitlines():
        if line.startswith("FACTS "):
            return seconds, json.loads(line[6:])
    raise RuntimeError(f"the first cell printed no facts: {''.join(out)[-2000:]}")


def _comm(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:  # it ended after it was listed (the sandbox's copy-in, before sh exec's the placeholder)
        return ""


def _sandbox(base: Path, n: int):
    from course.grading.run.sandbox import Sandbox

    sb = Sandbox(base / f"work{n}", base / f"ipc{n}")
    sb.prepare()
    return sb


async def cold(base: Path, n: int) -> tuple[float, dict]:
    """Seconds from starting the kernel to the first cell's reply, and what the kernel saw."""
    from course.grading.run.worker import SandboxedKernelManager

    sb = _sandbox(base, n)
    km = SandboxedKernelManager(sb, base / f"kernel{n}.log")
    t0 = time.perf_counter()
    await km.start_kernel(cwd=str(sb.workdir), extra_arguments=["--HistoryManager.hist_file=:memory:"])
    kc = km.client()
    kc.start_channels()
    try:
        return await _first_cell(kc, t0)
    finally:
        kc.stop_channels()
        await km.shutdown_kernel(now=True)
        sb.reap()


def forked(base: Path, n: int, zygote: subprocess.Popen) -> tuple[float, dict]:
    from jupyter_client import AsyncKernelClient
    from jupyter_client.connect import write_connection_file

    from course.grading.run.sandbox import descendants

    sb = _sandbox(base, n)
    conn = str(sb.ipcdir / "kernel.json")
    t0 = time.perf_counter()
    holder = subprocess.Popen(sb.wrap(["/bin/sleep", "infinity"]), preexec_fn=sb.preexec,
                              env={"PATH": "/usr/local/bin:/usr/bin:/bin"})
    try:
        write_connection_file(conn, transport="ipc", ip=str(sb.ipcdir / "k"))
        os.chmod(conn, 0o644)
        for _ in range(1000):  # bwrap, its init, then the placeholder (sh has exec'd sleep)
            inside = [p for p in descendants(holder.pid) if _comm(p) == "sleep"]
            if inside:
                break
            time.sleep(0.005)
        else:
            raise RuntimeError("the placeholder did not start")
        zygote.stdin.write(json.dumps({"holder": inside[0], "uid": sb.inner_uid, "cwd": str(sb.workdir),
                                       "env": sb.environment(), "connection_file": conn,
                                       "log": str(base / f"kernel{n}.log")}) + "\n")
        zygote.stdin.flush()
        json.loads(zygote.stdout.readline())  # the zygote's child is forking the kernel
        kc = AsyncKernelClient(connection_file=conn)
        kc.load_connection_file()
        kc.start_channels()
        try:
            return asyncio.run(_first_cell(kc, t0))
        finally:
            kc.stop_channels()
    finally:
        holder.kill()  # bwrap's init goes, and with it every process of the pid namespace: the kernel too
        holder.wait()
        sb.reap()


def spread(xs: list[float]) -> str:
    return f"median {statistics.median(xs):.2f} s [min {min(xs):.2f}, max {max(xs):.2f}], n={len(xs)}"


def main(argv: list[str] | None = None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--runs", type=int, default=3)
    args = p.parse_args(argv)
    from course.grading.run.sandbox import detect

    if detect().degraded:
        print(f"kernel start: no bubblewrap here ({detect().why}); nothing to compare")
        return {}
    base = Path(tempfile.mkdtemp(prefix="kernel-start-"))
    os.chmod(base, 0o755)
    env = _sandbox(base, 99).environment()  # the zygote imports with a sandbox's environment, not the caller's
    t0 = time.perf_counter()
    zygote = subprocess.Popen([sys.executable, "-c", ZYGOTE], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              text=True, env=env, cwd=str(REPO))
    try:
        ready = json.loads(zygote.stdout.readline())
        zygote_start = time.perf_counter() - t0
        colds = [asyncio.run(cold(base, n)) for n in range(args.runs)]
        forks = [forked(base, 100 + n, zygote) for n in range(args.runs)]
    finally:
        zygote.stdin.close()
        zygote.wait(timeout=60)
        shutil.rmtree(base, ignore_errors=True)
    cold_s, fork_s = [s for s, _ in colds], [s for s, _ in forks]
    facts_cold, facts_fork = colds[0][1], forks[0][1]
    differ = {k: (facts_cold[k], facts_fork.get(k)) for k in facts_cold if facts_cold[k] != facts_fork.get(k)}
    print("kernel start to the first cell's reply (imports: torch, numpy, matplotlib.pyplot, course.checks):")
    print(f"  cold, as grading starts a kernel now:       {spread(cold_s)}")
    print(f"  forked from a zygote into the same sandbox: {spread(fork_s)}")
    print(f"  the zygote itself: started in {zygote_start:.2f} s (imports {ready['imports']:.2f} s), "
          f"{ready['tasks']} thread(s) when it forks")
    print(f"  saved per kernel: {statistics.median(cold_s) - statistics.median(fork_s):.2f} s "
          f"({statistics.median(cold_s) / statistics.median(fork_s):.1f}x)")
    print(f"  what the kernels see: the sandbox's uid {facts_fork['uid_is_the_sandboxs']}, "
          f"CapEff {facts_fork['CapEff']}, CapBnd {facts_fork['CapBnd']}, NoNewPrivs {facts_fork['NoNewPrivs']}, "
          f"hostname {facts_fork['hostname']}; "
          + ("the same in both" if not differ else f"DIFFERENT: {differ}"))
    return {"cold_seconds": cold_s, "forked_seconds": fork_s, "zygote_imports": ready["imports"],
            "zygote_threads": ready["tasks"], "differences": differ}


if __name__ == "__main__":
    result = main()
    sys.exit(1 if result.get("differences") else 0)
