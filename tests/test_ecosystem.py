"""Unit tests for course.ecosystem (offline, fast)."""
from __future__ import annotations

import os
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import pytest
import torch
from torch import nn

from course import ecosystem as E


def test_hub_offline_reason_and_no_network(monkeypatch):
    import socket

    def no_network(*args, **kwargs):
        raise AssertionError(f"a network call: {args}")

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert "HF_HUB_OFFLINE" in E.hub_offline_reason()
    monkeypatch.setattr(socket, "create_connection", no_network)
    monkeypatch.setattr(socket, "getaddrinfo", no_network)
    assert E.hub_reachable() is False  # no network call at all


def test_hub_offline_reason_grading(monkeypatch):
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("TRANSFORMERS_OFFLINE", raising=False)
    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")
    assert "grad" in E.hub_offline_reason()
    monkeypatch.delenv("NBGRADER_EXECUTION")
    assert E.hub_offline_reason() is None


def test_hub_reachable_times_out(monkeypatch):
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("TRANSFORMERS_OFFLINE", raising=False)
    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)
    t0 = time.perf_counter()
    # a non-routable address (TEST-NET-1): either refused fast or timed out
    assert E.hub_reachable("192.0.2.1", 443, timeout=0.5) is False
    assert time.perf_counter() - t0 < 10.0  # the timeout holds (a TCP connect waits about 2 minutes by default)


def test_make_separable_shapes_determinism_and_balance():
    X, y = E.make_separable(90, dim=5, num_classes=3, seed=1)
    assert X.shape == (90, 5) and X.dtype == torch.float32
    assert y.shape == (90,) and y.dtype == torch.int64
    assert torch.bincount(y).tolist() == [30, 30, 30]
    X2, y2 = E.make_separable(90, dim=5, num_classes=3, seed=1)
    assert torch.equal(X, X2) and torch.equal(y, y2)
    X3, _ = E.make_separable(90, dim=5, num_classes=3, seed=2)
    assert not torch.equal(X, X3)


def test_make_separable_is_separable():
    X, y = E.make_separable(300, dim=8, num_classes=3, seed=0)
    centres = torch.stack([X[y == k].mean(0) for k in range(3)])
    pred = torch.cdist(X, centres).argmin(1)
    assert (pred == y).float().mean().item() > 0.95


def test_make_images():
    imgs, labels = E.make_images(8, size=16, num_classes=4, seed=0)
    assert imgs.shape == (8, 3, 16, 16) and imgs.dtype == torch.float32
    assert labels.tolist() == [0, 1, 2, 3, 0, 1, 2, 3]
    assert imgs.min().item() >= 0.0 and imgs.max().item() <= 1.0
    assert torch.equal(imgs, E.make_images(8, size=16, num_classes=4, seed=0)[0])
    # the red disc is mostly red, the green stripes mostly green
    assert imgs[0, 0].mean() > imgs[0, 1].mean()
    assert imgs[1, 1].mean() > imgs[1, 0].mean()


def _f(a, b):
    """Docstring: not counted."""
    # a comment: not counted

    c = a + b
    return (c,
            c)


def test_count_code_lines_function_and_string():
    assert E.count_code_lines(_f) == 4  # def, c =, return (2 lines)
    assert E.count_code_lines("x = 1\n\n# c\ny = 2\n") == 2


def test_count_code_lines_class():
    class K:
        """Doc."""

        def m(self):
            """Doc
            on two lines."""
            return 1

    assert E.count_code_lines(K) == 3


def test_param_count_shared_and_trainable():
    lin = nn.Linear(3, 2)
    model = nn.Sequential(lin, lin, nn.Linear(2, 1))
    assert E.param_count(model) == 8 + 3
    model[2].weight.requires_grad_(False)
    assert E.param_count(model, trainable_only=True) == 8 + 1


