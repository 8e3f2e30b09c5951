"""Helpers for chapter 4 (timm, transformers, Lightning), all offline and small.

* :func:`hub_reachable` says whether the Hugging Face Hub can be used, without
  ever hanging: it honours ``HF_HUB_OFFLINE`` and otherwise tries one TCP
  connection with a short timeout.
* :func:`make_separable` and :func:`make_images` generate data (no downloads).
* :func:`count_code_lines` counts the lines of code of a function or class,
  for the plain-loop vs Lightning comparison.
* :class:`LoadReport` is what exercise 4.4 returns.
* :func:`plain_fit` and :class:`DemoLitClassifier` are the same tiny
  classifier trained by hand and by Lightning; :class:`LitMLP` (with saved
  hyperparameters) and :class:`SeparableDataModule` are the Lightning-as-used
  demos; :func:`lightning_checkpoint` writes a real Lightning checkpoint.
* :func:`quiet_lightning` hides Lightning's banners and advice warnings,
  filtered by message so that warnings about your code still show.
"""
from __future__ import annotations

import ast
import inspect
import logging
import os
import socket
import textwrap
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable

import lightning as L
import torch
import torch.nn.functional as F
from torch import nn

_TRUE = {"1", "true", "yes", "on"}


def hub_offline_reason() -> str | None:
    """Return why the hub must not be used (``HF_HUB_OFFLINE`` / ``TRANSFORMERS_OFFLINE`` set, or grading), or ``None``."""
    for var in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"):
        if os.environ.get(var, "").strip().lower() in _TRUE:
            return f"{var}={os.environ[var]} is set"
    if os.environ.get("NBGRADER_EXECUTION", "").strip():
        return "the notebook is being graded (NBGRADER_EXECUTION is set)"
    return None


def hub_reachable(host: str = "huggingface.co", port: int = 443, timeout: float = 2.0) -> bool:
    """Return ``True`` if the hub may be used and one TCP connection to ``host:port`` opens within ``timeout`` seconds.

    Returns ``False`` at once (no network call) when :func:`hub_offline_reason`
    gives a reason. Never raises and never waits longer than about ``timeout``
    seconds (DNS lookup included, as far as the resolver allows).
    """
    if hub_offline_reason() is not None:
        return False
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


def make_separable(n: int, dim: int = 8, num_classes: int = 3, seed: int = 0,
                   spread: float = 4.0) -> tuple[torch.Tensor, torch.Tensor]:
    """Return ``(X, y)``: ``n`` float32 points of shape ``(n, dim)`` in ``num_classes`` Gaussian blobs, and int64 labels ``(n,)``.

    Blob centres are ``spread`` standard deviations apart on average, so a
    small MLP separates them in a few epochs. Same seed, same data.
    """
    g = torch.Generator().manual_seed(int(seed))
    centres = torch.randn(num_classes, dim, generator=g)
    centres = centres / centres.norm(dim=1, keepdim=True).clamp_min(1e-6) * spread
    y = torch.arange(n) % num_classes
    y = y[torch.randperm(n, generator=g)]
    X = centres[y] + torch.randn(n, dim, generator=g)
    return X.float(), y.long()


