"""Run a function on 2 (or more) ``gloo`` ranks on loopback, from a notebook, and clean up.

:func:`launch` starts one process per rank, initialises a ``gloo`` process
group on loopback (the ranks meet through a file, not a port), calls ``fn(rank, world_size,
*args)`` in each, and returns their results in rank order. It has a hard
timeout, and a ``finally`` that terminates (then kills) every rank, so no
process outlives the call: not on success, not when a rank raises, not when
the timeout fires, not on ``KeyboardInterrupt`` (nbgrader interrupting a cell).

How the ranks start, on every platform
--------------------------------------
Never by ``fork``. A forked child is a copy of the notebook's kernel, threads
excepted: once the kernel has run a ``backward()`` on a machine that can see a
GPU, autograd has started its device threads (a CPU-only backward is enough),
and every forked rank that calls ``backward()`` dies with "Unable to handle
autograd's threading in combination with fork-based multiprocessing"; once the
kernel has touched CUDA, a forked rank cannot use it at all. macOS lists
``fork`` but system frameworks may crash in a forked child (Python 3.8 made
``spawn`` its default), and Windows has no ``fork``.

So :func:`start_method` is ``forkserver`` on Linux (a clean server process,
started once, imports this module and torch, then forks one rank per request;
:func:`warm_up` starts it early, from a chapter's setup cell) and ``spawn``
elsewhere (a fresh interpreter per rank). Both send the rank what it runs by
pickling, and plain pickle sends a function **by reference**
(``module.qualname``): a function defined in a notebook lives in the kernel's
``__main__``, which a fresh interpreter cannot import ("Can't get attribute
'f' on <module '__main__'>"). :func:`launch` therefore pickles ``fn`` and
``args`` with ``cloudpickle`` in the notebook, which sends functions defined in
``__main__`` (and closures, lambdas, notebook classes) **by value**, with the
globals they use, including functions inside ``args`` (``call_on_shards``'s
``fn``); functions of importable modules still travel by reference. The rank
rebuilds them inside its own ``try``, so even a function that cannot be
rebuilt there comes back as that rank's traceback. A rank that dies without
sending a result (a signal, ``os._exit``, an abort in C++) is reported with
its exit code and the last lines it wrote to its standard error (Python's
``faulthandler`` writes a crashing rank's stack there). Results come back
pickled, so return tensors and Python data.
"""
from __future__ import annotations

import contextlib
import faulthandler
import itertools
import multiprocessing as mp
import os
import pickle
import signal
import sys
import tempfile
import time
import traceback
from datetime import timedelta
from typing import Any, Callable, Iterator

import cloudpickle
import torch
import torch.distributed  # noqa: F401  (imported here so the forkserver's ranks inherit it instead of importing it)
import torch.nn.parallel  # noqa: F401

__all__ = ["start_method", "warm_up", "launch", "call_on_shards",
           "bn_demo_worker", "rank_info_worker", "accumulation_cases_worker", "syncbn_cuda_worker", "sampler_worker", "syncbn_facts_worker",
           "counting_comm_hook", "accumulation_demo_worker", "unused_params_worker", "accumulation_worker",
           "accumulation_model", "GatherBatchNorm2d", "step_model", "profiled_step_worker", "logged_train_worker", "logged_steps_worker",
           "torchrun_main", "hang_worker", "monitored_barrier_worker", "short_error", "fsdp_worker", "fsdp_reference_model",
           "loopback_ifname", "settle_collectives"]

# What the forkserver imports once, before it forks any rank: this module (and so torch and torch.distributed).
#: And what every rank of Chapter 5b would otherwise import again, at every launch: torch.distributed.tensor (DTensor,
#: with sympy: unpickling a notebook's function that uses torch.distributed imports it, 519 modules, 0.5 s a rank),
#: the profiler helpers and torch._dynamo (DDP's first forward under the profiler imports it, with triton: 0.6 s).
FORKSERVER_PRELOAD = ["course.ddp", "torch.distributed.tensor", "course.profiling", "course.traces", "torch._dynamo"]


def start_method() -> str:
    """Return ``"forkserver"`` on Linux, else ``"spawn"`` (macOS, Windows); never ``"fork"`` (module docstring).

    ``COURSE_DDP_START_METHOD=spawn`` (or ``forkserver``) in the environment chooses one instead: the tests run
    the chapter's exercises under both on Linux, and ``spawn`` is what a macOS or Windows student gets.
    """
    chosen = os.environ.get("COURSE_DDP_START_METHOD", "")
    if chosen in ("spawn", "forkserver") and chosen in mp.get_all_start_methods():
        return chosen
    if sys.platform.startswith("linux") and "forkserver" in mp.get_all_start_methods():
        return "forkserver"
    return "spawn"


@contextlib.contextmanager
def _main_not_rerun() -> Iterator[None]:
    """While a rank (or the forkserver) starts: hide the parent's main module from multiprocessing.

    A ``spawn`` or ``forkserver`` child normally imports the parent's main script again (as ``__mp_main__``), so
    that objects pickled by reference from ``__main__`` can be found. Nothing the ranks receive refers to
    ``__main__`` (cloudpickle sends those functions by value), so that import is pure cost (a second or more for
    ``python -m course.grading`` or pytest, per rank) and a trap (a script without an ``if __name__ ==
    "__main__":`` guard would run again in every rank). A notebook's ``__main__`` has no file: nothing changes there.
    """
    main = sys.modules.get("__main__")
    if main is None:
        yield
        return
    missing = object()
    saved = {k: main.__dict__.get(k, missing) for k in ("__spec__", "__file__")}
    main.__spec__ = None  # multiprocessing reads it; a namespace that was cleared and refilled may have lost it
    main.__dict__.pop("__file__", None)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is missing:
                main.__dict__.pop(k, None)
            else:
                main.__dict__[k] = v


def _context(method: str) -> Any:
    ctx = mp.get_context(method)
    if method == "forkserver":
        # Only takes effect if the server is not running yet (it is started once per process).
        ctx.set_forkserver_preload(FORKSERVER_PRELOAD)
    return ctx


def warm_up() -> str:
    """Start the process that will start the ranks now, not at the first :func:`launch`; return the method.

    Under ``forkserver`` this starts the server (it imports torch once, in the background, while the
    notebook goes on); under ``spawn`` there is nothing to start and nothing happens.
    """
    method = start_method()
    if method == "forkserver":
        from multiprocessing import forkserver

        _context(method)
        with _main_not_rerun():
            forkserver.ensure_running()
    return method


def loopback_ifname() -> str:
    """The loopback network interface's name (``GLOO_SOCKET_IFNAME``): ``lo0`` on macOS, ``lo`` elsewhere."""
    return "lo0" if sys.platform == "darwin" else "lo"


