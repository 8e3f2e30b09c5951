"""Chapter 4's Lightning DDP run: two CPU ranks started by ``spawn``, run as a script from the notebook.

Why a script. Inside a notebook Lightning accepts only the ``fork`` start method (``strategy="ddp_notebook"``):
it refuses ``spawn`` in an interactive session (``sys.ps1`` is set in a Jupyter kernel). ``fork`` is what breaks
on a machine with a GPU: once the kernel has initialised CUDA a forked rank cannot use it ("Cannot re-initialize
CUDA in forked subprocess"), and once it has run a ``backward()`` a forked rank dies at its first backward.
Windows has no ``fork`` at all. A training job runs as a script anyway, so :func:`run` starts
``python -m course.lightning_ddp`` in a new process, which trains with ``DDPStrategy(start_method="spawn")``: each
rank is a fresh interpreter, and the LightningModule it needs is :class:`RankLogger`, found by reference in this
module (a class defined in the notebook could not be found there).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from datetime import timedelta
from typing import Any

import lightning as L
import torch
from torch.utils.data import DataLoader, TensorDataset

from course.ddp import loopback_ifname
from course.ecosystem import LitMLP, quiet_lightning, trainer_kwargs

__all__ = ["RankLogger", "spawn_strategy", "fit_on_ranks", "run", "main"]

METRICS = ("rank, plain", "rank, sync_dist=True", "batches seen", "backend is gloo")


class RankLogger(LitMLP):
    """:class:`course.ecosystem.LitMLP` that also logs, per epoch, its rank (plain and ``sync_dist=True``), whether
    the process group is gloo (1.0 or 0.0, synced) and the number of batches it saw (the max over ranks)."""

    def training_step(self, batch, batch_idx):
        rank = torch.tensor(float(self.global_rank))
        self.log("rank, plain", rank, on_step=False, on_epoch=True)
        self.log("rank, sync_dist=True", rank, on_step=False, on_epoch=True, sync_dist=True)
        gloo = float(torch.distributed.get_backend() == "gloo")
        self.log("backend is gloo", torch.tensor(gloo), on_step=False, on_epoch=True, sync_dist=True)
        self.log("batches seen", torch.tensor(float(batch_idx + 1)), on_step=False, on_epoch=True, reduce_fx="max",
                 sync_dist=True)
        return super().training_step(batch, batch_idx)


def spawn_strategy(timeout_s: float = 120.0) -> Any:
    """``DDPStrategy(start_method="spawn")`` with gloo on the loopback interface and a ``timeout_s`` (seconds)
    collective timeout, so a rank that never arrives ends in an error instead of Lightning's 30-minute wait."""
    from lightning.pytorch.strategies import DDPStrategy

    os.environ.setdefault("GLOO_SOCKET_IFNAME", loopback_ifname())
    return DDPStrategy(start_method="spawn", timeout=timedelta(seconds=timeout_s))


def fit_on_ranks(X: torch.Tensor, y: torch.Tensor, batch_size: int = 16, devices: int = 2, lr: float = 0.1) -> dict:
    """Train :class:`RankLogger` for one epoch on ``devices`` spawned CPU ranks (call it from a script, not a notebook).

    Returns ``{"strategy", "start_method", "world_size", "metrics"}``, ``metrics`` holding the epoch values of
    :data:`METRICS` as floats (what rank 0 logged; the synced ones are reduced over the ranks).
    """
    quiet_lightning()
    trainer = L.Trainer(**trainer_kwargs(max_epochs=1, limit_val_batches=0, devices=devices,
                                         strategy=spawn_strategy()))
    trainer.fit(RankLogger(in_features=X.shape[1], num_classes=int(y.max()) + 1, lr=lr),
                DataLoader(TensorDataset(X, y), batch_size=batch_size))
    return {"strategy": type(trainer.strategy).__name__, "start_method": trainer.strategy._start_method,
            "world_size": trainer.world_size,
            "metrics": {k: float(trainer.callback_metrics[k]) for k in METRICS}}


def run(X: torch.Tensor, y: torch.Tensor, batch_size: int = 16, devices: int = 2, lr: float = 0.1,
        timeout: float = 300.0) -> dict:
    """From a notebook: run :func:`fit_on_ranks` as a script (``python -m course.lightning_ddp``), return its dict.

    The data travel in a temporary file. Raises ``RuntimeError`` with the end of the script's standard error if it
    fails, ``subprocess.TimeoutExpired`` after ``timeout`` seconds.
    """
    with tempfile.TemporaryDirectory(prefix="course-lightning-ddp-") as tmp:
        data, out = os.path.join(tmp, "data.pt"), os.path.join(tmp, "out.json")
        torch.save({"X": X, "y": y, "batch_size": batch_size, "devices": devices, "lr": lr}, data)
        for attempt in (1, 2):
            proc = subprocess.run([sys.executable, "-m", "course.lightning_ddp", data, out], capture_output=True,
                                  text=True, timeout=timeout)
            if proc.returncode == 0 and os.path.exists(out):
                break
            # A spawned rank can die in gloo's teardown after fit has finished ("terminate called without an active
            # exception", seen once on a loaded 2-core machine): said, and run once more.
            if attempt == 1 and "terminate called" in proc.stderr:
                print("the Lightning DDP script's rank crashed at teardown (gloo); running it once more",
                      file=sys.stderr)
                continue
            raise RuntimeError(f"the Lightning DDP script failed (exit code {proc.returncode}):\n{proc.stderr[-3000:]}")
        with open(out) as f:
            return json.load(f)


def main(argv: list[str] | None = None) -> None:
    """``python -m course.lightning_ddp DATA.pt OUT.json``: :func:`fit_on_ranks` on the saved data, result as JSON."""
    data_path, out_path = (sys.argv[1:] if argv is None else argv)[:2]
    data = torch.load(data_path, weights_only=True)
    result = fit_on_ranks(data["X"], data["y"], batch_size=data["batch_size"], devices=data["devices"], lr=data["lr"])
    with open(out_path, "w") as f:
        json.dump(result, f)


if __name__ == "__main__":  # the guard spawn needs: each rank imports this module again as __mp_main__
    main()
