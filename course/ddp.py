"""Run a function on 2 (or more) ``gloo`` ranks on loopback, from a notebook, and clean up.

:func:`launch` starts one process per rank, initialises a ``gloo`` process
group on ``127.0.0.1`` with a free TCP port, calls ``fn(rank, world_size,
*args)`` in each, and returns their results in rank order. It has a hard
timeout, and a ``finally`` that terminates (then kills) every rank, so no
process outlives the call: not on success, not when a rank raises, not when
the timeout fires, not on ``KeyboardInterrupt`` (nbgrader interrupting a cell).

Why the start method matters
----------------------------
``torch.multiprocessing.spawn`` (and any ``spawn`` start) starts a fresh
interpreter and *pickles* the target function to send it there. Functions are
pickled **by reference**: only ``module.qualname`` travels, and the child
re-imports the module to find the function. A function defined in a notebook
lives in the kernel's ``__main__``, which the child cannot import, so the
child fails with ``AttributeError: Can't get attribute 'f' on <module
'__main__'>``. That is why the demo workers below are module-level functions
of this module: they can be found by reference from any start method.

For functions written in the notebook (a student's answer), :func:`launch`
uses the ``fork`` start method where the platform has it (Linux): the child is
a copy of the kernel process, so it already holds the function and nothing is
pickled on the way in. ``fork`` is also fast (no second ``import torch``),
which matters for a graded notebook. It is safe here because the parent never
initialises a process group or CUDA before forking. Where ``fork`` is not
available (Windows) or not the default (macOS), the launcher uses ``spawn``
and, for a function defined in ``__main__``, sends its *source text* instead
(:class:`SourceFunction`), which the child ``exec``'s with ``torch``,
``torch.distributed as dist``, ``torch.nn as nn``, ``torch.nn.functional as
F`` and ``math`` in scope. Results come back pickled (plain pickle), so
return tensors and Python data.
"""
from __future__ import annotations

import inspect
import math
import multiprocessing as mp
import os
import pickle
import socket
import sys
import textwrap
import time
import traceback
from datetime import timedelta
from typing import Any, Callable

import torch
import torch.distributed  # noqa: F401  (imported here so forked ranks inherit it instead of importing it twice)
import torch.nn.parallel  # noqa: F401

__all__ = ["free_port", "start_method", "launch", "SourceFunction", "call_on_shards",
           "bn_demo_worker", "rank_info_worker", "syncbn_cuda_worker"]