_loopback_ifname = loopback_ifname


#: The store the ranks of one launch met through (set in each rank by _worker), and how many times this rank has
#: called settle_collectives (its keys in that store).
_RANK_STORE: Any = None
_SETTLE_CALLS = itertools.count()


def _worker(rank: int, world_size: int, store_path: str, payload: bytes, conn: Any,
            timeout_s: float, backend: str = "gloo", env: dict | None = None,
            pg_timeout: float | None = None, stderr_path: str | None = None) -> None:
    """Run in each rank: init gloo, rebuild and call ``fn``, send ("ok", result) or ("err", traceback) back.

    The ranks meet through a ``FileStore`` at ``store_path`` (a fresh file in the launch's private folder), not
    a TCP port: a port picked by one launch can be taken by another (two notebooks, or parallel tests) before
    rank 0 binds it, and a rank of one launch then joins another's group. If the process group cannot start,
    the status is ("initerr", traceback): nothing of ``fn`` ran, so the parent may start the ranks again.
    """
    if stderr_path:  # the parent shows this file's end if the rank dies without a result
        log = open(stderr_path, "w", buffering=1)  # noqa: SIM115  (open until the process ends)
        os.dup2(log.fileno(), 2)
        faulthandler.enable(file=log)
    import torch.distributed as dist

    os.environ.update(env or {})
    if env and "TORCH_DISTRIBUTED_DEBUG" in env:
        # torch reads this variable once, when torch.distributed is imported; the forkserver imported it
        # before this rank existed, so it must be told to read it again before its process group starts.
        dist.set_debug_level_from_env()
    os.environ.setdefault("GLOO_SOCKET_IFNAME", _loopback_ifname())
    torch.set_num_threads(1)  # 2 ranks on a small CPU: no oversubscription
    status, result = "err", "worker did not run"
    try:
        fn, args = cloudpickle.loads(payload)  # inside the try: a function that cannot be rebuilt is reported
        if backend == "nccl":
            torch.cuda.set_device(rank % torch.cuda.device_count())
        global _RANK_STORE
        _RANK_STORE = dist.FileStore(store_path, world_size)
        try:
            dist.init_process_group(backend, store=_RANK_STORE, rank=rank,
                                    world_size=world_size,
                                    timeout=timedelta(seconds=pg_timeout if pg_timeout else max(5.0, timeout_s)))
        except Exception:  # noqa: BLE001
            status, result = "initerr", traceback.format_exc()
        else:
            try:
                status, result = "ok", fn(rank, world_size, *args)
            finally:
                dist.destroy_process_group()
    except NotImplementedError as err:  # an exercise stub: the parent re-raises it as it is (see launch)
        status, result = "notimpl", str(err)
    except BaseException:  # noqa: BLE001  (everything goes back to the parent)
        status, result = "err", traceback.format_exc()
    try:
        data = cloudpickle.dumps((status, result))
    except Exception:  # noqa: BLE001
        data = pickle.dumps(("err", "result could not be pickled:\n" + traceback.format_exc()))
    conn.send_bytes(data)
    conn.close()


class _InitFailed(Exception):
    """A rank's process group did not start (status "initerr"): :func:`launch` starts the ranks once more."""


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


def _exit_text(code: int | None) -> str:
    if code is None:
        return "still running"
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit code {code}"


def _died(rank: int, proc: Any, stderr_path: str, limit: int = 4000) -> RuntimeError:
    """The error for a rank that ended without sending a result: how it ended and the end of its stderr."""
    proc.join(5.0)  # the pipe closes a moment before the process can be reaped
    try:
        with open(stderr_path, errors="replace") as f:
            text = f.read()
    except OSError:
        text = ""
    # faulthandler's list of loaded extension modules says nothing about the rank's mistake
    text = "\n".join(line for line in text.splitlines() if not line.startswith("Extension modules:"))
    text = text[-limit:].strip() or "(it wrote nothing to its standard error)"
    return RuntimeError(f"rank {rank} died without a result ({_exit_text(proc.exitcode)}). "
                        f"The end of its standard error:\n{text}")


def launch(fn: Callable, world_size: int = 2, args: tuple = (), timeout: float = 60.0,
           method: str | None = None, backend: str = "gloo", env: dict[str, str] | None = None,
           pg_timeout: float | None = None) -> list[Any]:
    """Run ``fn(rank, world_size, *args)`` on ``world_size`` ranks; return the results in rank order.

    ``fn`` and ``args`` may hold functions and classes defined in the notebook (they travel by value, see
    the module docstring). ``backend`` is ``"gloo"`` (CPU, the default) or ``"nccl"`` (rank r uses
    ``cuda:r``). ``method`` is the start method: :func:`start_method` by default, or ``"spawn"`` /
    ``"forkserver"``; ``"fork"`` is refused (module docstring). ``env`` is set in each rank's environment
    before its process group starts (``{"TORCH_DISTRIBUTED_DEBUG": "DETAIL"}``), and ``pg_timeout``
    (seconds) is the process group's collective timeout (default: ``timeout``, at least 5 s). Raises
    ``RuntimeError`` with the rank's traceback if a rank fails, or with its exit and the end of its standard
    error if it dies (``NotImplementedError``, with its message only, if the rank called an exercise stub,
    so the notebook shows "not done yet"), and ``TimeoutError`` after ``timeout`` seconds. Every rank is
    stopped before this returns or raises.
    """
    method = method or start_method()
    if method == "fork":
        raise ValueError("launch does not fork: a forked rank dies at its first backward() once this process "
                         "has run one on a machine with a GPU (use 'forkserver' or 'spawn')")
    ctx = _context(method)
    payload = cloudpickle.dumps((fn, tuple(args)))
    logdir = tempfile.mkdtemp(prefix="course-ddp-")
    last_error: Exception | None = None
    try:
        for _attempt in range(2):  # a process group that did not start (nothing of fn ran): start once more
            store_path = os.path.join(logdir, f"store-try{_attempt}")
            procs, conns = [], []
            logs = [os.path.join(logdir, f"rank{rank}-try{_attempt}.stderr") for rank in range(world_size)]
            try:
                for rank in range(world_size):
                    recv, send = ctx.Pipe(duplex=False)
                    p = ctx.Process(target=_worker, args=(rank, world_size, store_path, payload, send, timeout, backend,
                                                             env, pg_timeout, logs[rank]),
                                    daemon=True, name=f"course-ddp-rank{rank}")
                    with _main_not_rerun():
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
                                status, result = pickle.loads(conns[r].recv_bytes())
                            except EOFError:
                                raise _died(r, procs[r], logs[r]) from None
                            if status == "notimpl":
                                raise NotImplementedError(result)
                            if status == "initerr":
                                raise _InitFailed(f"rank {r} could not start its process group:\n{result}")
                            if status != "ok":
                                raise RuntimeError(f"rank {r} failed:\n{result}")
                            results[r] = result
                            pending.discard(r)
                        elif not procs[r].is_alive() and not conns[r].poll(0):
                            raise _died(r, procs[r], logs[r])
                return results
            except _InitFailed as err:
                last_error = err
                continue
            finally:
                _stop(procs)
                for c in conns:
                    c.close()
        raise RuntimeError(f"the ranks' process group did not start, twice. {last_error}")
    finally:
        import shutil

        shutil.rmtree(logdir, ignore_errors=True)


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
``warnings`` (first sentences of the warnings DDP emitted; ``broadcast_buffers``
is deprecated since torch 2.13 in favour of ``forward_sync_buffers``).
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
    wrapped = DDP(fresh())  # wraps fine: DDP's SyncBatchNorm device check runs only here, at construction
    converted = nn.SyncBatchNorm.convert_sync_batchnorm(wrapped)
    try:
        converted(x)
        out["convert_after_wrap"] = "forward ran"
    except ValueError as err:  # SyncBatchNorm's own check, in its forward: the wrapper did run the new layer
        out["convert_after_wrap"] = f"no error at wrap time; first forward raised ValueError: {err}"
    dist.barrier()
    return out