def make_images(n: int, size: int = 32, num_classes: int = 4, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """Return ``(images, labels)``: float32 images ``(n, 3, size, size)`` in [0, 1] and int64 labels ``(n,)``.

    Class ``k`` is a recognisable picture: 0 red disc, 1 green horizontal
    stripes, 2 blue vertical stripes, 3 yellow square (others repeat with a
    shift), on a dark noisy background, so mixing two of them is easy to see.
    """
    g = torch.Generator().manual_seed(int(seed))
    labels = torch.arange(n) % num_classes
    yy, xx = torch.meshgrid(torch.linspace(-1, 1, size), torch.linspace(-1, 1, size), indexing="ij")
    colours = torch.tensor([[1.0, 0.2, 0.2], [0.2, 1.0, 0.2], [0.3, 0.4, 1.0], [1.0, 0.9, 0.1]])
    images = 0.15 * torch.rand(n, 3, size, size, generator=g)
    for i in range(n):
        k = int(labels[i]) % 4
        shift = float(torch.rand((), generator=g)) * 0.6 - 0.3
        if k == 0:
            mask = ((xx - shift) ** 2 + (yy + shift) ** 2) < 0.35
        elif k == 1:
            mask = torch.sin((yy + shift) * 9) > 0.2
        elif k == 2:
            mask = torch.sin((xx + shift) * 9) > 0.2
        else:
            mask = ((xx - shift).abs() < 0.5) & ((yy - shift).abs() < 0.5)
        images[i] = torch.where(mask, colours[k].view(3, 1, 1).expand(3, size, size), images[i])
    return images.clamp(0, 1).float(), labels.long()


def _strip_docstrings(tree: ast.AST) -> set[int]:
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Module)):
            body = getattr(node, "body", [])
            if body and isinstance(body[0], ast.Expr) and isinstance(getattr(body[0], "value", None), ast.Constant) \
                    and isinstance(body[0].value.value, str):
                lines.update(range(body[0].lineno, body[0].end_lineno + 1))
    return lines


def count_code_lines(obj: Callable[..., Any] | type | str) -> int:
    """Return the number of lines of code in ``obj`` (a function, class or source string).

    Blank lines, comment-only lines and docstrings are not counted; every
    other physical line is (a statement split over 3 lines counts 3).
    """
    source = obj if isinstance(obj, str) else inspect.getsource(obj)
    source = textwrap.dedent(source)
    doc_lines = _strip_docstrings(ast.parse(source))
    count = 0
    for i, line in enumerate(source.splitlines(), start=1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#") or i in doc_lines:
            continue
        count += 1
    return count


def param_count(module: nn.Module, trainable_only: bool = False) -> int:
    """Return the number of parameters (elements, not tensors) of ``module``; shared parameters counted once."""
    seen: set[int] = set()
    total = 0
    for p in module.parameters():
        if id(p) in seen or (trainable_only and not p.requires_grad):
            continue
        seen.add(id(p))
        total += p.numel()
    return total


@dataclass
class LoadReport:
    """What a flexible checkpoint load did; every list holds the model's own key names (prefixes stripped).

    ``loaded``: keys copied from the checkpoint into the model.
    ``skipped``: checkpoint keys dropped because their shape differs from the model's (e.g. a new head).
    ``missing``: model keys that got nothing from the checkpoint (they keep their initial values).
    """

    loaded: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)


def tiny_mlp(in_features: int = 8, num_classes: int = 3, hidden: int = 32) -> nn.Module:
    """Return the chapter's tiny classifier: Linear -> ReLU -> Linear (float32, on the CPU)."""
    return nn.Sequential(nn.Linear(in_features, hidden), nn.ReLU(), nn.Linear(hidden, num_classes))


def accuracy(model: nn.Module, X: torch.Tensor, y: torch.Tensor) -> float:
    """Return the fraction (0..1) of rows of ``X`` whose argmax prediction equals ``y``; runs under ``no_grad`` in eval mode."""
    was_training = model.training
    model.eval()
    with torch.no_grad():
        acc = (model(X).argmax(dim=1) == y).float().mean().item()
    model.train(was_training)
    return float(acc)


def plain_fit(model: nn.Module, train_loader: Any, val_loader: Any, epochs: int = 5,
              lr: float = 0.1) -> dict[str, list[float]]:
    """Train ``model`` with a hand-written loop; return ``{"train_loss": [...], "val_acc": [...]}`` per epoch."""
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    history = {"train_loss": [], "val_acc": []}
    for epoch in range(epochs):
        model.train()
        total, count = 0.0, 0
        for x, y in train_loader:
            optimizer.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            optimizer.step()
            total += loss.item() * len(y)
            count += len(y)
        history["train_loss"].append(total / count)
        model.eval()
        correct, seen = 0, 0
        with torch.no_grad():
            for x, y in val_loader:
                correct += (model(x).argmax(dim=1) == y).sum().item()
                seen += len(y)
        history["val_acc"].append(correct / seen)
    return history


