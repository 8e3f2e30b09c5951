"""FSDP2 as it is used (Chapter 5b): a mixed-precision policy, ``reshard_after_forward``, and a checkpoint of the
model *and* its optimizer that another layout can load.

:func:`practice_worker` runs on the ranks of :func:`course.ddp.launch` (``gloo`` on the CPU). It shards the
MLP of :func:`course.ddp.fsdp_reference_model` with ``fully_shard`` under
``MixedPrecisionPolicy(param_dtype=bfloat16, reduce_dtype=float32)``, runs one AdamW step under the
profiler, and reports what a student should look at:

* the dtypes each ``Linear`` computed in (input, weight, output), and the dtype and local shape of the
  gradients (float32 shards: the policy casts for the computation and reduces in float32);
* what the parameters are **between forward and backward**: sharded float32 ``DTensor``s when the layers
  reshard after forward, whole bfloat16 tensors (held, at a memory cost) when they do not;
* the collectives of the step by phase (:func:`course.traces.collectives`): with resharding, the backward
  gathers each layer's parameters again;
* the model and optimizer state of ``torch.distributed.checkpoint.state_dict.get_state_dict`` (keyed by
  parameter name, ``DTensor`` shards), saved with ``torch.distributed.checkpoint.save``, and the full
  parameters and AdamW moments after the step, so a single process can check a load into another layout
  (:func:`load_unsharded`).
"""
from __future__ import annotations

import os
import warnings

import torch

__all__ = ["practice_worker", "held_bytes", "load_unsharded"]


def held_bytes(model: "torch.nn.Module") -> int:
    """Bytes of the parameters that are whole tensors on this rank right now (a ``DTensor`` shard counts 0)."""
    from torch.distributed.tensor import DTensor

    return sum(p.numel() * p.element_size() for p in model.parameters() if not isinstance(p, DTensor))


def practice_worker(rank: int, world_size: int, checkpoint_dir: str, reshard_after_forward: bool = True,
                    width: int = 16, seed: int = 0) -> dict:
    """Worker: one AdamW step of an FSDP2 model under a bfloat16 mixed-precision policy, then a checkpoint.

    Each ``Linear`` of :func:`course.ddp.fsdp_reference_model` (``width``, ``seed``) is sharded with
    ``reshard_after_forward`` as given, the root with ``reshard_after_forward=False`` (its parameters are needed
    again at once by the backward). This rank's batch is 4 rows from generator ``seed + 1 + rank``. Returns
    ``computed`` (per ``Linear``: the dtypes of its input, its weight and its output during the forward),
    ``between`` (per parameter, after the forward and before the backward: class, shape and dtype), ``held``
    (bytes of whole parameters held then, :func:`held_bytes`), ``grads`` (class, dtype and local shape of each
    gradient), ``collectives`` (the step's collectives by phase), ``loss``, ``state_keys`` (the optimizer
    state's keys and the class of ``exp_avg``, from ``get_state_dict``), ``params`` and ``exp_avg`` (full
    tensors after the step), ``batch`` and ``files`` (what the checkpoint folder holds).
    """
    import torch.distributed as dist
    import torch.distributed.checkpoint as dcp
    import torch.nn as nn
    import torch.nn.functional as F
    from torch.distributed.checkpoint.state_dict import get_state_dict
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard
    from torch.profiler import record_function

    from course.ddp import fsdp_reference_model, settle_collectives
    from course.profiling import profile_steps
    from course.traces import collectives, quiet_stderr

    model = fsdp_reference_model(width, seed)
    mesh = init_device_mesh("cpu", (world_size,))
    policy = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)
    computed: dict[str, tuple[str, str, str]] = {}

    def record(name):
        def hook(module, args, output):  # runs after FSDP's own post-forward hook: the layer may be resharded
            computed.setdefault(name, (str(args[0].dtype), str(module.compute_dtype), str(output.dtype)))
        return hook

    def note_weight_dtype(module, args):  # after FSDP's pre-forward hook: the weight the layer computes with
        module.compute_dtype = module.weight.dtype

    for name, layer in model.named_children():
        if isinstance(layer, nn.Linear):
            fully_shard(layer, mesh=mesh, mp_policy=policy, reshard_after_forward=reshard_after_forward)
            layer.register_forward_pre_hook(note_weight_dtype)
            layer.register_forward_hook(record(name))
    fully_shard(model, mesh=mesh, mp_policy=policy, reshard_after_forward=False)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
    g = torch.Generator().manual_seed(seed + 1 + rank)
    x, y = torch.randn(4, 8, generator=g), torch.randint(0, 2, (4,), generator=g)
    seen: dict = {}

    def step() -> None:
        opt.zero_grad()
        with record_function("forward"):
            out = model(x)
        seen["between"] = {n: (type(p).__name__, tuple(p.shape), str(p.dtype)) for n, p in model.named_parameters()}
        seen["held"] = held_bytes(model)
        loss = F.cross_entropy(out.float(), y)
        seen["loss"] = loss.item()
        with record_function("backward"):
            loss.backward()
        opt.step()

    with quiet_stderr():
        trace = profile_steps(step, steps=1, warmup=0, cuda=False, settle=settle_collectives)
    model_sd, optim_sd = get_state_dict(model, opt)
    first = next(iter(optim_sd["state"]))
    out = {"rank": rank, "computed": computed, "between": seen["between"], "held": seen["held"],
           "loss": seen["loss"], "batch": (x, y),
           "grads": {n: (type(p.grad).__name__, str(p.grad.dtype), tuple(p.grad.to_local().shape))
                     for n, p in model.named_parameters()},
           "collectives": {k: dict(v) for k, v in collectives(trace)[0].items()},
           "state_keys": (list(optim_sd["state"]), type(optim_sd["state"][first]["exp_avg"]).__name__,
                          type(model_sd[first]).__name__),
           "params": {n: p.full_tensor().detach().clone() for n, p in model.named_parameters()},
           "exp_avg": {n: opt.state[p]["exp_avg"].full_tensor().clone() for n, p in model.named_parameters()}}
    dcp.save({"model": model_sd, "optim": optim_sd}, checkpoint_id=checkpoint_dir)
    dist.barrier()
    out["files"] = sorted(os.listdir(checkpoint_dir))
    return out


def load_unsharded(checkpoint_dir: str, width: int = 16, seed: int = 123):
    """Load a :func:`practice_worker` checkpoint into one plain model and a plain AdamW, in this process.

    The model starts from other weights (``seed``) so that the load is seen to happen. ``get_state_dict`` gives
    the plain model's and optimizer's state in the same name-keyed form the ranks saved; ``dcp.load`` fills it
    from the shards (no process group: DCP loads in one process and says so, a warning silenced here);
    ``set_state_dict`` puts it back. Returns ``(model, optimizer)``.
    """
    import torch.distributed.checkpoint as dcp
    from torch.distributed.checkpoint.state_dict import get_state_dict, set_state_dict

    from course.ddp import fsdp_reference_model

    model = fsdp_reference_model(width, seed)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
    model_sd, optim_sd = get_state_dict(model, opt)
    state = {"model": model_sd, "optim": optim_sd}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        dcp.load(state, checkpoint_id=checkpoint_dir)
    set_state_dict(model, opt, model_state_dict=state["model"], optim_state_dict=state["optim"])
    return model, opt