def syncbn_cuda_worker(rank: int, world_size: int, shards: list[torch.Tensor]) -> dict:
    """Worker (CUDA; nccl, or gloo when the ranks share one GPU): convert BN to SyncBatchNorm, *then* wrap in
    DDP, run one forward.

    Returns ``running_mean`` (after one training forward, on the CPU) and
    ``n``, this rank's number of rows. With momentum 1.0 the running mean
    equals the mean that SyncBatchNorm normalised with: the global one.
    """
    import torch.nn as nn
    from torch.nn.parallel import DistributedDataParallel as DDP

    dev = torch.device("cuda", rank % torch.cuda.device_count())  # rank r on GPU r (nccl: one rank per GPU)
    x = shards[rank].to(dev)
    c = x.shape[1]
    model = nn.Sequential(nn.BatchNorm1d(c, momentum=1.0)).to(dev)
    model = nn.SyncBatchNorm.convert_sync_batchnorm(model)  # the documented order: convert, then wrap
    ddp = DDP(model, device_ids=[dev.index])
    ddp(x).sum().backward()
    return {"rank": rank, "n": int(x.shape[0]), "running_mean": ddp.module[0].running_mean.cpu()}


def syncbn_cuda_order_worker(rank: int, world_size: int, shards: list[torch.Tensor]) -> dict:
    """Worker (CUDA; nccl, or gloo when the ranks share one GPU): SyncBatchNorm converted *after* DDP wrapping;
    one training forward.

    Returns ``running_mean`` (momentum 1.0, so it is the mean SyncBatchNorm
    normalised with) and ``n``: compare it with :func:`syncbn_cuda_worker`
    (convert first) to see whether the order changes what is computed.
    """
    import torch.nn as nn
    from torch.nn.parallel import DistributedDataParallel as DDP

    dev = torch.device("cuda", rank % torch.cuda.device_count())  # rank r on GPU r (nccl: one rank per GPU)
    x = shards[rank].to(dev)
    ddp = DDP(nn.Sequential(nn.BatchNorm1d(x.shape[1], momentum=1.0)).to(dev), device_ids=[dev.index])
    ddp = nn.SyncBatchNorm.convert_sync_batchnorm(ddp)  # after wrapping: DDP's own check never saw it
    ddp(x).sum().backward()
    return {"rank": rank, "n": int(x.shape[0]), "running_mean": ddp.module[0].running_mean.cpu(),
            "kind": type(ddp.module[0]).__name__}


def sampler_worker(rank: int, world_size: int, n: int = 10, epochs: int = 2, batch_size: int = 4,
                   drop_last: bool = False) -> dict:
    """Worker: the sample indices this rank sees per epoch, three ways. Returns a dict of lists of lists.

    ``no_sampler``: ``DataLoader(shuffle=True)`` on the whole dataset after the
    same ``torch.manual_seed(0)`` on every rank (what "seed everything" gives);
    ``no_set_epoch``: a ``DistributedSampler`` that is never told the epoch;
    ``set_epoch``: the same sampler with ``sampler.set_epoch(epoch)`` before
    each epoch. Each value is ``[indices of epoch 0, indices of epoch 1, ...]``.
    """
    from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

    ds = TensorDataset(torch.arange(n))
    out: dict[str, Any] = {"rank": rank}
    torch.manual_seed(0)
    plain = DataLoader(ds, batch_size=batch_size, shuffle=True)
    out["no_sampler"] = [torch.cat([b[0] for b in plain]).tolist() for _ in range(epochs)]
    for key, set_epoch in (("no_set_epoch", False), ("set_epoch", True)):
        sampler = DistributedSampler(ds, shuffle=True, seed=0, drop_last=drop_last)
        loader = DataLoader(ds, batch_size=batch_size, sampler=sampler)
        rows = []
        for epoch in range(epochs):
            if set_epoch:
                sampler.set_epoch(epoch)
            rows.append(torch.cat([b[0] for b in loader]).tolist())
        out[key] = rows
    return out