def free_port(host: str = "127.0.0.1") -> int:
    """Return a TCP port number that was free on ``host`` a moment ago (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


def start_method() -> str:
    """Return ``"fork"`` on Linux (where it is available and safe here), else ``"spawn"``."""
    if sys.platform.startswith("linux") and "fork" in mp.get_all_start_methods():
        return "fork"
    return "spawn"


class SourceFunction:
    """A picklable stand-in for a notebook function: its source text, rebuilt in the child.

    ``SourceFunction(f)(*args)`` execs ``f``'s source once (with torch, dist,
    nn, F and math in scope) and calls the function of the same name.
    """

    def __init__(self, fn: Callable) -> None:
        self.name = fn.__name__
        self.source = textwrap.dedent(inspect.getsource(fn))
        self._fn: Callable | None = None

    def __getstate__(self) -> dict:
        return {"name": self.name, "source": self.source}

    def __setstate__(self, state: dict) -> None:
        self.name, self.source, self._fn = state["name"], state["source"], None

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self._fn is None:
            import torch.distributed as dist
            import torch.nn as nn
            import torch.nn.functional as F
            namespace: dict[str, Any] = {"torch": torch, "dist": dist, "nn": nn, "F": F, "math": math}
            exec(compile(self.source, f"<notebook:{self.name}>", "exec"), namespace)
            self._fn = namespace[self.name]
        return self._fn(*args, **kwargs)


def _loopback_ifname() -> str:
    return "lo0" if sys.platform == "darwin" else "lo"


def _worker(rank: int, world_size: int, port: int, fn: Callable, args: tuple, conn: Any,
            timeout_s: float, backend: str = "gloo") -> None:
    """Run in each rank: init gloo, call ``fn``, send ("ok", result) or ("err", traceback) back."""
    import torch.distributed as dist

    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    os.environ.setdefault("GLOO_SOCKET_IFNAME", _loopback_ifname())
    torch.set_num_threads(1)  # 2 ranks on a small CPU: no oversubscription
    status, payload = "err", "worker did not run"
    try:
        if backend == "nccl":
            torch.cuda.set_device(rank)
        dist.init_process_group(backend, rank=rank, world_size=world_size,
                                timeout=timedelta(seconds=max(5.0, timeout_s)))
        try:
            status, payload = "ok", fn(rank, world_size, *args)
        finally:
            dist.destroy_process_group()
    except BaseException:  # noqa: BLE001  (everything goes back to the parent)
        status, payload = "err", traceback.format_exc()
    try:
        data = pickle.dumps((status, payload))
    except Exception:  # noqa: BLE001
        data = pickle.dumps(("err", "result could not be pickled:\n" + traceback.format_exc()))
    conn.send_bytes(data)
    conn.close()


def _stop(procs: list) -> None:
    """Terminate, then kill, every process still alive; reap them all."""
    for p in procs:
        if p.is_alive():
            p.terminate()
    for p in procs:
        p.join(2.0)
        if p.is_alive():
            p.kill()
            p.join(2.0)


def launch(fn: Callable, world_size: int = 2, args: tuple = (), timeout: float = 60.0,
           method: str | None = None, backend: str = "gloo") -> list[Any]:
    """Run ``fn(rank, world_size, *args)`` on ``world_size`` ranks; return the results in rank order.

    ``backend`` is ``"gloo"`` (CPU, the default) or ``"nccl"`` (rank r uses
    ``cuda:r``; pass ``method="spawn"``, since a forked child cannot use CUDA
    once the parent has initialised it). ``method`` is the start method
    (default :func:`start_method`). Raises
    ``RuntimeError`` with the rank's traceback if a rank fails, and
    ``TimeoutError`` after ``timeout`` seconds. Every rank is stopped before
    this returns or raises.
    """
    method = method or start_method()
    ctx = mp.get_context(method)
    target = fn
    if method != "fork" and getattr(fn, "__module__", None) == "__main__":
        target = SourceFunction(fn)  # see the module docstring: spawn pickles by reference
    last_error: Exception | None = None
    for _attempt in range(2):  # a free port can be taken between free_port() and bind: retry once
        port = free_port()
        procs, conns = [], []
        try:
            for rank in range(world_size):
                recv, send = ctx.Pipe(duplex=False)
                p = ctx.Process(target=_worker, args=(rank, world_size, port, target, args, send, timeout, backend),
                                daemon=True, name=f"course-ddp-rank{rank}")
                p.start()
                send.close()
                procs.append(p)
                conns.append(recv)
            results: list[Any] = [None] * world_size
            pending = set(range(world_size))
            deadline = time.monotonic() + timeout
            while pending:
                if time.monotonic() > deadline:
                    raise TimeoutError(f"ranks {sorted(pending)} did not finish within {timeout:g} s "
                                       f"(a collective waiting for a rank that never called it?)")
                for r in sorted(pending):
                    if conns[r].poll(0.01):
                        try:
                            status, payload = pickle.loads(conns[r].recv_bytes())
                        except EOFError:
                            raise RuntimeError(f"rank {r} exited (code {procs[r].exitcode}) without a result")
                        if status != "ok":
                            raise RuntimeError(f"rank {r} failed:\n{payload}")
                        results[r] = payload
                        pending.discard(r)
                    elif not procs[r].is_alive() and not conns[r].poll(0):
                        raise RuntimeError(f"rank {r} exited (code {procs[r].exitcode}) without a result")
            return results
        except RuntimeError as err:
            if "Address already in use" in str(err) or "EADDRINUSE" in str(err):
                last_error = err
                continue
            raise
        finally:
            _stop(procs)
            for c in conns:
                c.close()
    raise RuntimeError(f"could not find a free port: {last_error}")


# --- module-level workers (picklable by reference under any start method) ---

def call_on_shards(rank: int, world_size: int, fn: Callable, shards: list) -> list:
    """Worker: call ``fn(x)`` for every tensor ``x`` in ``shards[rank]``; return the list of results."""
    return [fn(x) for x in shards[rank]]


def rank_info_worker(rank: int, world_size: int) -> dict:
    """Worker: return this rank's pid, backend and the all-reduced sum of ranks (a smoke test)."""
    import torch.distributed as dist

    t = torch.tensor([float(rank)])
    dist.all_reduce(t)
    return {"rank": rank, "pid": os.getpid(), "backend": dist.get_backend(), "sum_of_ranks": float(t)}