def test_load_report_defaults_are_independent():
    a, b = E.LoadReport(), E.LoadReport()
    a.loaded.append("x")
    assert b.loaded == [] and a.skipped == [] and a.missing == []


def test_tiny_mlp_and_accuracy():
    torch.manual_seed(0)
    m = E.tiny_mlp(4, 2, hidden=5)
    assert E.param_count(m) == 4 * 5 + 5 + 5 * 2 + 2
    X = torch.randn(10, 4)
    y = m(X).argmax(1)
    m.train()
    assert E.accuracy(m, X, y) == 1.0
    assert m.training  # mode restored
    assert E.accuracy(m, X, 1 - y) == 0.0


def _loaders(seed=0):
    X, y = E.make_separable(192, dim=8, num_classes=3, seed=seed)
    ds = torch.utils.data.TensorDataset(X, y)
    return (torch.utils.data.DataLoader(ds, batch_size=32, shuffle=True),
            torch.utils.data.DataLoader(ds, batch_size=192), X, y)


def test_plain_fit_learns():
    torch.manual_seed(0)
    tl, vl, X, y = _loaders()
    m = E.tiny_mlp()
    hist = E.plain_fit(m, tl, vl, epochs=4, lr=0.1)
    assert len(hist["train_loss"]) == 4 and len(hist["val_acc"]) == 4
    assert hist["train_loss"][-1] < hist["train_loss"][0]
    assert hist["val_acc"][-1] >= 0.9
    assert abs(hist["val_acc"][-1] - E.accuracy(m, X, y)) < 1e-6


def test_demo_lit_classifier_with_trainer():
    import lightning as L
    E.quiet_lightning()
    torch.manual_seed(0)
    tl, vl, X, y = _loaders()
    lit = E.DemoLitClassifier(E.tiny_mlp(), lr=0.1)
    trainer = L.Trainer(**E.trainer_kwargs(max_epochs=4))
    trainer.fit(lit, tl, vl)
    metrics = trainer.callback_metrics
    assert "train_loss" in metrics and "val_acc" in metrics
    assert float(metrics["val_acc"]) >= 0.9
    assert abs(float(metrics["val_acc"]) - E.accuracy(lit.model, X, y)) < 1e-6


def test_trainer_kwargs(monkeypatch):
    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)
    kw = E.trainer_kwargs(3, progress_bar=True, fast_dev_run=True)
    assert kw["max_epochs"] == 3 and kw["enable_progress_bar"] is True
    assert kw["logger"] is False and kw["enable_checkpointing"] is False and kw["accelerator"] == "cpu"
    assert kw["fast_dev_run"] is True
    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")
    assert E.trainer_kwargs(3, progress_bar=True)["enable_progress_bar"] is False


def test_lr_curve_with_timm_scheduler():
    from timm.scheduler import CosineLRScheduler
    p = nn.Parameter(torch.zeros(1))
    opt = torch.optim.SGD([p], lr=1.0)
    sched = CosineLRScheduler(opt, t_initial=10, warmup_t=2, warmup_lr_init=0.1, lr_min=0.0)
    lrs = E.lr_curve(sched, opt, 10)
    assert len(lrs) == 10 and all(isinstance(v, float) for v in lrs)
    assert lrs[0] == pytest.approx(0.1)
    assert lrs[1] > lrs[0]
    assert lrs[-1] < lrs[3]


def test_quiet_lightning_sets_logger_levels():
    import logging
    E.quiet_lightning()
    for name in ("lightning", "lightning.pytorch", "lightning.fabric"):
        assert logging.getLogger(name).level == logging.ERROR