def syncbn_facts_worker(rank: int, world_size: int) -> dict:
    """Worker: what SyncBatchNorm does on the CPU inside a gloo process group. Returns a dict of observations.

    ``same_objects``: whether ``convert_sync_batchnorm`` kept the very same
    weight, bias, running_mean, running_var and num_batches_tracked objects;
    ``eval_matches_bn``: whether the converted layer in ``eval()`` gives plain
    BatchNorm's output; ``train_forward``: the error its training forward
    raises (its own device check, no DDP involved); ``ddp_wrap``: the error
    ``DDP(...)`` raises when built around it; ``after_wrap_same_objects``:
    after converting a model that is *already* wrapped, whether the wrapper's
    module holds the new SyncBatchNorm with the old parameter objects, and
    ``after_wrap_forward`` what its forward then raises.
    """
    import torch.nn as nn
    import torch.nn.functional as F
    from torch.nn.parallel import DistributedDataParallel as DDP

    torch.manual_seed(0)
    bn = nn.BatchNorm1d(3)
    bn(torch.randn(8, 3) * 2 + 1)  # some running statistics
    sbn = nn.SyncBatchNorm.convert_sync_batchnorm(nn.Sequential(bn))[0]
    out: dict[str, Any] = {"rank": rank, "type": type(sbn).__name__}
    out["same_objects"] = all(getattr(sbn, k) is getattr(bn, k)
                              for k in ("weight", "bias", "running_mean", "running_var", "num_batches_tracked"))
    x = torch.randn(6, 3)
    sbn.eval()
    with torch.no_grad():
        out["eval_matches_bn"] = bool(torch.allclose(
            sbn(x), F.batch_norm(x, bn.running_mean, bn.running_var, bn.weight, bn.bias, False, 0.0, bn.eps)))
    sbn.train()
    try:
        sbn(x)
        out["train_forward"] = "ran"
    except ValueError as err:
        out["train_forward"] = f"ValueError: {err}"
    try:
        DDP(nn.Sequential(nn.SyncBatchNorm(3)))
        out["ddp_wrap"] = "wrapped"
    except ValueError as err:
        out["ddp_wrap"] = f"ValueError: {err}"
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 3), nn.BatchNorm1d(3))
    old_weight = model[1].weight
    wrapped = DDP(model)
    converted = nn.SyncBatchNorm.convert_sync_batchnorm(wrapped)
    inner = converted.module[1]
    out["after_wrap_same_objects"] = (converted is wrapped and type(inner).__name__ == "SyncBatchNorm"
                                      and inner.weight is old_weight)
    try:
        converted(x)
        out["after_wrap_forward"] = "ran"
    except ValueError as err:
        out["after_wrap_forward"] = f"ValueError: {err}"
    return out


def counting_comm_hook() -> Callable:
    """Return a DDP communication hook that all-reduces like the default one and records every bucket it sends.

    Register it with ``ddp.register_comm_hook(None, hook)`` before the first
    backward. ``hook.calls`` is the list of ``(bucket index, number of
    gradient elements)`` pairs, one per bucket all-reduce, in order. (A plain
    function without annotations: DDP inspects a hook's name and signature.)
    """
    from torch.distributed.algorithms.ddp_comm_hooks.default_hooks import allreduce_hook

    calls: list[tuple[int, int]] = []

    def counting_allreduce_hook(state, bucket):
        calls.append((int(bucket.index()), int(bucket.buffer().numel())))
        return allreduce_hook(state, bucket)

    counting_allreduce_hook.calls = calls  # type: ignore[attr-defined]
    return counting_allreduce_hook


def accumulation_model(seed: int, d_in: int = 6, hidden: int = 8, classes: int = 3,
                       dtype: torch.dtype = torch.float64) -> "torch.nn.Module":
    """Return the small classifier of the accumulation exercise (the same weights for the same seed)."""
    import torch.nn as nn

    g = torch.Generator().manual_seed(seed)
    model = nn.Sequential(nn.Linear(d_in, hidden), nn.Tanh(), nn.Linear(hidden, classes)).to(dtype)
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.randn(p.shape, generator=g, dtype=dtype) * 0.5)
    return model


def accumulation_demo_worker(rank: int, world_size: int, n_micro: int = 4, accum_steps: int = 2,
                             bucket_cap_mb: float | None = None, layers: int = 3, width: int = 64) -> dict:
    """Worker: count DDP's gradient all-reduces with and without ``no_sync``; returns a dict.

    Runs ``n_micro`` forward/backward passes of a ``layers``-deep MLP twice:
    ``plain`` (every backward synchronises) and ``no_sync`` (all but every
    ``accum_steps``-th backward inside ``ddp.no_sync()``). For each:
    ``per_backward`` (for every backward, the element counts of the buckets
    it all-reduced, see :func:`counting_comm_hook`; ``[]`` when it sent
    nothing) and ``grad`` (the first layer's gradient at the end). Also
    ``params`` (number of parameter elements in the model).
    """
    import contextlib

    import torch.nn as nn
    from torch.nn.parallel import DistributedDataParallel as DDP

    def model() -> nn.Module:
        torch.manual_seed(0)
        mods: list[nn.Module] = []
        for i in range(layers):
            mods += [nn.Linear(4 if i == 0 else width, width), nn.ReLU()]
        return nn.Sequential(*mods, nn.Linear(width, 2))

    g = torch.Generator().manual_seed(rank)
    xs = [torch.randn(4, 4, generator=g) for _ in range(n_micro)]
    out: dict[str, Any] = {"rank": rank}
    for name in ("plain", "no_sync"):
        kwargs = {} if bucket_cap_mb is None else {"bucket_cap_mb": bucket_cap_mb}
        ddp = DDP(model(), **kwargs)
        hook = counting_comm_hook()
        ddp.register_comm_hook(None, hook)
        per_backward = []
        for i, x in enumerate(xs):
            last_of_group = (i + 1) % accum_steps == 0 or i == len(xs) - 1
            ctx = ddp.no_sync() if (name == "no_sync" and not last_of_group) else contextlib.nullcontext()
            before = len(hook.calls)
            with ctx:
                ddp(x).sum().backward()
            per_backward.append([n for _, n in hook.calls[before:]])
        out[name] = {"per_backward": per_backward, "grad": ddp.module[0].weight.grad.clone()}
        out["params"] = sum(p.numel() for p in ddp.parameters())
    return out