class DemoLitClassifier(L.LightningModule):
    """The same tiny classifier and SGD recipe as :func:`plain_fit`, as a LightningModule (logs ``train_loss``, ``val_acc``)."""

    def __init__(self, model: nn.Module, lr: float = 0.1) -> None:
        super().__init__()
        self.model = model
        self.lr = lr

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = F.cross_entropy(self.model(x), y)
        self.log("train_loss", loss, on_epoch=True, on_step=False)
        return loss

    def validation_step(self, batch, batch_idx):
        x, y = batch
        acc = (self.model(x).argmax(dim=1) == y).float().mean()
        self.log("val_acc", acc, on_epoch=True)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=self.lr)


class LitMLP(L.LightningModule):
    """The chapter's tiny classifier as a LightningModule that saves its hyperparameters into every checkpoint.

    Logs ``train_loss`` (per step), ``val_loss`` and ``val_acc`` (a fraction in [0, 1]), ``test_loss`` and
    ``test_acc``; ``predict_step`` returns the predicted class ids (int64). ``last_logits_dtype`` is the dtype
    of the logits of the last training step (``torch.bfloat16`` under ``precision="bf16-mixed"``).
    """

    def __init__(self, in_features: int = 8, num_classes: int = 3, hidden: int = 32, lr: float = 0.1) -> None:
        super().__init__()
        self.save_hyperparameters()          # -> self.hparams, and "hyper_parameters" in every checkpoint
        self.model = tiny_mlp(in_features, num_classes, hidden)
        self.last_logits_dtype: torch.dtype | None = None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.model(x)

    def training_step(self, batch, batch_idx):
        x, y = batch
        logits = self(x)
        self.last_logits_dtype = logits.dtype
        loss = F.cross_entropy(logits, y)
        self.log("train_loss", loss)
        return loss

    def _evaluate(self, batch, stage: str) -> None:
        x, y = batch
        logits = self(x)
        self.log(f"{stage}_loss", F.cross_entropy(logits.float(), y))
        self.log(f"{stage}_acc", (logits.argmax(dim=1) == y).float().mean())

    def validation_step(self, batch, batch_idx):
        self._evaluate(batch, "val")

    def test_step(self, batch, batch_idx):
        self._evaluate(batch, "test")

    def predict_step(self, batch, batch_idx):
        return self(batch[0]).argmax(dim=1)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=self.hparams.lr)


class SeparableDataModule(L.LightningDataModule):
    """:func:`make_separable` data as a LightningDataModule: 50 % train, 25 % validation, 25 % test (and predict).

    ``setup`` builds the splits (the same for every stage, from ``seed``); the train loader shuffles,
    the others do not. ``setup_calls`` records the stages Lightning asked for.
    """

    def __init__(self, n: int = 768, dim: int = 8, num_classes: int = 3, batch_size: int = 32, seed: int = 0) -> None:
        super().__init__()
        self.save_hyperparameters()
        self.setup_calls: list[str] = []

    def setup(self, stage: str) -> None:
        self.setup_calls.append(str(stage))
        h = self.hparams
        X, y = make_separable(h.n, dim=h.dim, num_classes=h.num_classes, seed=h.seed)
        a, b = h.n // 2, (3 * h.n) // 4
        self.train_ds = torch.utils.data.TensorDataset(X[:a], y[:a])
        self.val_ds = torch.utils.data.TensorDataset(X[a:b], y[a:b])
        self.test_ds = torch.utils.data.TensorDataset(X[b:], y[b:])

    def train_dataloader(self):
        return torch.utils.data.DataLoader(self.train_ds, batch_size=self.hparams.batch_size, shuffle=True)

    def val_dataloader(self):
        return torch.utils.data.DataLoader(self.val_ds, batch_size=len(self.val_ds))

    def test_dataloader(self):
        return torch.utils.data.DataLoader(self.test_ds, batch_size=len(self.test_ds))

    def predict_dataloader(self):
        return self.test_dataloader()