def test_quiet_lightning_filters_by_message_not_module():
    import warnings
    E.quiet_lightning()
    with warnings.catch_warnings(record=True) as caught:
        # keep the filters quiet_lightning installed, but record what passes them
        warnings.warn_explicit("The dataloader, train_dataloader, does not have many workers which may be a bottleneck.",
                               UserWarning, "lightning/pytorch/trainer/connectors/data_connector.py", 1,
                               module="lightning.pytorch.trainer.connectors.data_connector")
        warnings.warn_explicit("`training_step` returned `None`. If this was on purpose, ignore this warning...",
                               UserWarning, "lightning/pytorch/loops/optimization/automatic.py", 1,
                               module="lightning.pytorch.loops.optimization.automatic")
    texts = [str(w.message) for w in caught]
    assert not any("many workers" in t for t in texts)
    assert any("returned `None`" in t for t in texts)


def _sep_loaders(n=256, seed=0):
    X, y = E.make_separable(n, dim=8, num_classes=3, seed=seed)
    ds = torch.utils.data.TensorDataset(X, y)
    return torch.utils.data.DataLoader(ds, batch_size=32, shuffle=True), torch.utils.data.DataLoader(ds, batch_size=n)


def test_lit_mlp_saves_hyperparameters_and_reloads(tmp_path):
    import lightning as L
    E.quiet_lightning()
    L.seed_everything(0, verbose=False)
    lit = E.LitMLP(in_features=8, num_classes=3, hidden=16, lr=0.2)
    assert dict(lit.hparams) == {"in_features": 8, "num_classes": 3, "hidden": 16, "lr": 0.2}
    tl, vl = _sep_loaders()
    trainer = L.Trainer(**E.trainer_kwargs(max_epochs=2))
    trainer.fit(lit, tl, vl)
    assert {"train_loss", "val_loss", "val_acc"} <= set(trainer.callback_metrics)
    assert abs(float(trainer.callback_metrics["val_acc"]) - E.accuracy(lit.model, *vl.dataset.tensors)) < 1e-6
    assert lit.last_logits_dtype == torch.float32
    path = tmp_path / "m.ckpt"
    trainer.save_checkpoint(path)
    ckpt = torch.load(path, weights_only=True)
    assert ckpt["hyper_parameters"]["hidden"] == 16
    back = E.LitMLP.load_from_checkpoint(path)
    assert back.hparams.lr == 0.2
    for a, b in zip(lit.state_dict().values(), back.state_dict().values()):
        assert torch.equal(a, b)
    preds = trainer.predict(back, vl)
    assert preds[0].dtype == torch.int64 and preds[0].shape == (256,)
    res = trainer.test(back, vl, verbose=False)
    assert set(res[0]) == {"test_loss", "test_acc"}


def test_lit_mlp_bf16_mixed_on_cpu():
    import lightning as L
    E.quiet_lightning()
    lit = E.LitMLP()
    tl, _ = _sep_loaders(64)
    L.Trainer(**E.trainer_kwargs(max_epochs=1, precision="bf16-mixed")).fit(lit, tl)
    assert lit.last_logits_dtype == torch.bfloat16
    assert next(lit.parameters()).dtype == torch.float32


def test_separable_datamodule_splits_and_seed():
    dm = E.SeparableDataModule(n=100, dim=4, num_classes=2, batch_size=10, seed=3)
    dm.setup("fit")
    assert (len(dm.train_ds), len(dm.val_ds), len(dm.test_ds)) == (50, 25, 25)
    assert dm.setup_calls == ["fit"]
    xb, yb = next(iter(dm.train_dataloader()))
    assert xb.shape == (10, 4) and yb.dtype == torch.int64
    assert next(iter(dm.val_dataloader()))[0].shape == (25, 4)
    assert torch.equal(next(iter(dm.predict_dataloader()))[0], next(iter(dm.test_dataloader()))[0])
    dm2 = E.SeparableDataModule(n=100, dim=4, num_classes=2, batch_size=10, seed=3)
    dm2.setup("test")
    assert torch.equal(dm.test_ds.tensors[0], dm2.test_ds.tensors[0])