def unused_params_worker(rank: int, world_size: int, steps: int = 30, depth: int = 12, width: int = 32) -> dict:
    """Worker: what an unused parameter does to DDP, and what ``find_unused_parameters=True`` costs.

    ``errors``: for a model whose ``aux`` layer forward never uses, the
    outcome of two training steps with ``find_unused_parameters`` False and
    True (``"ok"`` or the first line of the error). ``ms_per_step``: mean
    milliseconds per forward/backward of a ``depth``-layer MLP with no unused
    parameter, with the flag off and on (after 3 warm-up steps; timings from
    a shared CPU are noisy).
    """
    import time as _time

    import torch.nn as nn
    from torch.nn.parallel import DistributedDataParallel as DDP

    class TwoHeads(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.head = nn.Linear(4, 2)
            self.aux = nn.Linear(4, 2)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.head(x)

    out: dict[str, Any] = {"rank": rank, "errors": {}, "ms_per_step": {}}
    x = torch.randn(3, 4)
    for flag in (False, True):
        torch.manual_seed(0)
        ddp = DDP(TwoHeads(), find_unused_parameters=flag)
        results = []
        for _ in range(2):
            try:
                ddp(x).sum().backward()
                results.append("ok")
            except RuntimeError as err:
                results.append(str(err).splitlines()[0])
        out["errors"][flag] = results
    xb = torch.randn(16, width)
    for flag in (False, True, False, True):  # interleaved: a busy machine slows both equally
        torch.manual_seed(0)
        mods: list[nn.Module] = []
        for _ in range(depth):
            mods += [nn.Linear(width, width), nn.ReLU()]
        ddp = DDP(nn.Sequential(*mods), find_unused_parameters=flag)
        for _ in range(3):
            ddp(xb).sum().backward()
        t0 = _time.perf_counter()
        for _ in range(steps):
            ddp(xb).sum().backward()
        ms = (_time.perf_counter() - t0) / steps * 1000
        out["ms_per_step"].setdefault(flag, []).append(ms)
    out["ms_per_step"] = {k: min(v) for k, v in out["ms_per_step"].items()}
    return out


def accumulation_worker(rank: int, world_size: int, fn: Callable, micro_batches: list, accum_steps: int,
                        lr: float = 0.1, seed: int = 0, momentum: float = 0.0) -> dict:
    """Worker for the gradient-accumulation exercise: wrap a fresh model in DDP and call ``fn`` on it.

    Builds :func:`accumulation_model` (``seed``; float64, or the dtype of the
    micro-batches), wraps it in ``DDP``, registers a :func:`counting_comm_hook`,
    and calls ``fn(ddp_model, micro_batches[rank], optimizer, accum_steps)``
    with ``SGD(lr, momentum)``. Returns a dict: ``result`` (what ``fn``
    returned), ``params`` (the final parameters, detached), ``calls`` (bucket
    all-reduces), ``grads_cleared`` (every ``.grad`` is ``None`` or zero at
    the end) and ``buckets`` (the number of distinct bucket indices seen).
    """
    import torch.nn as nn  # noqa: F401
    from torch.nn.parallel import DistributedDataParallel as DDP

    batches = micro_batches[rank]
    dtype = batches[0][0].dtype if batches else torch.float64
    d_in = batches[0][0].shape[1] if batches else 6
    model = accumulation_model(seed, d_in=d_in, dtype=dtype)
    ddp = DDP(model)
    hook = counting_comm_hook()
    ddp.register_comm_hook(None, hook)
    opt = torch.optim.SGD(ddp.parameters(), lr=lr, momentum=momentum)
    result = fn(ddp, batches, opt, accum_steps)
    return {"rank": rank, "result": result, "params": [p.detach().clone() for p in model.parameters()],
            "calls": len(hook.calls), "buckets": len({c[0] for c in hook.calls}),
            "grads_cleared": all(p.grad is None or bool((p.grad == 0).all()) for p in model.parameters())}


def accumulation_cases_worker(rank: int, world_size: int, fn: Callable, cases: list) -> list[dict]:
    """Worker: :func:`accumulation_worker` once per case, in one launch (fresh model, DDP wrapper and hook each).

    ``cases``: a list of ``(micro_batches, accum_steps, lr, seed, momentum)``. Returns the list of
    :func:`accumulation_worker` results, in order. One launch instead of one per case: starting the ranks
    costs more than these small cases.
    """
    return [accumulation_worker(rank, world_size, fn, micro, k, lr, seed, mom) for micro, k, lr, seed, mom in cases]


# --- Profiling a DDP training step, a CPU stand-in for SyncBatchNorm, logging across ranks ---------

def settle_collectives(timeout_s: float = 2.0) -> bool:
    """Wait until every collective this rank started has finished, its profiler event included (a barrier).

    A gloo collective completes its future (what DDP's backward and ``work.get_future()`` wait on) *before*
    its worker thread records the end of its profiler event. A rank that stops the profiler right after its
    last step can collect the events while that thread still writes one: on a busy machine a rank died with
    SIGABRT inside ``profiler.stop()``. gloo's ``barrier`` first waits for every collective still queued or
    running, through ``Work.wait``, which returns only once that event is recorded. The workers pass this
    function to :func:`course.profiling.profile_steps` as ``settle``, which calls it after the last ``step N``
    range, so the barrier is in no step's collectives.

    Every rank must call it. The ranks first meet through the launch's store (no collective), for about
    ``timeout_s`` seconds (the FileStore counts its wait in whole seconds: up to one more). If one does not
    come in time (its code is stuck in a collective the others did not issue, a wrong answer), the others
    skip the barrier, return ``False`` and leave, so that rank fails within about 3 s instead of waiting
    out the process group's timeout. Ranks that just finished a step are in step within milliseconds (the
    step's own collectives hold them together), so 2 s is ample; a rank stalled longer than that only skips
    the drain. The store decides once, for every rank: the last rank to arrive writes
    "all" unless a rank that gave up wrote "gave-up" first (``compare_set`` keeps the first), so a late rank
    never enters a barrier that its peers skipped. Ranks started by torchrun (no launch store) go straight
    to the barrier.
    """
    import torch.distributed as dist

    if not (dist.is_available() and dist.is_initialized()):
        return True
    if _RANK_STORE is not None:
        key = f"course-settle-{next(_SETTLE_CALLS)}"
        state = key + "-state"
        if _RANK_STORE.add(key, 1) == dist.get_world_size():
            _RANK_STORE.compare_set(state, "", "all")
        try:
            _RANK_STORE.wait([state], timedelta(seconds=timeout_s))
        except Exception:  # noqa: BLE001  (a timeout: some rank did not come)
            _RANK_STORE.compare_set(state, "", "gave-up")
        if _RANK_STORE.get(state) != b"all":
            return False
    dist.barrier()
    return True


class _GatherRows(torch.autograd.Function):
    """All-gather equal-sized shards along dimension 0; the backward all-reduces and keeps this rank's rows."""

    @staticmethod
    def forward(ctx, x: torch.Tensor) -> torch.Tensor:  # type: ignore[override]
        import torch.distributed as dist

        parts = [torch.empty_like(x) for _ in range(dist.get_world_size())]
        dist.all_gather(parts, x.contiguous())
        ctx.rank, ctx.rows = dist.get_rank(), x.shape[0]
        return torch.cat(parts)

    @staticmethod
    def backward(ctx, grad: torch.Tensor) -> torch.Tensor:  # type: ignore[override]
        import torch.distributed as dist

        grad = grad.contiguous().clone()
        dist.all_reduce(grad)  # every rank's loss depends on this rank's rows (through the statistics)
        return grad[ctx.rank * ctx.rows:(ctx.rank + 1) * ctx.rows]


class GatherBatchNorm2d(torch.nn.BatchNorm2d):
    """A CPU stand-in for ``SyncBatchNorm`` (which runs on GPUs only), for traces and demonstrations.

    In training mode inside a process group, it all-gathers every rank's activations (all ranks must hold
    the same number of rows), normalises with the statistics of the whole global batch and returns this
    rank's rows; its backward all-reduces the gradient. ``SyncBatchNorm`` sends less (per-channel mean,
    inverse std and count instead of the activations) but synchronises at the same two places: once in the
    forward, once in the backward, per layer. Outside a process group or in ``eval()`` it is plain BatchNorm.
    """

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        import torch.distributed as dist
        import torch.nn.functional as F

        if not self.training or not dist.is_available() or not dist.is_initialized():
            return super().forward(x)
        full = _GatherRows.apply(x)
        y = F.batch_norm(full, self.running_mean, self.running_var, self.weight, self.bias, True,
                         0.1 if self.momentum is None else self.momentum, self.eps)
        self.num_batches_tracked.add_(1)
        r, n = dist.get_rank(), x.shape[0]
        return y[r * n:(r + 1) * n]


def step_model(sync_bn: bool = False, width: int = 8, classes: int = 3, seed: int = 0) -> "torch.nn.Module":
    """The small CNN of the profiled training step: conv, BatchNorm, ReLU, conv, BatchNorm, pool, linear.

    ``sync_bn=True`` uses :class:`GatherBatchNorm2d` (synchronised on the CPU) instead of ``BatchNorm2d``.
    Same weights for the same ``seed``.
    """
    import torch.nn as nn

    torch.manual_seed(seed)
    bn = GatherBatchNorm2d if sync_bn else nn.BatchNorm2d
    return nn.Sequential(nn.Conv2d(3, width, 3, stride=2, padding=1), bn(width), nn.ReLU(),
                         nn.Conv2d(width, width, 3, stride=2, padding=1), bn(width), nn.ReLU(),
                         nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(width, classes))


def profiled_step_worker(rank: int, world_size: int, samples: list, steps: int = 4, batch_size: int = 8,
                         sync_bn: bool = False, memory: bool = True,
                         slow_rank: int | None = None, slow_ms: float = 0.0) -> dict:
    """Worker: profile ``steps`` DDP training steps of the chapter's loop on this rank; return the raw trace.

    The loop: a ``DataLoader`` over ``course.data.DecodeDataset(samples)`` (JPEGs decoded in
    ``__getitem__``, in this process: ranks started by :func:`launch` are daemon processes, which may not
    start DataLoader workers) with a ``DistributedSampler``, :func:`step_model` wrapped in
    ``DDP``, cross-entropy, SGD. The forward and the backward run inside ``record_function("forward")`` and
    ``record_function("backward")`` ranges. ``slow_rank`` sleeps ``slow_ms`` in each of its steps before the
    forward (a straggler). Returns ``raw`` (the Chrome trace, see :func:`course.profiling.Trace.from_chrome`),
    ``batch_mean`` (the channel means the first BatchNorm normalised with in the last step, this rank's batch
    or the global one) and ``loss`` (the last step's loss).
    """
    import time as _time

    import torch.nn.functional as F
    from torch.nn.parallel import DistributedDataParallel as DDP
    from torch.profiler import record_function
    from torch.utils.data import DataLoader, DistributedSampler

    from course.data import DecodeDataset, to_float01
    from course.profiling import profile_steps
    from course.traces import quiet_stderr

    ds = DecodeDataset(samples, decoder="torchvision", transform=to_float01)
    sampler = DistributedSampler(ds, num_replicas=world_size, rank=rank, shuffle=True, seed=0, drop_last=True)
    loader = DataLoader(ds, batch_size=batch_size, sampler=sampler, drop_last=True)
    model = step_model(sync_bn=sync_bn)
    ddp = DDP(model)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.05)
    seen: dict[str, Any] = {}

    def record_bn_input(module, inputs):
        seen["batch_mean"] = inputs[0].detach().mean(dim=(0, 2, 3))

    model[1].register_forward_pre_hook(record_bn_input)
    state = {"epoch": 0, "it": None}

    def next_batch():
        try:
            return next(state["it"])
        except (StopIteration, TypeError):
            sampler.set_epoch(state["epoch"])
            state["epoch"] += 1
            state["it"] = iter(loader)
            return next(state["it"])

    def step() -> None:
        x, y = next_batch()
        if slow_rank == rank and slow_ms:
            _time.sleep(slow_ms / 1000)
        opt.zero_grad()
        with record_function("forward"):
            out = ddp(x)
        loss = F.cross_entropy(out, y)
        with record_function("backward"):
            loss.backward()
        opt.step()
        seen["loss"] = loss.item()

    # cuda=False: gloo ranks on the CPU; profiling CUDA would initialise it in every rank for nothing;
    # quiet_stderr: the allocator's "unknown size" warnings, one per block freed while profiling.
    with quiet_stderr():
        trace = profile_steps(step, steps=steps, warmup=1, memory=memory, cuda=False, settle=settle_collectives)
    if sync_bn:  # the statistics GatherBatchNorm2d normalised with: the global batch's
        gathered = [torch.empty_like(seen["batch_mean"]) for _ in range(world_size)]
        import torch.distributed as dist

        dist.all_gather(gathered, seen["batch_mean"])
        seen["global_mean"] = torch.stack(gathered).mean(0)
    return {"rank": rank, "raw": trace.raw, **seen}


