"""Helpers for chapter 4 (timm, transformers, Lightning), all offline and small.

* :func:`hub_reachable` says whether the Hugging Face Hub can be used, without
  ever hanging: it honours ``HF_HUB_OFFLINE`` and otherwise tries one TCP
  connection with a short timeout.
* :func:`make_separable` and :func:`make_images` generate data (no downloads).
* :func:`count_code_lines` counts the lines of code of a function or class,
  for the plain-loop vs Lightning comparison.
* :class:`LoadReport` is what exercise 4.3 (``load_checkpoint_flexible``, in section 4.4) returns.
* :func:`plain_fit` and :class:`DemoLitClassifier` are the same tiny
  classifier trained by hand and by Lightning; :class:`LitMLP` (with saved
  hyperparameters) and :class:`SeparableDataModule` are the Lightning-as-used
  demos; :func:`lightning_checkpoint` writes a real Lightning checkpoint.
* :func:`quiet_lightning` hides Lightning's banners and advice warnings,
  filtered by message so that warnings about your code still show.
* :class:`LocalMixup` is timm's batch Mixup/CutMix on its own ``torch.Generator``
  (never the global RNGs; :func:`global_rng_fingerprint` checks that).
* :func:`step_cost` and :func:`run_steps` measure Lightning's overhead per step,
  feature by feature (:data:`OVERHEAD_CONFIGS`).
* :func:`save_local_weights` writes "downloaded" weights for the offline
  fine-tuning capstone; :func:`capture_transformers_log` collects transformers'
  load report.
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


# --- Mixup with a local generator -------------------------------------------------------------------------

class LocalMixup:
    """timm's batch Mixup/CutMix, drawing its random numbers from its own ``torch.Generator``.

    ``timm.data.Mixup`` draws from NumPy's *global* RNG, so a helper that wants reproducible mixing is tempted
    to call ``np.random.seed(...)`` (and ``torch.manual_seed``) inside: that resets the caller's random
    streams, and every dropout mask after it repeats. This class never reads or writes a global RNG: its
    state is ``self.generator`` (seeded with ``seed``), which a checkpoint can save and restore.

    Per call it picks CutMix with probability ``switch_prob`` when both alphas are positive (else the one
    that is), draws ``lam ~ Beta(alpha, alpha)``, and mixes the batch with its reverse (``x.flip(0)``) as
    timm does: Mixup ``lam * x + (1 - lam) * x.flip(0)``; CutMix pastes a box of the reversed batch and
    corrects ``lam`` to the share of the image left. Targets are
    ``timm.data.mixup.mixup_target(labels, num_classes, lam, label_smoothing)``.
    """

    def __init__(self, num_classes: int, mixup_alpha: float = 0.8, cutmix_alpha: float = 1.0,
                 switch_prob: float = 0.5, label_smoothing: float = 0.1, seed: int = 0) -> None:
        if mixup_alpha <= 0 and cutmix_alpha <= 0:
            raise ValueError("LocalMixup needs mixup_alpha > 0 or cutmix_alpha > 0")
        self.num_classes = int(num_classes)
        self.mixup_alpha, self.cutmix_alpha = float(mixup_alpha), float(cutmix_alpha)
        self.switch_prob, self.label_smoothing = float(switch_prob), float(label_smoothing)
        self.generator = torch.Generator().manual_seed(int(seed))
        self.last: dict[str, Any] = {}

    def _beta(self, alpha: float) -> float:
        import numpy as np
        # a one-off NumPy Generator seeded from ours: Beta sampling without touching np.random's global state
        local = np.random.default_rng(int(torch.randint(0, 2**62, (), generator=self.generator)))
        return float(local.beta(alpha, alpha))

    def __call__(self, images: torch.Tensor, labels: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Return ``(mixed images, soft targets (B, num_classes))``; ``images`` and ``labels`` are not modified.

        ``self.last`` records the draw: ``{"mode": "mixup" | "cutmix", "lam": float, "box": (y0, y1, x0, x1) | None}``.
        """
        from timm.data.mixup import mixup_target

        g = self.generator
        if self.mixup_alpha > 0 and self.cutmix_alpha > 0:
            use_cutmix = float(torch.rand((), generator=g)) < self.switch_prob
        else:
            use_cutmix = self.cutmix_alpha > 0
        lam = self._beta(self.cutmix_alpha if use_cutmix else self.mixup_alpha)
        box = None
        if use_cutmix:
            h, w = images.shape[-2:]
            ratio = (1.0 - lam) ** 0.5
            ch, cw = int(h * ratio), int(w * ratio)
            cy = int(torch.randint(0, h, (), generator=g))
            cx = int(torch.randint(0, w, (), generator=g))
            y0, y1 = max(cy - ch // 2, 0), min(cy + (ch + 1) // 2, h)
            x0, x1 = max(cx - cw // 2, 0), min(cx + (cw + 1) // 2, w)
            mixed = images.clone()
            mixed[..., y0:y1, x0:x1] = images.flip(0)[..., y0:y1, x0:x1]
            lam = 1.0 - (y1 - y0) * (x1 - x0) / float(h * w)
            box = (y0, y1, x0, x1)
        else:
            mixed = lam * images + (1.0 - lam) * images.flip(0)
        self.last = {"mode": "cutmix" if use_cutmix else "mixup", "lam": lam, "box": box}
        targets = mixup_target(labels, self.num_classes, lam, self.label_smoothing)
        return mixed, targets.to(images.dtype if images.is_floating_point() else torch.float32)


def global_rng_fingerprint() -> tuple:
    """Return a hashable snapshot of the global RNG states (torch CPU, NumPy, ``random``): equal before and after
    a call means the call neither drew from nor reseeded any of them."""
    import hashlib
    import random

    import numpy as np

    np_state = np.random.get_state()
    return (hashlib.sha1(torch.get_rng_state().numpy().tobytes()).hexdigest(),
            hashlib.sha1(np_state[1].tobytes()).hexdigest() + str(np_state[2]),
            hashlib.sha1(repr(random.getstate()).encode()).hexdigest())


# --- Lightning's overhead, per step ---------------------------------------------------------------------

def step_cost(run: Callable[[int], Any], short: int, long: int, repeats: int = 2) -> tuple[float, float]:
    """Time ``run(short)`` and ``run(long)`` (the fastest of ``repeats`` each); return ``(startup_s, per_step_s)``.

    ``per_step_s`` is the slope ``(t_long - t_short) / (long - short)``: what each extra step costs.
    ``startup_s`` is what is left of ``t_short`` after ``short`` steps at that rate (it can come out slightly
    negative on a noisy machine). Requires ``long > short >= 0``.
    """
    import time

    if not long > short >= 0:
        raise ValueError(f"need long > short >= 0, got short={short}, long={long}")

    def best(n: int) -> float:
        times = []
        for _ in range(max(1, int(repeats))):
            t0 = time.perf_counter()
            run(n)
            times.append(time.perf_counter() - t0)
        return min(times)

    t_short, t_long = best(short), best(long)
    per_step = (t_long - t_short) / (long - short)
    return t_short - short * per_step, per_step


class _StepMLP(L.LightningModule):
    """The tiny MLP as a LightningModule for the overhead runs; ``log_every_step`` switches ``self.log`` on."""

    def __init__(self, log_every_step: bool) -> None:
        super().__init__()
        self.model = tiny_mlp()
        self.log_every_step = log_every_step

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = F.cross_entropy(self.model(x), y)
        if self.log_every_step:
            self.log("train_loss", loss)
        return loss

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


class _NoOpCallback(L.Callback):
    """A user callback with per-batch hooks that do nothing (what every hook call costs)."""

    def on_train_batch_start(self, trainer, pl_module, batch, batch_idx):
        pass

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
        pass


def _buffered_progress_bar_class():
    from lightning.pytorch.callbacks import TQDMProgressBar

    class BufferedProgressBar(TQDMProgressBar):
        """Lightning's TQDM bar as plain text into a discarded buffer (in a notebook the default is a widget)."""

        def init_train_tqdm(self):
            import io

            from tqdm.std import tqdm

            return tqdm(desc=self.train_description, leave=True, file=io.StringIO(), smoothing=0,
                        bar_format=self.BAR_FORMAT, dynamic_ncols=False, ncols=100)

    return BufferedProgressBar


def _BufferedProgressBar(refresh_rate: int = 1):
    """A TQDM progress bar callback that renders every ``refresh_rate`` steps into a buffer nobody reads."""
    return _buffered_progress_bar_class()(refresh_rate=refresh_rate)


#: The Lightning set-ups :func:`run_steps` measures, each adding one feature to the one before.
OVERHEAD_CONFIGS = ("plain loop", "Lightning, nothing on", "+ self.log every step", "+ CSVLogger",
                    "+ 3 callbacks", "+ progress bar")


def run_steps(config: str, steps: int, batch_size: int = 16, seed: int = 0) -> float:
    """Train the tiny MLP for ``steps`` optimizer steps under one of :data:`OVERHEAD_CONFIGS`; return the final loss.

    Configs are cumulative: ``"Lightning, nothing on"`` has no logging, logger, callbacks or progress bar;
    each next one adds ``self.log("train_loss")`` every step, a ``CSVLogger`` (temporary folder, flushed
    every 50 steps), three callbacks (two no-op ones and ``ModelCheckpoint`` at the end of training), and a
    TQDM progress bar refreshed every step (plain text into a discarded buffer; a notebook shows a widget instead,
    which costs more, so this is a lower bound). No validation. Writes only to a temporary folder, removed before returning.
    The model's weights are drawn with torch seed ``seed`` inside ``torch.random.fork_rng``: the caller's global
    RNG is left as it was (this chapter's rule for helpers).
    """
    if config not in OVERHEAD_CONFIGS:
        raise ValueError(f"unknown config {config!r}; one of {OVERHEAD_CONFIGS}")
    with torch.random.fork_rng():
        return _run_steps(config, steps, batch_size, seed)


def _run_steps(config: str, steps: int, batch_size: int, seed: int) -> float:
    import contextlib
    import io
    import tempfile

    X, y = make_separable(max(steps, 1) * batch_size, seed=seed)
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(X, y), batch_size=batch_size)
    torch.manual_seed(seed)
    if config == "plain loop":
        model = tiny_mlp()
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        loss = torch.zeros(())
        for i, (xb, yb) in enumerate(loader):
            if i == steps:
                break
            opt.zero_grad()
            loss = F.cross_entropy(model(xb), yb)
            loss.backward()
            opt.step()
        return float(loss.detach())
    level = OVERHEAD_CONFIGS.index(config)
    from lightning.pytorch.callbacks import ModelCheckpoint
    from lightning.pytorch.loggers import CSVLogger

    with tempfile.TemporaryDirectory() as tmp, contextlib.redirect_stderr(io.StringIO()), \
            contextlib.redirect_stdout(io.StringIO()):
        callbacks: list[L.Callback] = []
        kw: dict[str, Any] = {}
        if level >= 3:
            kw["logger"] = CSVLogger(tmp, name="overhead", flush_logs_every_n_steps=50)
            kw["log_every_n_steps"] = 1
        if level >= 4:
            callbacks += [_NoOpCallback(), _NoOpCallback(), ModelCheckpoint(dirpath=tmp, save_last=False)]
            kw["enable_checkpointing"] = True
        if level >= 5:
            callbacks.append(_BufferedProgressBar(refresh_rate=1))
            kw["enable_progress_bar"] = True
        module = _StepMLP(log_every_step=level >= 2)
        trainer = L.Trainer(**trainer_kwargs(max_epochs=-1, max_steps=steps, limit_val_batches=0,
                                             callbacks=callbacks, **kw))
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=r".*(val_dataloader|LeafSpec|many workers|logging interval).*")
            trainer.fit(module, loader)
        return float(trainer.callback_metrics.get("train_loss", torch.tensor(float("nan"))))