def test_lightning_checkpoint_is_real(tmp_path):
    torch.manual_seed(0)
    model = E.tiny_mlp(8, 3, hidden=5)
    before = {k: v.clone() for k, v in model.state_dict().items()}
    tl, _ = _sep_loaders(64)
    ckpt = E.lightning_checkpoint(model, tl, str(tmp_path / "x.ckpt"))
    assert {"epoch", "global_step", "state_dict", "optimizer_states", "pytorch-lightning_version"} <= set(ckpt)
    assert ckpt["global_step"] == 1
    assert sorted(ckpt["state_dict"]) == sorted("model." + k for k in before)
    assert not torch.equal(model.state_dict()["0.weight"], before["0.weight"])   # one step was taken
    assert torch.equal(ckpt["state_dict"]["model.0.weight"], model.state_dict()["0.weight"])


def test_quiet_lightning_repeats_the_training_step_none_warning():
    import warnings
    E.quiet_lightning()
    with warnings.catch_warnings(record=True) as caught:
        for _ in range(2):
            warnings.warn("`training_step` returned `None`. If this was on purpose, ignore this warning...", UserWarning)
    assert len(caught) == 2


# --- third edition: LocalMixup, global RNG fingerprint, per-step costs, local weights ----------------------

def test_local_mixup_never_touches_global_rngs_and_is_reproducible():
    import random

    import numpy as np

    x, y = E.make_images(8, size=16, num_classes=4, seed=0)
    x0, y0 = x.clone(), y.clone()
    torch.manual_seed(5); np.random.seed(5); random.seed(5)
    before = E.global_rng_fingerprint()
    a = E.LocalMixup(4, seed=3)
    outs = [a(x, y) for _ in range(6)]
    assert E.global_rng_fingerprint() == before            # no global draw, no reseed
    assert torch.equal(x, x0) and torch.equal(y, y0)       # inputs untouched
    b = E.LocalMixup(4, seed=3)
    for xm, t in outs:
        xb, tb = b(x, y)
        assert torch.equal(xm, xb) and torch.equal(t, tb)  # same seed, same sequence
    c = E.LocalMixup(4, seed=4)
    assert not all(torch.equal(o[0], c(x, y)[0]) for o in outs)


def test_local_mixup_matches_timm_formulas():
    from timm.data.mixup import mixup_target

    x, y = E.make_images(6, size=12, num_classes=3, seed=1)
    modes = set()
    m = E.LocalMixup(3, seed=0, label_smoothing=0.2)
    for _ in range(20):
        xm, t = m(x, y)
        lam, mode = m.last["lam"], m.last["mode"]
        modes.add(mode)
        assert t.shape == (6, 3) and t.dtype == torch.float32
        assert torch.allclose(t, mixup_target(y, 3, lam, 0.2))
        assert torch.allclose(t.sum(1), torch.ones(6)) and float(t.min()) >= 0.2 / 3 - 1e-6
        if mode == "mixup":
            assert torch.allclose(xm, lam * x + (1 - lam) * x.flip(0))
        else:
            y0, y1, x0, x1 = m.last["box"]
            inside = torch.zeros(12, 12, dtype=torch.bool)
            inside[y0:y1, x0:x1] = True
            assert torch.equal(xm[..., inside], x.flip(0)[..., inside])
            assert torch.equal(xm[..., ~inside], x[..., ~inside])
            assert lam == pytest.approx(1 - inside.float().mean().item())
    assert modes == {"mixup", "cutmix"}
    only = E.LocalMixup(3, mixup_alpha=0.0, cutmix_alpha=1.0, seed=0)
    only(x, y)
    assert only.last["mode"] == "cutmix"
    with pytest.raises(ValueError):
        E.LocalMixup(3, mixup_alpha=0.0, cutmix_alpha=0.0)


def test_global_rng_fingerprint_sees_each_generator():
    import random

    import numpy as np

    base = E.global_rng_fingerprint()
    assert base == E.global_rng_fingerprint()
    for draw in (lambda: torch.rand(1), lambda: np.random.rand(), lambda: random.random()):
        before = E.global_rng_fingerprint()
        draw()
        assert E.global_rng_fingerprint() != before