def logged_train_worker(rank: int, world_size: int, fn: Callable, cases: list, seed: int = 0,
                        keep_trace: bool = False) -> list[dict]:
    """Worker for the logging exercise: for each case, train a fresh DDP model with ``fn`` under the profiler.

    ``cases``: a list of ``(batches_per_rank, log_every, lr)``, ``batches_per_rank[rank]`` this rank's list
    of ``(x, y)``. For each case it builds :func:`accumulation_model` (``seed``, float64, no buffers, so DDP
    broadcasts nothing) with a gradient of 0.25 already in every parameter (left from an earlier backward, which
    each training step must clear before its own), wraps it in ``DDP`` with a :func:`counting_comm_hook`, and profiles one call
    ``fn(ddp_model, batches, optimizer, log_every)`` (SGD, ``lr``). Returns one dict per case: ``result``
    (what ``fn`` returned), ``params`` (final parameters), ``ddp_allreduces`` (DDP's own gradient
    all-reduces, from the hook), ``extra`` (the collectives ``fn`` issued itself, read from the trace with
    :func:`course.traces.collectives`: those outside DDP's forward and outside the backward; DDP's own
    bucket broadcasts and gradient all-reduces are inside), ``outside`` (their names and counts) and
    ``in_ddp`` (the collectives DDP issued in its forward and backward), and with ``keep_trace`` ``raw`` (the
    Chrome trace of the call: one ``step 0`` range around the whole call).
    """
    from torch.nn.parallel import DistributedDataParallel as DDP

    from course.profiling import profile_steps
    from course.traces import collectives, quiet_stderr

    out = []
    for batches_per_rank, log_every, lr in cases:
        batches = batches_per_rank[rank]
        model = accumulation_model(seed, d_in=batches[0][0].shape[1] if batches else 6)
        for p in model.parameters():  # left over from an earlier backward: each step must clear them first
            p.grad = torch.full_like(p, 0.25)
        ddp = DDP(model)
        hook = counting_comm_hook()
        ddp.register_comm_hook(None, hook)
        opt = torch.optim.SGD(ddp.parameters(), lr=lr)
        box: dict[str, Any] = {}

        def call() -> None:
            box["result"] = fn(ddp, batches, opt, log_every)

        with quiet_stderr():
            trace = profile_steps(call, steps=1, warmup=0, cuda=False, settle=settle_collectives)
        where = collectives(trace)[0]
        out.append({"result": box.get("result"), "params": [p.detach().clone() for p in model.parameters()],
                    "ddp_allreduces": len(hook.calls), "extra": sum(where["outside"].values()),
                    "outside": dict(where["outside"]), "in_ddp": dict(where["forward"] + where["backward"]),
                    **({"raw": trace.raw} if keep_trace else {})})
    return out