def lightning_checkpoint(model: nn.Module, loader: Any, path: str, lr: float = 0.01) -> dict:
    """Train ``model`` for one batch of ``loader`` as ``DemoLitClassifier(model)`` and save a real Lightning checkpoint.

    The file at ``path`` is written by ``Trainer.save_checkpoint``; the return value is
    ``torch.load(path, weights_only=True)``: a dict with ``epoch``, ``global_step``, ``state_dict``
    (keys prefixed ``model.``), ``optimizer_states``, ... . ``model`` is trained in place (one SGD step).
    """
    lit = DemoLitClassifier(model, lr=lr)
    trainer = L.Trainer(**trainer_kwargs(max_epochs=1, limit_train_batches=1, limit_val_batches=0))
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=r".*validation_step.*val_dataloader.*")
        trainer.fit(lit, loader)
    trainer.save_checkpoint(path)
    return torch.load(path, map_location="cpu", weights_only=True)


# Lightning's advice and library-internal deprecations that say nothing about the reader's code, matched by
# MESSAGE: filtering by module would also hide the warnings that teach (e.g. "`training_step` returned `None`").
QUIET_MESSAGES = (
    r".*does not have many workers.*",                           # num_workers advice (a tiny in-memory dataset)
    r".*is smaller than the logging interval.*",                 # log_every_n_steps advice
    r".*isinstance\(treespec, LeafSpec\)` is deprecated.*",       # lightning's own use of a torch API
    r"You are trying to `self\.log\(\)` but the `self\.trainer` reference is not registered.*",  # tests call steps directly
    r".*Checkpoint directory .* exists and is not empty.*",      # re-running a cell into the same folder
)


def quiet_lightning() -> None:
    """Silence Lightning's start-up banners (logging) and the advice warnings listed in ``QUIET_MESSAGES``.

    Warnings are filtered by message, never by module, so Lightning's warnings
    about the reader's code (``training_step`` returned ``None``, a
    ``validation_step`` without a val loader, ...) still show, and
    "``training_step`` returned ``None``" shows every time it happens.
    """
    for name in ("lightning", "lightning.pytorch", "lightning.fabric", "pytorch_lightning", "lightning_fabric"):
        logging.getLogger(name).setLevel(logging.ERROR)
    for pattern in QUIET_MESSAGES:
        warnings.filterwarnings("ignore", message=pattern)
    # The mistake this chapter teaches to spot: show it every time, not once per kernel.
    warnings.filterwarnings("always", message=r"`training_step` returned `None`")


def trainer_kwargs(max_epochs: int = 5, progress_bar: bool = False, **extra: Any) -> dict[str, Any]:
    """Return keyword arguments for a quiet CPU ``lightning.Trainer`` that writes nothing to disk.

    CPU, one device, no logger, no checkpoints, no model summary, progress
    bar only when asked (never under grading); ``extra`` overrides any key.
    """
    grading = bool(os.environ.get("NBGRADER_EXECUTION", "").strip())
    kw: dict[str, Any] = dict(max_epochs=max_epochs, accelerator="cpu", devices=1, logger=False,
                              enable_checkpointing=False, enable_model_summary=False,
                              enable_progress_bar=bool(progress_bar) and not grading,
                              num_sanity_val_steps=0)
    kw.update(extra)
    return kw


def lr_curve(scheduler: Any, optimizer: torch.optim.Optimizer, epochs: int) -> list[float]:
    """Step a timm scheduler (``scheduler.step(epoch)``) for ``epochs`` epochs; return the learning rate of group 0 at each epoch."""
    lrs = []
    for epoch in range(epochs):
        scheduler.step(epoch)
        lrs.append(float(optimizer.param_groups[0]["lr"]))
    return lrs