def save_local_weights(arch: str, path: str, num_classes: int = 10, seed: int = 0, **timm_kwargs: Any) -> str:
    """Build timm model ``arch`` (``pretrained=False``, weights drawn with torch seed ``seed``, the global torch RNG
    restored afterwards), save its ``state_dict`` to ``path`` (``torch.save``) and return ``path``.

    It stands in for weights copied onto an offline machine: load them with
    ``timm.create_model(arch, pretrained=True, pretrained_cfg_overlay=dict(file=path), num_classes=..., **timm_kwargs)``.
    timm drops the file's classifier whenever ``num_classes`` differs from ``pretrained_cfg["num_classes"]`` (1000 for
    the architectures used here), not from the file's own class count: add ``num_classes=<the file's count>`` to the
    overlay to keep a matching head (chapter 4, "Local weights").
    """
    import timm

    state = torch.get_rng_state()
    try:
        torch.manual_seed(int(seed))
        model = timm.create_model(arch, pretrained=False, num_classes=num_classes, **timm_kwargs)
    finally:
        torch.set_rng_state(state)
    torch.save(model.state_dict(), path)
    return path


def capture_transformers_log(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> tuple[Any, str]:
    """Call ``fn(*args, **kwargs)`` and capture what the ``transformers`` logger prints meanwhile; return ``(result, text)``.

    ``from_pretrained`` reports missing, unexpected and re-initialised weights through that logger (a
    "LOAD REPORT" table in transformers 5). The text comes back with terminal colour codes removed, and is not
    printed to stderr. If ``fn`` raises, the logger is restored and the exception propagates (its report, if
    any, is attached to the exception as ``err.transformers_log``).
    """
    import io
    import re

    from transformers.utils import logging as hf_logging

    root = hf_logging.get_logger("transformers")
    buffer = io.StringIO()
    handler = logging.StreamHandler(buffer)
    saved = root.handlers[:]
    root.handlers = [handler]
    try:
        result = fn(*args, **kwargs)
    except Exception as err:
        err.transformers_log = re.sub(r"\x1b\[[0-9;]*m", "", buffer.getvalue())
        raise
    finally:
        root.handlers = saved
    return result, re.sub(r"\x1b\[[0-9;]*m", "", buffer.getvalue())