def logged_steps_worker(rank: int, world_size: int, fn: Callable, batches_per_rank: list, lr: float = 0.3,
                        seed: int = 0) -> dict:
    """Worker: profile a logging training loop one training step per ``step N`` range; return the raw trace.

    Calls ``fn(ddp_model, [batch], optimizer, 1)`` once per batch of ``batches_per_rank[rank]`` (a one-step
    call that logs once): the first call is the warm-up (outside the profiler, where DDP also rebuilds its
    buckets), the others are profiled, so :func:`course.traces.step_phases` and
    :func:`course.traces.collectives` read one training step per row. Model: :func:`accumulation_model`
    (``seed``) in ``DDP``, SGD(``lr``). Returns ``raw`` and ``logged`` (what the calls returned).
    """
    from torch.nn.parallel import DistributedDataParallel as DDP

    from course.profiling import profile_steps
    from course.traces import quiet_stderr

    batches = batches_per_rank[rank]
    model = accumulation_model(seed, d_in=batches[0][0].shape[1])
    ddp = DDP(model)
    opt = torch.optim.SGD(ddp.parameters(), lr=lr)
    logged: list = []
    position = {"i": 0}

    def step() -> None:
        batch = batches[position["i"] % len(batches)]
        position["i"] += 1
        logged.append(fn(ddp, [batch], opt, 1))

    with quiet_stderr():
        trace = profile_steps(step, steps=len(batches) - 1, warmup=1, cuda=False, settle=settle_collectives)
    return {"rank": rank, "raw": trace.raw, "logged": logged}


def torchrun_main(argv: list[str] | None = None) -> None:
    """The script ``torchrun --nproc-per-node 2 -m course.ddp OUT_DIR`` runs in every process it starts.

    It reads what ``torchrun`` put in its environment (``RANK``, ``LOCAL_RANK``, ``WORLD_SIZE``,
    ``MASTER_ADDR``, ``MASTER_PORT``), initialises a gloo process group from it (``init_method="env://"``,
    the default), trains a tiny DDP model for a few steps on its ``DistributedSampler`` shard, and then:
    rank 0 alone writes the checkpoint and a summary into ``OUT_DIR`` (one writer, no two ranks racing on
    one file); ``dist.barrier()``; every rank loads rank 0's checkpoint and checks that it equals its own
    parameters (DDP kept them identical). Each rank prints one line, prefixed ``[rank R]``.
    """
    import json
    from pathlib import Path

    import torch.distributed as dist
    import torch.nn as nn
    import torch.nn.functional as F
    from torch.nn.parallel import DistributedDataParallel as DDP
    from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

    argv = sys.argv[1:] if argv is None else argv
    out_dir = Path(argv[0])
    env = {k: os.environ.get(k) for k in ("RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE",
                                          "MASTER_ADDR", "MASTER_PORT")}
    rank, local_rank, world = int(env["RANK"]), int(env["LOCAL_RANK"]), int(env["WORLD_SIZE"])
    torch.set_num_threads(1)
    dist.init_process_group("gloo")  # env://: MASTER_ADDR, MASTER_PORT, RANK and WORLD_SIZE from torchrun
    g = torch.Generator().manual_seed(0)
    ds = TensorDataset(torch.randn(64, 4, generator=g), torch.randint(0, 2, (64,), generator=g))
    sampler = DistributedSampler(ds, seed=0)  # num_replicas and rank come from the process group
    loader = DataLoader(ds, batch_size=8, sampler=sampler)
    torch.manual_seed(0)
    model = DDP(nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2)))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    seen = []
    for epoch in range(2):
        sampler.set_epoch(epoch)
        for inputs, labels in loader:
            opt.zero_grad()
            F.cross_entropy(model(inputs), labels).backward()
            opt.step()
        seen.append(len(sampler))
    ckpt = out_dir / "model.pt"
    if rank == 0:  # one writer
        torch.save(model.module.state_dict(), ckpt)
        (out_dir / "summary.json").write_text(json.dumps({"world_size": world, "samples_per_rank": seen}))
    dist.barrier()  # nobody reads the checkpoint before rank 0 has finished writing it
    state = torch.load(ckpt, weights_only=True)
    same = all(torch.equal(state[k], v) for k, v in model.module.state_dict().items())
    line = (f"[rank {rank}] " + " ".join(f"{k}={v}" for k, v in env.items())
            + f" pid={os.getpid()} samples/epoch={seen[0]} read rank 0's checkpoint after the barrier: "
              f"equal to my parameters: {same}\n")
    sys.stdout.write(line)  # one write per line: the ranks share torchrun's stdout
    sys.stdout.flush()
    dist.destroy_process_group()