def test_step_cost_recovers_slope_and_intercept(monkeypatch):
    clock = {"now": 100.0}
    calls = []

    def fake(n):                       # a run of n steps "takes" 20 ms + 2 ms per step on a fake clock
        calls.append(n)
        clock["now"] += 0.02 + 0.002 * n

    monkeypatch.setattr(time, "perf_counter", lambda: clock["now"])
    startup, per_step = E.step_cost(fake, 5, 25, repeats=2)
    assert calls == [5, 5, 25, 25]
    assert per_step == pytest.approx(0.002)
    assert startup == pytest.approx(0.02)
    with pytest.raises(ValueError):
        E.step_cost(fake, 5, 5)


def test_run_steps_every_config_trains():
    E.quiet_lightning()
    losses = {c: E.run_steps(c, 6) for c in E.OVERHEAD_CONFIGS}
    assert set(losses) == set(E.OVERHEAD_CONFIGS)
    for c, v in losses.items():
        if c != "Lightning, nothing on":        # nothing logged there
            assert 0 < v < 5, (c, v)
    # plain loop and Lightning do the same SGD steps on the same data
    assert losses["plain loop"] == pytest.approx(losses["+ self.log every step"], rel=1e-5)
    with pytest.raises(ValueError):
        E.run_steps("nope", 2)
    torch.manual_seed(123)
    expected = torch.rand(3)
    torch.manual_seed(123)
    E.run_steps("plain loop", 2)
    E.run_steps("+ self.log every step", 2)
    assert torch.equal(torch.rand(3), expected), "run_steps must leave the caller's global RNG as it was"


def test_save_local_weights_round_trip(tmp_path):
    import timm

    kw = dict(img_size=16, patch_size=8, depth=1, embed_dim=32, num_heads=2)
    state = torch.get_rng_state()
    path = E.save_local_weights("vit_tiny_patch16_224", str(tmp_path / "w.pth"), num_classes=10, seed=3, **kw)
    assert torch.equal(torch.get_rng_state(), state)
    sd = torch.load(path, weights_only=True)
    m = timm.create_model("vit_tiny_patch16_224", pretrained=True, pretrained_cfg_overlay=dict(file=path),
                          num_classes=4, **kw)
    assert torch.equal(m.patch_embed.proj.weight, sd["patch_embed.proj.weight"])
    assert m.get_classifier().out_features == 4
    again = E.save_local_weights("vit_tiny_patch16_224", str(tmp_path / "w2.pth"), num_classes=10, seed=3, **kw)
    assert torch.equal(torch.load(again, weights_only=True)["pos_embed"], sd["pos_embed"])


def test_capture_transformers_log(tmp_path, capsys):
    from transformers import AutoConfig, AutoModel, AutoModelForSequenceClassification
    from transformers.utils import logging as hf_logging

    cfg = AutoConfig.for_model("bert", vocab_size=32, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                               intermediate_size=32, max_position_embeddings=16)
    AutoModel.from_config(cfg).save_pretrained(tmp_path)
    handlers = hf_logging.get_logger("transformers").handlers[:]
    model, text = E.capture_transformers_log(AutoModelForSequenceClassification.from_pretrained, str(tmp_path),
                                             num_labels=3)
    assert model.config.num_labels == 3
    assert "classifier.weight" in text and "\x1b[" not in text
    assert hf_logging.get_logger("transformers").handlers == handlers
    assert "classifier.weight" not in capsys.readouterr().err
    with pytest.raises(ValueError) as info:
        E.capture_transformers_log(lambda: (_ for _ in ()).throw(ValueError("boom")))
    assert info.value.transformers_log == ""
    assert hf_logging.get_logger("transformers").handlers == handlers