def bn_demo_worker(rank: int, world_size: int, shards: list[torch.Tensor], steps: int = 3) -> dict:
    """Worker for the BatchNorm-under-DDP demo; returns a dict of per-rank observations.

    ``shards[rank]`` is this rank's data, shape (N_rank, C). Keys:
    ``batch_mean`` (the per-channel mean this rank's BN normalised with),
    ``running_mean_plain`` / ``running_mean_bb_false`` / ``running_mean_bb_true``
    (running means after ``steps`` forwards: no DDP, DDP with
    ``broadcast_buffers=False``, and with ``True``), ``syncbn_error`` (the
    message DDP raises for SyncBatchNorm on a CPU module), and
    ``convert_after_wrap`` (what happens when converting after wrapping) and
``warnings`` (first sentences of the warnings DDP emitted; torch 2.14
deprecates ``broadcast_buffers`` in favour of ``forward_sync_buffers``).
    """
    import torch.distributed as dist
    import torch.nn as nn
    from torch.nn.parallel import DistributedDataParallel as DDP

    x = shards[rank]
    c = x.shape[1]
    out: dict[str, Any] = {"rank": rank, "n": int(x.shape[0]), "batch_mean": x.mean(0)}

    def fresh() -> nn.Module:
        torch.manual_seed(0)
        return nn.Sequential(nn.Linear(c, c, bias=False), nn.BatchNorm1d(c))

    def with_identity_linear(m: nn.Module) -> nn.Module:
        with torch.no_grad():
            m[0].weight.copy_(torch.eye(c))
        return m

    plain = with_identity_linear(fresh())
    for _ in range(steps):
        plain(x)
    out["running_mean_plain"] = plain[1].running_mean.clone()
    import warnings

    for flag in (False, True):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            ddp = DDP(with_identity_linear(fresh()), broadcast_buffers=flag)
        out["warnings"] = sorted({str(w.message).split(".")[0] for w in caught})
        for _ in range(steps):
            ddp(x).sum().backward()
        out[f"running_mean_bb_{str(flag).lower()}"] = ddp.module[1].running_mean.clone()
    try:
        DDP(nn.SyncBatchNorm.convert_sync_batchnorm(fresh()))
        out["syncbn_error"] = None
    except ValueError as err:
        out["syncbn_error"] = f"ValueError: {err}"
    wrapped = DDP(fresh())  # wraps fine: DDP checks for SyncBatchNorm only here, at construction
    converted = nn.SyncBatchNorm.convert_sync_batchnorm(wrapped)
    try:
        converted(x)
        out["convert_after_wrap"] = "forward ran"
    except ValueError as err:
        out["convert_after_wrap"] = f"no error at wrap time; first forward raised ValueError: {err}"
    dist.barrier()
    return out


def syncbn_cuda_worker(rank: int, world_size: int, shards: list[torch.Tensor]) -> dict:
    """Worker (CUDA + nccl only): convert BN to SyncBatchNorm, *then* wrap in DDP, run one forward.

    Returns ``running_mean`` (after one training forward, on the CPU) and
    ``n``, this rank's number of rows. With momentum 1.0 the running mean
    equals the mean that SyncBatchNorm normalised with: the global one.
    """
    import torch.nn as nn
    from torch.nn.parallel import DistributedDataParallel as DDP

    dev = torch.device("cuda", rank)
    x = shards[rank].to(dev)
    c = x.shape[1]
    model = nn.Sequential(nn.BatchNorm1d(c, momentum=1.0)).to(dev)
    model = nn.SyncBatchNorm.convert_sync_batchnorm(model)  # before DDP: DDP inspects modules when built
    ddp = DDP(model, device_ids=[rank])
    ddp(x).sum().backward()
    return {"rank": rank, "n": int(x.shape[0]), "running_mean": ddp.module[0].running_mean.cpu()}