def hang_worker(rank: int, world_size: int, mistake: str, timeout_s: float = 1.5, linger: float = 2.0) -> dict:
    """Worker: make a deliberate collective mistake and report what each rank sees, without hanging forever.

    ``mistake``: ``"shape"`` (rank 0 all-reduces 3 values, the others 4), ``"op"`` (rank 0 all-reduces,
    the others broadcast) or ``"skip"`` (only rank 0 all-reduces). The collectives run in a process group made
    for the demonstration, ``dist.new_group(timeout=timedelta(seconds=timeout_s))``, so a waiting rank gives
    up after ``timeout_s`` (the launch's own group keeps a timeout long enough to start up on a busy machine).
    Every rank then stays alive until ``linger`` seconds after its call began, as a real rank would (it went on
    to other work). Returns ``outcome`` (``"ok"`` or the error's first line), ``seconds`` until the call
    returned or raised, ``value`` (the tensor after a call that returned) and ``debug``
    (``TORCH_DISTRIBUTED_DEBUG`` in this rank: set it with ``launch(..., env=...)``).
    """
    import time as _time
    from datetime import timedelta

    import torch.distributed as dist

    from course.traces import quiet_stderr

    group = dist.new_group(timeout=timedelta(seconds=timeout_s))
    t = torch.ones(3 if (mistake != "shape" or rank == 0) else 4)
    out: dict[str, Any] = {"rank": rank, "debug": os.environ.get("TORCH_DISTRIBUTED_DEBUG", "OFF"), "value": None}
    t0 = _time.perf_counter()
    try:
        with quiet_stderr():  # gloo also logs the error there; it is returned instead
            if mistake == "op" and rank != 0:
                dist.broadcast(t, 0, group=group)
            elif mistake != "skip" or rank == 0:
                dist.all_reduce(t, group=group)
        out["outcome"], out["value"] = "ok", t.tolist()
    except RuntimeError as err:
        out["outcome"] = short_error(err)
    out["seconds"] = _time.perf_counter() - t0
    _time.sleep(max(0.0, linger - (_time.perf_counter() - t0)))
    return out


def short_error(err: BaseException, limit: int = 400) -> str:
    """A collective's error in one line, the DETAIL fingerprints without their ``TensorOptions(...)``.

    The ``DETAIL`` mismatch message repeats ``TensorDeviceTypes=TensorOptions(dtype=..., device=..., ...)``
    for each rank; dropping it keeps what differs (operation, shapes, dtypes) readable. Whitespace runs become
    one space; the result is cut at ``limit`` characters.
    """
    import re

    text = re.sub(r",? ?TensorDeviceTypes=TensorOptions\(.*?memory_format=\(nullopt\)\)", "", str(err))
    text = re.sub(r"\s+", " ", text).strip()
    return text[:limit]


def monitored_barrier_worker(rank: int, world_size: int, late_rank: int = 1, timeout_s: float = 1.5) -> dict:
    """Worker: every rank but ``late_rank`` enters ``dist.monitored_barrier``; return what each rank reports.

    ``monitored_barrier`` (gloo only) makes rank 0 wait for each other rank in turn, so its error names the
    rank that did not arrive, where a plain ``barrier`` would only time out. ``late_rank`` arrives after
    ``timeout_s + 1`` seconds. Returns ``outcome`` (``"ok"``, ``"arrived late"`` or the error's first line)
    and ``seconds``.
    """
    import time as _time
    from datetime import timedelta

    import torch.distributed as dist

    from course.traces import quiet_stderr

    out: dict[str, Any] = {"rank": rank}
    t0 = _time.perf_counter()
    if rank == late_rank:
        _time.sleep(timeout_s + 1.0)
        out["outcome"], out["seconds"] = "arrived late", _time.perf_counter() - t0
        return out
    try:
        with quiet_stderr():  # gloo also logs the error there; it is returned instead
            dist.monitored_barrier(timeout=timedelta(seconds=timeout_s))
        out["outcome"] = "ok"
    except RuntimeError as err:
        out["outcome"] = short_error(err, 300)
    out["seconds"] = _time.perf_counter() - t0
    return out


def fsdp_worker(rank: int, world_size: int, checkpoint_dir: str, width: int = 16, seed: int = 0) -> dict:
    """Worker: one FSDP2 (``fully_shard``) training step on the CPU, profiled, then a distributed checkpoint.

    Builds an MLP (``Linear(8, width)``, ``ReLU``, ``Linear(width, width)``, ``ReLU``, ``Linear(width, 2)``,
    weights from ``seed``), applies ``fully_shard`` to each ``Linear`` and then to the root, and runs one SGD
    step (lr 0.1) on this rank's batch (4 rows from generator ``seed + 1 + rank``) under the profiler. Then
    saves ``{"model": model.state_dict()}`` with ``torch.distributed.checkpoint.save`` into
    ``checkpoint_dir``. Returns ``param_type`` (the class of a parameter after sharding), ``shapes`` (for each
    parameter: its full shape and this rank's local shard's shape), ``collectives`` (forward / backward /
    outside counts, :func:`course.traces.collectives`), ``params`` (the full parameters after the step,
    all-gathered), ``batch`` (this rank's ``(x, y)``) and ``files`` (what the checkpoint folder holds).
    """
    import torch.distributed.checkpoint as dcp
    import torch.nn as nn
    import torch.nn.functional as F
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.fsdp import fully_shard
    from torch.profiler import record_function

    from course.profiling import profile_steps
    from course.traces import collectives, quiet_stderr

    model = fsdp_reference_model(width, seed)
    mesh = init_device_mesh("cpu", (world_size,))
    for layer in model:
        if isinstance(layer, nn.Linear):
            fully_shard(layer, mesh=mesh)
    fully_shard(model, mesh=mesh)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    g = torch.Generator().manual_seed(seed + 1 + rank)
    x, y = torch.randn(4, 8, generator=g), torch.randint(0, 2, (4,), generator=g)

    def step() -> None:
        opt.zero_grad()
        with record_function("forward"):
            out = model(x)
        loss = F.cross_entropy(out, y)
        with record_function("backward"):
            loss.backward()
        opt.step()

    with quiet_stderr():
        trace = profile_steps(step, steps=1, warmup=0, cuda=False, settle=settle_collectives)
    where = collectives(trace)[0]
    out = {"rank": rank, "param_type": type(model[0].weight).__name__,
           "shapes": {n: (tuple(p.shape), tuple(p.to_local().shape)) for n, p in model.named_parameters()},
           "collectives": {k: dict(v) for k, v in where.items()},
           "params": {n: p.full_tensor().detach().clone() for n, p in model.named_parameters()},
           "batch": (x, y)}
    dcp.save({"model": model.state_dict()}, checkpoint_id=checkpoint_dir)
    import torch.distributed as dist

    dist.barrier()
    out["files"] = sorted(os.listdir(checkpoint_dir))
    return out


def fsdp_reference_model(width: int = 16, seed: int = 0) -> "torch.nn.Module":
    """The MLP of :func:`fsdp_worker`, unsharded, with the same initial weights for the same ``seed``."""
    import torch.nn as nn

    torch.manual_seed(seed)
    return nn.Sequential(nn.Linear(8, width), nn.ReLU(), nn.Linear(width, width), nn.ReLU(), nn.Linear(width, 2))


if __name__ == "__main__":  # torchrun --nproc-per-node 2 -m course.ddp OUT_DIR
    torchrun_main()
