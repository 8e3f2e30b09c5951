"""Hidden tests of Chapter 4, judged outside the student's kernel (instructor side: never released).

Each grade cell of 04_ecosystem.ipynb has one probe here (it runs with the notebook's names, in the
student's sandbox and in the reference worker) and one verdict (it runs in the judge, on the plain data
both sent back). ``got`` is the student's data, ``ref`` the reference solution's; every expectation
that does not come from the student's own objects is read from ``ref``. Models the probes compare by
value are built (and seeded) by the probe itself before the first call into student code, or receive
weights the probe made, so that the student's and the reference run hold the same numbers.
"""
from contextlib import nullcontext

import torch

from course import checks as C
from course.grading.judge import Judge, visible

judge = Judge()


def same_digest(have, want, rel=1e-4, abs_tol=1e-5):
    """Two entries of judge_state_digest: shape and dtype equal, sums close."""
    import math
    if type(have) not in (tuple, list) or len(have) != len(want):
        return False
    return (tuple(have[0]) == tuple(want[0]) and have[1] == want[1]
            and all(type(a) is float and math.isclose(a, b, rel_tol=rel, abs_tol=abs_tol) for a, b in zip(have[2:], want[2:])))


@judge.shared
def judge_state_digest(module):
    """{key: (shape, dtype, sum, sum of squares, weighted sum)} of a module's state_dict, in float64."""
    out = {}
    for key, value in module.state_dict().items():
        v = value.detach().double().flatten().cpu()
        w = torch.linspace(-1.0, 2.0, max(v.numel(), 1), dtype=torch.float64)[: v.numel()]
        out[str(key)] = (tuple(value.shape), str(value.dtype), float(v.sum()), float((v * v).sum()), float((v * w).sum()))
    return out


@judge.shared
def judge_report(rep):
    """A LoadReport (or whatever came back) as plain data: its type and its three lists of names."""
    from course.ecosystem import LoadReport as _LR
    data = {"type": type(rep).__name__, "is_report": isinstance(rep, _LR)}
    for name in ("loaded", "skipped", "missing"):
        value = getattr(rep, name, None)
        data[name] = sorted(str(k) for k in value) if isinstance(value, (list, tuple)) else None
        data[name + "_is_list"] = isinstance(value, (list, tuple))
    return data


@judge.shared
def judge_opt_table(opt, model):
    """{parameter name: (weight_decay, lr, number of groups holding it)} for an optimizer, plus its type."""
    if not isinstance(opt, torch.optim.Optimizer):
        return {"type": type(opt).__module__ + "." + type(opt).__name__, "table": None}
    where = {}
    for g in opt.param_groups:
        for p in g["params"]:
            where.setdefault(id(p), []).append((float(g.get("weight_decay", 0.0)), float(g["lr"])))
    table = {}
    for n, p in model.named_parameters():
        rows = where.get(id(p), [])
        table[n] = (rows[0][0] if rows else None, rows[0][1] if rows else None, len(rows))
    return {"type": type(opt).__module__ + "." + type(opt).__name__, "is_adamw": type(opt) is torch.optim.AdamW,
            "table": table, "n_in_groups": sum(len(g["params"]) for g in opt.param_groups)}


# --- Exercise 4.1 · LinearProbe ------------------------------------------------------------------------
# clause -> test
#   backbone: timm arch, pretrained=False, in_chans, every timm_kwarg passed on ........ test_probe_shapes
#       (ViT img_size/depth, ConvNeXt depths, in_chans 1 and 5), test_probe_values (weights load into it)
#   classifier removed (a num_classes=0 timm state_dict loads strictly) ................ test_probe_values
#   head = nn.Linear(d, num_classes), d the pooled pre-logit width ..................... test_probe_shapes
#       (MambaOut: head_hidden_size 256 != num_features 64), test_probe_frozen (trainable count)
#   forward -> (B, num_classes) float logits ........................................... test_probe_shapes
#   logits = head(backbone's own pre-logit pooling): ConvNeXt norm, ViT class token .... test_probe_values
#   backbone frozen, head trainable, gradients reach only the head ..................... test_probe_frozen
#   backbone in eval mode at all times (init, train(), train(True), eval()), head and
#       module follow the mode, BatchNorm statistics unchanged, dropout off, train()
#       returns self ................................................................... test_probe_train_mode
#   a ViT need not accept other sizes ................ every ViT case uses the img_size it was built for

@judge.probe("test_probe_shapes")
def probe_probe_shapes(seed):
    g = torch.Generator().manual_seed(seed % 100003)
    cases = [("test_resnet", 7, 3, {}, 64), ("convnext_atto", 4, 3, {"depths": (1, 1, 1, 1), "dims": (8, 16, 24, 32)}, 32),
             ("vit_tiny_patch16_224", 5, 3, {"img_size": 32, "depth": 2, "embed_dim": 32, "num_heads": 2}, 32),
             ("test_mambaout", 6, 3, {}, 32), ("test_resnet", 3, 1, {}, 40),
             ("convnext_atto", 2, 5, {"depths": (1, 1, 1, 1), "dims": (16, 32, 48, 64)}, 32)]
    xs = [torch.randn(2, c, s, s, generator=g) for (_, _, c, _, s) in cases]
    out = []
    for (arch, k, c, kw, s), x in zip(cases, xs):
        p = LinearProbe(arch, k, in_chans=c, **kw)
        p.eval()
        with torch.no_grad():
            y = p(x)
        out.append({"label": f"LinearProbe({arch!r}, {k}, in_chans={c}, **{kw}) on {tuple(x.shape)}", "out": y})
    return out


@probe_probe_shapes.verdict
def _(got, ref):
    for i, (g, r) in enumerate(zip(got, ref)):
        with visible() if i == 0 else nullcontext():
            C.check_tensor(g["out"], name=f"logits of {r['label']}", shape=tuple(r["out"].shape), dtype=torch.float32,
                           hint="pass in_chans and every timm_kwargs entry to timm.create_model; the head's input "
                                "width is the pooled pre-logit width (model.head_hidden_size: MambaOut's is 256, "
                                "its num_features only 64)")


@judge.probe("test_probe_values")
def probe_probe_values(seed):
    import timm
    cases = [("test_resnet", 5, 3, {}, 48), ("convnext_atto", 4, 3, {"depths": (1, 1, 2, 1), "dims": (8, 16, 24, 32)}, 64),
             ("vit_tiny_patch16_224", 3, 3, {"img_size": 32, "depth": 2, "embed_dim": 32, "num_heads": 2}, 32),
             ("test_mambaout", 6, 2, {}, 32)]
    prepared = []
    for i, (arch, k, c, kw, s) in enumerate(cases):
        torch.manual_seed(seed % 100003 + 7 * i)
        src = timm.create_model(arch, pretrained=False, num_classes=0, in_chans=c, **kw)
        g = torch.Generator().manual_seed(seed % 100003 + 31 * i)
        with torch.no_grad():
            for name, b in src.named_buffers():
                if name.endswith("running_mean"):
                    b.copy_(0.2 * torch.randn(b.shape, generator=g))
                elif name.endswith("running_var"):
                    b.copy_(0.5 + torch.rand(b.shape, generator=g))
        state = {key: v.clone() for key, v in src.state_dict().items()}
        d = src.head_hidden_size
        weight, bias = 0.1 * torch.randn(k, d, generator=g), 0.1 * torch.randn(k, generator=g)
        x = torch.randn(3, c, s, s, generator=g)
        prepared.append((arch, k, c, kw, state, weight, bias, x))
    torch.manual_seed(0)
    vis = LinearProbe("test_resnet", 5).eval()
    xv = torch.randn(3, 3, 64, 64)
    with torch.no_grad():
        visible_pair = (vis(xv), vis.head(vis.backbone.forward_head(vis.backbone.forward_features(xv), pre_logits=True)))
    out = {"visible": visible_pair, "cases": []}
    for arch, k, c, kw, state, weight, bias, x in prepared:
        p = LinearProbe(arch, k, in_chans=c, **kw)
        p.backbone.load_state_dict(state)
        with torch.no_grad():
            p.head.weight.copy_(weight)
            p.head.bias.copy_(bias)
        p.eval()
        with torch.no_grad():
            out["cases"].append({"arch": arch, "logits": p(x)})
    return out


@probe_probe_values.verdict
def _(got, ref):
    with visible():
        g_out, g_want = got["visible"]
        C.check_close(g_out, g_want, name="LinearProbe('test_resnet', 5) logits", rtol=1e-5, atol=1e-6,
                      hint="let the backbone pool its own features: forward_head(forward_features(x), pre_logits=True)")
    for g, r in zip(got["cases"], ref["cases"]):
        C.check_close(g["logits"], r["logits"], name=f"logits of a {r['arch']} probe with given weights",
                      rtol=1e-4, atol=1e-5,
                      hint="pool as the backbone's own head does (a ConvNeXt's head has a LayerNorm, a ViT uses its "
                           "class token, not the mean of the tokens): forward_head(..., pre_logits=True), or "
                           "model(x) of a num_classes=0 model; and keep the backbone in eval mode")


@judge.probe("test_probe_frozen")
def probe_probe_frozen(seed):
    g = torch.Generator().manual_seed(seed % 100003)
    cases = [("test_resnet", 4, 64), ("test_resnet", 3, 32), ("convnext_atto", 6, 32)]
    xs = [torch.randn(2, 3, s, s, generator=g) for (_, _, s) in cases]
    rows = []
    for (arch, k, s), x in zip(cases, xs):
        p = LinearProbe(arch, k)
        backbone_trainable = [n for n, q in p.backbone.named_parameters() if q.requires_grad]
        head_trainable = [bool(q.requires_grad) for q in p.head.parameters()]
        trainable = sum(q.numel() for q in p.parameters() if q.requires_grad)
        p(x).sum().backward()
        rows.append({"arch": arch, "backbone_trainable": backbone_trainable[:5], "n_backbone_trainable": len(backbone_trainable),
                     "head_trainable": head_trainable, "trainable": trainable,
                     "backbone_grads": sum(q.grad is not None for q in p.backbone.parameters()),
                     "head_grad": p.head.weight.grad is not None})
    return rows


@probe_probe_frozen.verdict
def _(got, ref):
    for i, (g, r) in enumerate(zip(got, ref)):
        with visible() if i == 0 else nullcontext():
            C.check_true(g["n_backbone_trainable"] == 0,
                         f"{r['arch']}: {g['n_backbone_trainable']} backbone parameters still require grad, "
                         f"e.g. {g['backbone_trainable']}", hint="self.backbone.requires_grad_(False)")
            C.check_true(g["head_trainable"] == r["head_trainable"] and g["head_grad"] is True,
                         f"{r['arch']}: the head's parameters must require grad and receive gradients")
        C.check_true(g["backbone_grads"] == 0, f"{r['arch']}: {g['backbone_grads']} backbone parameters received gradients")
        C.check_equal(g["trainable"], r["trainable"], name=f"number of trainable values of a {r['arch']} probe",
                      hint="only the new head trains: head_hidden_size * num_classes + num_classes values")


@judge.probe("test_probe_train_mode")
def probe_probe_train_mode(seed):
    g = torch.Generator().manual_seed(seed % 100003)
    x = torch.randn(4, 3, 32, 32, generator=g)
    xc = torch.randn(3, 3, 32, 32, generator=g)

    def training_modules(mod):
        return [n or "<backbone>" for n, m in mod.named_modules() if m.training]

    p = LinearProbe("test_resnet", 3)
    ret = p.train()
    out = {"visible": {"ret_is_self": ret is p, "training": training_modules(p.backbone)[:5],
                       "probe": p.training, "head": p.head.training}}
    rows = []
    for arch, kw, xx in (("test_resnet", {"drop_rate": 0.5}, x), ("convnext_atto", {"depths": (1, 1, 1, 1), "dims": (8, 16, 24, 32), "drop_rate": 0.5}, xc)):
        p = LinearProbe(arch, 4, **kw)
        row = {"arch": arch, "after_init": training_modules(p.backbone)[:5]}
        buffers = {n: b.clone() for n, b in p.backbone.named_buffers()}
        ret = p.train(True)
        row["ret_is_self"] = ret is p
        row["after_train"] = training_modules(p.backbone)[:5]
        row["head_after_train"] = (p.training, p.head.training)
        with torch.no_grad():
            y1, y2 = p(xx), p(xx)
        row["changed_buffers"] = [n for n, b in p.backbone.named_buffers() if not torch.equal(b, buffers[n])][:5]
        ret = p.eval()
        row["eval_ret_is_self"] = ret is p
        row["head_after_eval"] = (p.training, p.head.training)
        row["after_eval"] = training_modules(p.backbone)[:5]
        with torch.no_grad():
            y3 = p(xx)
        p.train()
        row["after_retrain"] = training_modules(p.backbone)[:5]
        row["outputs"] = (y1, y2, y3)
        rows.append(row)
    out["rows"] = rows
    return out


@probe_probe_train_mode.verdict
def _(got, ref):
    hint = ("override train(self, mode=True): super().train(mode), then self.backbone.eval() (which sets every "
            "child module), and return self; setting backbone.training = False changes that one attribute only")
    with visible():
        v = got["visible"]
        C.check_true(v["ret_is_self"] is True, "LinearProbe.train() must return the module itself", hint=hint)
        C.check_true(v["training"] == [], f"after .train(), these backbone modules are in train mode: {v['training']}", hint=hint)
        C.check_true(v["probe"] is True and v["head"] is True, "after .train(), the probe and its head must be in train mode")
    for r in got["rows"]:
        a = r["arch"]
        C.check_true(r["after_init"] == [], f"{a}: right after construction, backbone modules in train mode: {r['after_init']}",
                     hint="the backbone must be in eval mode from the start (nn.Module starts in train mode)")
        C.check_true(r["ret_is_self"] is True and r["eval_ret_is_self"] is True,
                     f"{a}: train(True) and eval() must return the module", hint=hint)
        for when in ("after_train", "after_eval", "after_retrain"):
            C.check_true(r[when] == [], f"{a}: {when.replace('_', ' ')}: backbone modules in train mode: {r[when]}", hint=hint)
        C.check_true(tuple(r["head_after_train"]) == (True, True) and tuple(r["head_after_eval"]) == (False, False),
                     f"{a}: (probe.training, head.training) after train(True) was {r['head_after_train']}, after eval() "
                     f"{r['head_after_eval']}; the head follows the mode asked for")
        C.check_true(r["changed_buffers"] == [],
                     f"{a}: a forward pass in train mode changed the backbone's BatchNorm buffers {r['changed_buffers']}",
                     hint="a frozen backbone in train mode still updates its running statistics: keep it in eval mode")
        y1, y2, y3 = r["outputs"]
        C.check_close(y2, y1, name=f"{a}: two forward passes in train mode (drop_rate=0.5)", rtol=1e-5, atol=1e-6,
                      hint="the backbone's dropout must be off: keep the backbone in eval mode")
        C.check_close(y1, y3, name=f"{a}: train-mode vs eval-mode logits", rtol=1e-5, atol=1e-6, hint=hint)


# --- Exercise 4.2 · make_optimizer ---------------------------------------------------------------------
# clause -> test
#   returns torch.optim.AdamW ........................................... test_make_optimizer_type (MLP, ViT, ConvNeXt)
#   weight decay 0 for ndim <= 1, names ending in .bias (a 2-D one), names matching a
#       no_weight_decay() pattern with fnmatch (ViT's 3-D pos_embed/cls_token; a wildcard);
#       weight_decay otherwise; weight_decay=0 -> 0 everywhere .......... test_make_optimizer_decay_groups
#   lr * head_lr_mult on model.get_classifier()'s parameters (ResNet fc, ConvNeXt head.fc
#       but not head.norm, EfficientNet classifier, non-default mult), lr elsewhere; a model
#       without get_classifier, and one whose classifier is Identity, has no head ... test_make_optimizer_lr
#   frozen parameters in no group; every trainable one in exactly one (tied weights once) test_make_optimizer_frozen
#   any number / order of groups ....................................... every verdict compares per parameter

@judge.shared
def judge_custom_nets():
    """Two models the chapter never showed: a 2-D `.bias`, wildcard no_weight_decay(), a named classifier."""
    from torch import nn as _nn

    class Block(_nn.Module):
        def __init__(self, d):
            super().__init__()
            self.proj = _nn.Linear(d, d)
            self.scale = _nn.Parameter(torch.ones(1, d))          # 2-D, exempted by a wildcard pattern

        def forward(self, x):
            return self.proj(x) * self.scale

    class Attn(_nn.Module):
        def __init__(self, d):
            super().__init__()
            self.weight = _nn.Parameter(torch.randn(d, d) * 0.1)
            self.bias = _nn.Parameter(torch.zeros(4, d))            # 2-D, exempted because its name ends in .bias

        def forward(self, x):
            return x @ self.weight + self.bias.mean(0)

    class Net(_nn.Module):
        def __init__(self, d=6, k=3):
            super().__init__()
            self.emb = _nn.Embedding(11, d)
            self.blocks = _nn.ModuleList([Block(d), Block(d)])
            self.attn = Attn(d)
            self.norm = _nn.LayerNorm(d)
            self.classifier = _nn.Linear(d, k)

        def no_weight_decay(self):
            return {"blocks.*.scale", "emb.weight"}

        def get_classifier(self):
            return self.classifier

        def forward(self, idx):
            h = self.emb(idx)
            for b in self.blocks:
                h = b(h)
            return self.classifier(self.norm(self.attn(h)).mean(1))

    plain = _nn.Sequential(_nn.Conv1d(3, 4, 3), _nn.BatchNorm1d(4), _nn.Flatten(), _nn.Linear(8, 2))
    return Net(), plain


@judge.probe("test_make_optimizer_type")
def probe_make_optimizer_type(seed):
    import timm
    torch.manual_seed(seed % 100003)
    models = [("tiny MLP", E.tiny_mlp()),
              ("ViT", timm.create_model("vit_tiny_patch16_224", pretrained=False, num_classes=3, img_size=32, depth=1, embed_dim=32, num_heads=2)),
              ("ConvNeXt", timm.create_model("convnext_atto", pretrained=False, num_classes=4, depths=(1, 1, 1, 1), dims=(8, 16, 24, 32))),
              ("Conv2d+BatchNorm", torch.nn.Sequential(torch.nn.Conv2d(2, 3, 3), torch.nn.BatchNorm2d(3)))]
    out = []
    for name, m in models:
        opt = make_optimizer(m, lr=0.3 if name != "tiny MLP" else 1e-3, weight_decay=0.2 if name != "tiny MLP" else 0.05)
        out.append({"model": name, "type": type(opt).__module__ + "." + type(opt).__name__,
                    "is_adamw": type(opt) is torch.optim.AdamW})
    return out


@probe_make_optimizer_type.verdict
def _(got, ref):
    for i, g in enumerate(got):
        with visible() if i == 0 else nullcontext():
            C.check_true(g["is_adamw"] is True, f"make_optimizer on the {g['model']} returned {g['type']}, expected "
                         "torch.optim.AdamW", hint="build torch.optim.AdamW from your parameter groups")


@judge.probe("test_make_optimizer_decay_groups")
def probe_make_optimizer_decay(seed):
    import timm
    torch.manual_seed(seed % 100003)
    vis = timm.create_model("vit_tiny_patch16_224", pretrained=False, num_classes=3, img_size=32, depth=1, embed_dim=32, num_heads=2)
    cases = [("ViT", timm.create_model("vit_tiny_patch16_224", pretrained=False, num_classes=5, img_size=32, depth=2, embed_dim=32, num_heads=2), 2e-4, 0.3, 10.0),
             ("ViT, weight_decay=0", timm.create_model("vit_tiny_patch16_224", pretrained=False, num_classes=5, img_size=32, depth=1, embed_dim=32, num_heads=2), 1e-3, 0.0, 10.0),
             ("test_resnet", timm.create_model("test_resnet", pretrained=False, num_classes=3), 1e-3, 0.05, 10.0),
             ("ConvNeXt", timm.create_model("convnext_atto", pretrained=False, num_classes=4, depths=(1, 1, 1, 1), dims=(8, 16, 24, 32)), 1e-3, 0.01, 3.0)]
    net, plain = judge_custom_nets()
    cases += [("a model with a 2-D .bias and wildcard no_weight_decay()", net, 1e-3, 0.07, 10.0),
              ("an nn.Sequential", plain, 1e-2, 0.1, 10.0)]
    out = {"visible": judge_opt_table(make_optimizer(vis, lr=1e-3, weight_decay=0.05), vis), "cases": []}
    for name, m, lr, wd, mult in cases:
        out["cases"].append({"model": name, "wd": wd, "t": judge_opt_table(make_optimizer(m, lr, wd, head_lr_mult=mult), m)})
    return out


def check_decay_tables(g, r, label, hint):
    C.check_true(g["table"] is not None, f"make_optimizer on the {label} returned {g['type']}, not an optimizer")
    for name, (r_wd, _, _) in r["table"].items():
        g_wd = g["table"].get(name, (None, None, 0))[0]
        if g_wd is None:
            C.check_true(False, f"{label}: parameter {name} is in no parameter group",
                         hint="every trainable parameter must be optimized")
        C.check_float(float(g_wd), r_wd, name=f"weight_decay of {name} ({label})", rel=1e-9, abs_tol=0.0, hint=hint)


@probe_make_optimizer_decay.verdict
def _(got, ref):
    hint = ("timm's rule: no decay when p.ndim <= 1, or the name ends with '.bias', or fnmatch(name, pattern) for a "
            "pattern of model.no_weight_decay() (a ViT's 3-D pos_embed and cls_token); weight_decay otherwise")
    with visible():
        check_decay_tables(got["visible"], ref["visible"], "ViT of the visible test", hint)
    for g, r in zip(got["cases"], ref["cases"]):
        check_decay_tables(g["t"], r["t"], r["model"], hint)


@judge.probe("test_make_optimizer_lr")
def probe_make_optimizer_lr(seed):
    import timm
    torch.manual_seed(seed % 100003)
    lr = 1e-4 + (seed % 97) * 1e-5
    vis = timm.create_model("test_resnet", pretrained=False, num_classes=3)
    net, plain = judge_custom_nets()
    cases = [("ConvNeXt, head_lr_mult=2.5", timm.create_model("convnext_atto", pretrained=False, num_classes=4,
                                                                depths=(1, 1, 1, 1), dims=(8, 16, 24, 32)), 2.5),
             ("EfficientNet (its classifier is model.classifier), head_lr_mult=4",
              timm.create_model("test_efficientnet", pretrained=False, num_classes=2), 4.0),
             ("ViT with num_classes=0 (no classifier)",
              timm.create_model("vit_tiny_patch16_224", pretrained=False, num_classes=0, img_size=32, depth=1, embed_dim=32, num_heads=2), 10.0),
             ("a model whose get_classifier() is model.classifier, head_lr_mult=1", net, 1.0),
             ("an nn.Sequential (no get_classifier)", plain, 3.0),
             ("test_resnet, head_lr_mult=0.5", timm.create_model("test_resnet", pretrained=False, num_classes=7), 0.5)]
    out = {"visible": judge_opt_table(make_optimizer(vis, lr=0.003, weight_decay=0.1), vis), "cases": []}
    for name, m, mult in cases:
        out["cases"].append({"model": name, "t": judge_opt_table(make_optimizer(m, lr, 0.02, head_lr_mult=mult), m)})
    return out


def check_lr_tables(g, r, label):
    C.check_true(g["table"] is not None, f"make_optimizer on the {label} returned {g['type']}, not an optimizer")
    for name, (_, r_lr, _) in r["table"].items():
        g_lr = g["table"].get(name, (None, None, 0))[1]
        if g_lr is None:
            C.check_true(False, f"{label}: parameter {name} is in no parameter group")
        C.check_float(float(g_lr), r_lr, name=f"lr of {name} ({label})", rel=1e-9, abs_tol=0.0,
                      hint="lr * head_lr_mult exactly for the parameters of model.get_classifier() (find them by "
                           "identity, not by name: a ConvNeXt's head.norm is not the classifier), lr for all others")


@probe_make_optimizer_lr.verdict
def _(got, ref):
    with visible():
        check_lr_tables(got["visible"], ref["visible"], "test_resnet of the visible test")
    for g, r in zip(got["cases"], ref["cases"]):
        check_lr_tables(g["t"], r["t"], r["model"])


@judge.probe("test_make_optimizer_frozen")
def probe_make_optimizer_frozen(seed):
    import timm
    from torch import nn as _nn
    torch.manual_seed(seed % 100003)
    vis = timm.create_model("test_resnet", pretrained=False, num_classes=3)
    vis.conv1.requires_grad_(False)
    vit = timm.create_model("vit_tiny_patch16_224", pretrained=False, num_classes=4, img_size=32, depth=2, embed_dim=32, num_heads=2)
    vit.patch_embed.requires_grad_(False)
    vit.pos_embed.requires_grad_(False)
    cnx = timm.create_model("convnext_atto", pretrained=False, num_classes=4, depths=(1, 1, 1, 1), dims=(8, 16, 24, 32))
    cnx.head.fc.requires_grad_(False)

    class Tied(_nn.Module):
        def __init__(self):
            super().__init__()
            self.enc = _nn.Linear(5, 5)
            self.dec = _nn.Linear(5, 5)
            self.dec.weight = self.enc.weight                         # one parameter, two modules

        def forward(self, x):
            return self.dec(self.enc(x))

    cases = [("ViT with patch_embed and pos_embed frozen", vit), ("ConvNeXt with its classifier frozen", cnx),
             ("a model with tied weights", Tied())]
    out = {"visible": judge_opt_table(make_optimizer(vis, lr=1e-3, weight_decay=0.05), vis), "cases": []}
    for name, m in cases:
        t = judge_opt_table(make_optimizer(m, lr=1e-3, weight_decay=0.05, head_lr_mult=5.0), m)
        t["frozen"] = [n for n, p in m.named_parameters() if not p.requires_grad]
        t["n_trainable"] = sum(1 for p in m.parameters() if p.requires_grad)
        out["cases"].append({"model": name, "t": t})
    out["visible"]["frozen"] = [n for n, p in vis.named_parameters() if not p.requires_grad]
    out["visible"]["n_trainable"] = sum(1 for p in vis.parameters() if p.requires_grad)
    return out


def check_membership(g, r, label):
    C.check_true(g["table"] is not None, f"make_optimizer on the {label} returned {g['type']}, not an optimizer")
    frozen = set(r["frozen"])
    for name in r["table"]:
        n = g["table"].get(name, (None, None, 0))[2]
        want = 0 if name in frozen else 1
        C.check_equal(n, want, name=f"number of param groups holding {name} ({label}, "
                                    f"{'frozen' if name in frozen else 'trainable'})",
                      hint="skip parameters with requires_grad=False; put every trainable one in exactly one group")
    C.check_equal(g["n_in_groups"], r["n_in_groups"], name=f"number of parameter tensors in all groups ({label})",
                  hint="model.named_parameters() lists a shared parameter once; list it once in the optimizer too")


@probe_make_optimizer_frozen.verdict
def _(got, ref):
    with visible():
        check_membership(got["visible"], ref["visible"], "test_resnet with conv1 frozen")
    for g, r in zip(got["cases"], ref["cases"]):
        check_membership(g["t"], r["t"], r["model"])


# --- Exercise 4.3 · load_checkpoint_flexible ---------------------------------------------------------------
# clause -> test
#   plain state_dict (any key order) .................................... test_load_plain
#   DDP module. prefix ................................................... test_load_ddp
#   checkpoint["state_dict"] if it is a dict, other top-level entries ignored; real
#       Lightning checkpoints (Trainer.save_checkpoint) ................. test_load_lightning
#   strip only UNTIL the key names an entry: a key that already names one is kept (a
#       LightningModule's own model.0.weight; a DDP-wrapped LightningModule loses
#       module. only) ................................................... test_load_lightning, test_load_unseen_formats
#   skip tensors whose shape differs; report them as skipped (and missing) ... test_load_head_mismatch
#   module./model. prefixes in any combination; other architectures; missing = every model
#       key not loaded (a checkpoint without the last layer, one without BatchNorm's
#       num_batches_tracked in a plain dict without _metadata) ........ test_load_unseen_formats
#   unknown key -> KeyError naming it, model untouched; non-tensor values ignored (flat
#       dict and nested state_dict) .................................... test_load_contract
#   "copy every other tensor into the model": the model keeps its own tensors, so changing
#       the model afterwards (an optimizer step) leaves the checkpoint as it was
#       (load_state_dict(assign=True) aliases them) ...................... test_load_contract
#   checkpoint not modified: keys, values and nested dict of the caller's checkpoint, with
#       and without non-tensor entries (at the top and inside state_dict) .. test_load_contract
#   loaded / skipped / missing with the model's names, as lists, any order ... every verdict (judge_report)
#   every loaded tensor copied exactly ................................... every verdict (state digests vs ref)

@judge.shared
def judge_load_case(make_model, checkpoint, label):
    """Build the destination (seeded), load `checkpoint` with the student's function, report the outcome."""
    torch.manual_seed(1234)
    model = make_model()
    rep = load_checkpoint_flexible(model, checkpoint)
    return {"label": label, "report": judge_report(rep), "state": judge_state_digest(model)}


def check_load_case(g, r, hint=""):
    label = r["label"]
    rep_g, rep_r = g["report"], r["report"]
    C.check_true(rep_g["is_report"] is True, f"the {label}: load_checkpoint_flexible returned a {rep_g['type']}, "
                                             f"expected a LoadReport", hint="return LoadReport(loaded=..., skipped=..., missing=...)")
    for field, why in (("loaded", "the model's key names (prefixes stripped) that were copied"),
                       ("skipped", "the keys dropped because their shape differs from the model's"),
                       ("missing", "every model key not in loaded (skipped ones and buffers such as num_batches_tracked included)")):
        C.check_true(rep_g[field + "_is_list"] is True, f"the {label}: report.{field} must be a list or tuple")
        C.check_equal(set(rep_g[field]), set(rep_r[field]), name=f"report.{field} for the {label}", hint=f"{field}: {why}. {hint}")
    for key, want in r["state"].items():
        have = g["state"].get(key)
        # shape and dtype exactly; the sums to 1e-4 relative: the visible checkpoint comes from one training step,
        # whose float32 sums differ in the last bits between two processes with other thread counts
        if not same_digest(have, want):
            C.check_true(False, f"the {label}: the model's {key} does not hold the expected values after loading "
                                f"(shape/dtype/sums {have} vs {want})",
                         hint="copy every loaded tensor into the model; strict=False on keys that do not match loads "
                              "nothing and raises nothing; skipped keys keep the model's own values")


@judge.probe("test_load_plain")
def probe_load_plain(seed):
    import timm
    from torch import nn as _nn
    torch.manual_seed(seed % 100003 + 50)
    src = _nn.Sequential(_nn.Conv2d(3, 4, 3), _nn.BatchNorm2d(4), _nn.Flatten(), _nn.Linear(4 * 6 * 6, 3))
    with torch.no_grad():
        src[1].running_mean.uniform_(-1, 1)
        src[1].num_batches_tracked.fill_(7)
    sd = {k: v.clone() for k, v in src.state_dict().items()}
    reversed_sd = dict(reversed(list(sd.items())))
    make_seq = lambda: _nn.Sequential(_nn.Conv2d(3, 4, 3), _nn.BatchNorm2d(4), _nn.Flatten(), _nn.Linear(4 * 6 * 6, 3))
    make_r10 = lambda: timm.create_model("test_resnet", pretrained=False, num_classes=6)
    return [judge_load_case(make_r10, dict(CKPT_PLAIN), "plain test_resnet state_dict of the visible test"),
            judge_load_case(make_seq, reversed_sd, "plain state_dict of an nn.Sequential, keys in reverse order")]


@probe_load_plain.verdict
def _(got, ref):
    for i, (g, r) in enumerate(zip(got, ref)):
        with visible() if i == 0 else nullcontext():
            check_load_case(g, r)


@judge.probe("test_load_ddp")
def probe_load_ddp(seed):
    import timm
    torch.manual_seed(seed % 100003 + 51)
    src = timm.create_model("test_efficientnet", pretrained=False, num_classes=3)
    sd = {"module." + k: v.clone() for k, v in src.state_dict().items()}
    return [judge_load_case(lambda: timm.create_model("test_resnet", pretrained=False, num_classes=6),
                            {"module." + k: v for k, v in CKPT_PLAIN.items()}, "DDP state_dict of the visible test"),
            judge_load_case(lambda: timm.create_model("test_efficientnet", pretrained=False, num_classes=3), sd,
                            "DDP state_dict of an EfficientNet")]


@probe_load_ddp.verdict
def _(got, ref):
    for i, (g, r) in enumerate(zip(got, ref)):
        with visible() if i == 0 else nullcontext():
            check_load_case(g, r, hint="strip the leading 'module.' that DistributedDataParallel adds")


@judge.probe("test_load_lightning")
def probe_load_lightning(seed):
    import timm
    torch.manual_seed(seed % 100003 + 52)
    src = E.tiny_mlp(5, 4, hidden=7)
    # a real Lightning checkpoint's top level (epoch, optimizer_states, loops, ...) around this MLP's weights
    real = dict(CKPT_LIGHTNING, state_dict={"model." + k: v.clone() for k, v in src.state_dict().items()},
                hyper_parameters={"lr": 0.01, "note": "not a tensor"})
    make_r = lambda: timm.create_model("test_resnet", pretrained=False, num_classes=6)
    return [judge_load_case(make_r, CKPT_LIGHTNING, "Lightning checkpoint of the visible test"),
            judge_load_case(lambda: E.DemoLitClassifier(make_r()), CKPT_LIGHTNING,
                            "Lightning checkpoint into its own LightningModule (visible test)"),
            judge_load_case(lambda: E.tiny_mlp(5, 4, hidden=7), real, "Lightning checkpoint of an MLP"),
            judge_load_case(lambda: E.DemoLitClassifier(E.tiny_mlp(5, 4, hidden=7)), real,
                            "Lightning checkpoint of an MLP into its own LightningModule (keys model.0.weight, ...)")]


@probe_load_lightning.verdict
def _(got, ref):
    for i, (g, r) in enumerate(zip(got, ref)):
        with visible() if i < 2 else nullcontext():
            check_load_case(g, r, hint="use checkpoint['state_dict'] when it is a dict, and strip 'model.' (the "
                                       "LightningModule's attribute name) only while the key names no entry of the "
                                       "model: a LightningModule's own keys are model.<...>")


@judge.probe("test_load_head_mismatch")
def probe_load_head(seed):
    import timm
    torch.manual_seed(seed % 100003 + 53)
    src = timm.create_model("convnext_atto", pretrained=False, num_classes=9, depths=(1, 1, 1, 1), dims=(8, 16, 24, 32))
    sd = {k: v.clone() for k, v in src.state_dict().items()}
    return [judge_load_case(lambda: timm.create_model("test_resnet", pretrained=False, num_classes=2), dict(CKPT_PLAIN),
                            "6-class checkpoint in a 2-class test_resnet (visible test)"),
            judge_load_case(lambda: timm.create_model("convnext_atto", pretrained=False, num_classes=5,
                                                      depths=(1, 1, 1, 1), dims=(8, 16, 24, 32)), sd, "9-class ConvNeXt into 5 classes")]


@probe_load_head.verdict
def _(got, ref):
    for i, (g, r) in enumerate(zip(got, ref)):
        with visible() if i == 0 else nullcontext():
            check_load_case(g, r, hint="compare each tensor's shape with the model's and skip those that differ")


@judge.probe("test_load_unseen_formats")
def probe_load_unseen(seed):
    import timm
    from torch import nn as _nn
    torch.manual_seed(seed % 100003 + 54)
    vit = timm.create_model("vit_tiny_patch16_224", pretrained=False, num_classes=7, img_size=32, depth=2, embed_dim=32, num_heads=2)
    vit_ckpt = {"epoch": 9, "state_dict": {"module.model." + k: v.clone() for k, v in vit.state_dict().items()}}
    mlp = E.tiny_mlp(6, 2, hidden=9)
    partial = {"module." + k: v.clone() for k, v in mlp.state_dict().items() if not k.startswith("2.")}
    make_bn = lambda: _nn.Sequential(_nn.Conv2d(2, 3, 3), _nn.BatchNorm2d(3), _nn.ReLU(), _nn.Conv2d(3, 3, 1), _nn.BatchNorm2d(3))
    bn = make_bn()
    with torch.no_grad():
        bn[1].running_var.uniform_(0.5, 2.0)
        bn[4].running_mean.uniform_(-1, 1)
    old_style = {"model." + k: v.clone() for k, v in bn.state_dict().items() if not k.endswith("num_batches_tracked")}
    return [judge_load_case(lambda: timm.create_model("test_resnet", pretrained=False, num_classes=6),
                            {"state_dict": {"model.module." + k: v for k, v in CKPT_PLAIN.items()}},
                            "Lightning checkpoint of a DDP model (visible test)"),
            judge_load_case(lambda: timm.create_model("vit_tiny_patch16_224", pretrained=False, num_classes=3,
                                                      img_size=32, depth=2, embed_dim=32, num_heads=2), vit_ckpt, "DDP-in-Lightning ViT with a new head"),
            judge_load_case(lambda: E.tiny_mlp(6, 2, hidden=9), partial, "checkpoint without the last layer"),
            judge_load_case(make_bn, old_style, "checkpoint without BatchNorm's num_batches_tracked (a plain dict)"),
            judge_load_case(lambda: E.DemoLitClassifier(E.tiny_mlp(6, 2, hidden=9)),
                            {"module.model." + k: v.clone() for k, v in mlp.state_dict().items()},
                            "DDP state_dict of a LightningModule, into the LightningModule (strip module. only)")]


@probe_load_unseen.verdict
def _(got, ref):
    for i, (g, r) in enumerate(zip(got, ref)):
        with visible() if i == 0 else nullcontext():
            check_load_case(g, r, hint="strip 'module.' and 'model.' repeatedly, in any order; compute missing from the "
                                       "model's own keys, not from load_state_dict(strict=False), which does not report "
                                       "num_batches_tracked for a dict without _metadata")


@judge.probe("test_load_contract")
def probe_load_contract(seed):
    import timm
    torch.manual_seed(seed % 100003 + 55)
    src = E.tiny_mlp(4, 3, hidden=6)
    sd = {k: v.clone() for k, v in src.state_dict().items()}
    unknown_key = f"module.extra_{seed % 1000}.weight"

    def attempt(checkpoint, make_model):
        torch.manual_seed(99)
        model = make_model()
        before = judge_state_digest(model)
        try:
            load_checkpoint_flexible(model, checkpoint)
            raised = None
        except KeyError as err:
            raised = ("KeyError", str(err))
        except Exception as err:  # noqa: BLE001
            raised = (type(err).__name__, str(err)[:200])
        return {"raised": raised, "unchanged": judge_state_digest(model) == before}

    make_r10 = lambda: timm.create_model("test_resnet", pretrained=False, num_classes=6)
    out = {"visible_error": attempt(dict(CKPT_PLAIN, **{"module.extra_head.weight": torch.zeros(2, 2)}), make_r10),
           "visible_extra": judge_load_case(make_r10, dict(CKPT_PLAIN, epoch=3, note="best"),
                                            "state_dict with an 'epoch' and a 'note' entry (visible test)")}
    # the unknown key comes first here, then last: a half-loaded model is caught either way
    out["error_first"] = attempt({unknown_key: torch.ones(3), **{"module." + k: v for k, v in sd.items()}},
                                 lambda: E.tiny_mlp(4, 3, hidden=6))
    out["error_last"] = attempt({**sd, "zzz.bias": torch.ones(3)}, lambda: E.tiny_mlp(4, 3, hidden=6))
    out["unknown_core"] = f"extra_{seed % 1000}"
    out["nested_extras"] = judge_load_case(lambda: E.tiny_mlp(4, 3, hidden=6),
                                           {"state_dict": {**sd, "version": 2, "config": {"depth": 2}}, "epoch": 1},
                                           "checkpoint with non-tensor entries inside its state_dict")
    # copied INTO the model: changing the model afterwards (as an optimizer step does) leaves the checkpoint as it was
    torch.manual_seed(98)
    trained = E.tiny_mlp(4, 3, hidden=6)
    kept = {"module." + k: v.clone() for k, v in sd.items()}
    load_checkpoint_flexible(trained, kept)
    with torch.no_grad():
        for q in trained.state_dict().values():
            if q.is_floating_point():
                q.add_(1.0)
    # the values go to the judge, which compares them with the reference's (nothing decided in the kernel)
    out["checkpoint_after_training"] = {k: kept["module." + k].detach().clone() for k in sd}
    # the checkpoint is not modified (keys, values, identity of the nested dict), with non-tensor entries too
    nested = {"module." + k: v for k, v in sd.items()}
    cases = {"nested state_dict": {"state_dict": nested, "epoch": 2},
             "flat dict with 'epoch' and 'note' entries": {**sd, "epoch": 3, "note": "best"},
             "state_dict holding a 'version' entry": {"state_dict": {**sd, "version": 2}, "epoch": 1}}
    out["not_modified"] = {}
    for label, ckpt in cases.items():
        inner = ckpt["state_dict"] if "state_dict" in ckpt else ckpt
        top_before, keys_before = list(ckpt), list(inner)
        entries_before = {k: id(v) for k, v in inner.items()}
        values_before = {k: v.clone() for k, v in inner.items() if isinstance(v, torch.Tensor)}
        judge_load_case(lambda: E.tiny_mlp(4, 3, hidden=6), ckpt, "unused")
        out["not_modified"][label] = {
            "the nested dict": ckpt.get("state_dict", ckpt) is inner, "its keys": list(inner) == keys_before,
            "the top-level keys": list(ckpt) == top_before,
            "its entries": all(id(inner.get(k)) == i for k, i in entries_before.items()),
            "its values": all(torch.equal(inner[k], v) for k, v in values_before.items() if k in inner)}
    return out


def unknown_key_of(got):
    return f"module.{got['unknown_core']}.weight"


@probe_load_contract.verdict
def _(got, ref):
    with visible():
        v = got["visible_error"]
        C.check_true(v["raised"] is not None and v["raised"][0] == "KeyError" and "extra_head" in v["raised"][1],
                     f"a checkpoint with the unknown key 'module.extra_head.weight': expected a KeyError naming it, "
                     f"got {v['raised'] or 'no exception'}", hint="raise KeyError(f'... {key!r} ...') for a key the model does not have")
        C.check_true(v["unchanged"] is True, "after the KeyError the model was changed: a failed load must not leave a "
                                             "half-loaded model", hint="check every key before copying anything")
        check_load_case(got["visible_extra"], ref["visible_extra"], hint="ignore entries whose value is not a tensor")
    for name in ("error_first", "error_last"):
        e = got[name]
        key, core = (unknown_key_of(got), got["unknown_core"]) if name == "error_first" else ("zzz.bias", "zzz")
        C.check_true(e["raised"] is not None and e["raised"][0] == "KeyError" and core in e["raised"][1],
                     f"a checkpoint with the unknown key {key!r}: expected a KeyError naming it, got "
                     f"{e['raised'] or 'no exception'}", hint="never ignore a key the model does not have")
        C.check_true(e["unchanged"] is True, f"the unknown key {key!r}: the model was changed before the KeyError",
                     hint="decide everything first (clean, skip, raise), then copy")
    check_load_case(got["nested_extras"], ref["nested_extras"], hint="ignore entries whose value is not a tensor")
    kept_got, kept_ref = got["checkpoint_after_training"], ref["checkpoint_after_training"]
    C.check_true(type(kept_got) is dict and all(type(kept_got.get(k)) is torch.Tensor for k in kept_ref),
                 "the checkpoint's tensors after loading and training could not be read back")
    changed = sorted(k for k, v in kept_ref.items()
                     if kept_got[k].shape != v.shape or kept_got[k].dtype != v.dtype or not torch.equal(kept_got[k], v))
    C.check_equal(changed, [],
                  name="checkpoint entries changed by changing the model after loading",
                  hint="the model's tensors ARE the checkpoint's: copy the values into the model's own tensors "
                       "(own[name].copy_(value) under no_grad, or load_state_dict without assign=True)")
    for label, want in ref["not_modified"].items():
        have = got["not_modified"].get(label, {})
        bad = [k for k, ok in want.items() if have.get(k) != ok]
        C.check_true(bad == [], f"load_checkpoint_flexible modified the checkpoint it was given ({label}: "
                                f"{', '.join(bad)} changed)",
                     hint="build a new dict of cleaned keys; do not pop, rename or replace entries of the caller's "
                          "checkpoint (non-tensor entries included)")


# --- Exercise 4.4 · FineTuner and fine_tune (the capstone) ------------------------------------------------------
# clause -> test
#   save_hyperparameters of every argument, timm_kwargs included ......... test_capstone_build (hparams vs ref),
#       test_capstone_fit (the checkpoint's hyper_parameters; load_from_checkpoint alone rebuilds the module)
#   self.model = timm arch from the file, new num_classes head, timm_kwargs passed on; every
#       tensor of the file but the classifier loaded (ConvNeXt: head.norm is loaded, only head.fc is
#       new; the file's tensors jittered so that none equals a fresh model's) .. test_capstone_build (ViT, ConvNeXt)
#   forward: normalise [0, 1] images with the model's own data config (ViT 0.5, ConvNeXt ImageNet),
#       return self.model's logits ........................................... test_capstone_build (head set by the probe)
#   training_step: SoftTargetCrossEntropy of self(mixed) vs E.LocalMixup(num_classes, seed=mix_seed)'s
#       soft targets, one mixer per module (its generator advances between steps), returned with its
#       graph, no backward, global RNGs untouched ............................ test_capstone_training_step
#   configure_optimizers: AdamW over self.model's parameters, lr, weight_decay except ndim <= 1,
#       .bias, no_weight_decay() names (and a model without that method) ... test_capstone_optimizer
#   fine_tune: bf16-mixed (bf16 logits, float32 weights: not bf16-true), exactly max_steps steps across
#       an epoch boundary (not max_epochs=1, not limit_train_batches), checkpoint at ckpt_path (global_step, hparams,
#       optimizer groups from configure_optimizers, the trained weights), a NEW FineTuner from
#       load_from_checkpoint in eval mode with those weights, val_loss / val_acc of its float32 logits
#       as Python floats ...................................................... test_capstone_fit
#   never an accuracy threshold: every value is compared with the reference's or recomputed by the probe

@judge.shared
def judge_cap_weights(seed, arch, num_classes, jitter=False, **kw):
    """Write local weights for `arch` (seeded) into a fresh temporary folder; return the file's path.

    jitter=True adds seeded noise to every float tensor of the file, so that none keeps the value a fresh
    model starts with (a LayerNorm's ones and zeros): a tensor that was not loaded then shows."""
    import os as _os
    import tempfile as _tempfile
    folder = _tempfile.mkdtemp(prefix="judge-cap-")
    path = E.save_local_weights(arch, _os.path.join(folder, "w.pth"), num_classes=num_classes, seed=seed, **kw)
    if jitter:
        g = torch.Generator().manual_seed(seed + 7)
        state = torch.load(path, weights_only=True)
        torch.save({k: v + 0.1 * torch.randn(v.shape, generator=g) if v.is_floating_point() else v
                    for k, v in state.items()}, path)
    return path


@judge.shared
def judge_cap_optimizer(result):
    """The optimizer inside what configure_optimizers returned (an optimizer, a list or a dict), or the object itself."""
    if type(result) is dict:
        result = result.get("optimizer")
    if type(result) in (list, tuple) and result:
        result = result[0][0] if type(result[0]) in (list, tuple) else result[0]
    return result


@judge.shared
def judge_plain(value):
    """Hyperparameter values as plain data (str for anything that is not a number, string, bool or tuple of those)."""
    if isinstance(value, (bool, int, float, str)) or value is None:
        return value
    if isinstance(value, (list, tuple)):
        return [judge_plain(v) for v in value]
    return repr(value)


@judge.probe("test_capstone_build")
def probe_capstone_build(seed):
    import shutil as _shutil
    s = seed % 100003
    cnx_kw = {"depths": (1, 1, 1, 1), "dims": (8, 16, 24, 32)}
    vit_kw = dict(img_size=16, patch_size=8, depth=1, embed_dim=24, num_heads=2)
    cases = [("visible", CAP_WEIGHTS, CAP_ARCH, 4, dict(CAP_KW), 16),
             ("ConvNeXt (ImageNet mean/std)", judge_cap_weights(s + 1, "convnext_atto", 10, jitter=True, **cnx_kw), "convnext_atto", 3,
              cnx_kw, 32),
             ("ViT with 7 classes", judge_cap_weights(s + 2, "vit_tiny_patch16_224", 10, **vit_kw), "vit_tiny_patch16_224", 7,
              vit_kw, 16)]
    g = torch.Generator().manual_seed(s)
    out = []
    for label, path, arch, k, kw, size in cases:
        x = torch.rand(3, 3, size, size, generator=g)
        file = torch.load(path, weights_only=True)
        torch.manual_seed(s + 5)
        ft = FineTuner(path, arch, k, **kw)
        own = ft.model.state_dict()
        head = ft.model.get_classifier()
        head_keys = {n for n, p in ft.model.named_parameters() if any(p is q for q in head.parameters())}
        body = [n for n in file if n in own and n not in head_keys]
        not_loaded = [n for n in body if not torch.equal(own[n], file[n])]
        w = 0.2 * torch.randn(head.weight.shape, generator=g)
        b = 0.1 * torch.randn(head.bias.shape, generator=g)
        with torch.no_grad():
            head.weight.copy_(w)
            head.bias.copy_(b)
            logits = ft.eval()(x)
        hp = {str(key): judge_plain(v) for key, v in dict(ft.hparams).items()}
        if label == "visible":
            hp["weights"] = "<CAP_WEIGHTS>" if hp.get("weights") == CAP_WEIGHTS else hp.get("weights")
        else:
            hp["weights"] = "<file>" if hp.get("weights") == path else hp.get("weights")
            _shutil.rmtree(path.rsplit("/", 1)[0], ignore_errors=True)
        out.append({"label": label, "head_shape": tuple(head.weight.shape), "n_body": len(body),
                    "not_loaded": not_loaded[:5], "n_not_loaded": len(not_loaded), "logits": logits, "hparams": hp})
    return out


@probe_capstone_build.verdict
def _(got, ref):
    for i, (g, r) in enumerate(zip(got, ref)):
        label = r["label"]
        with visible() if i == 0 else nullcontext():
            C.check_equal(tuple(g["head_shape"]), tuple(r["head_shape"]), name=f"{label}: the new head's weight shape",
                          hint="num_classes=num_classes in timm.create_model: a new head, the file's head dropped")
            C.check_true(g["n_not_loaded"] == 0 and g["n_body"] == r["n_body"],
                         f"{label}: {g['n_not_loaded']} tensors of the file were not loaded into self.model, e.g. "
                         f"{g['not_loaded']}", hint="pretrained=True, pretrained_cfg_overlay=dict(file=weights) loads "
                                                    "every tensor but the classifier (pretrained=False loads nothing)")
        # outside the visible example: the visible test recomputes these in the kernel, not from the reference
        C.check_close(g["logits"], r["logits"], name=f"{label}: FineTuner(images) logits (head set by the test)",
                      rtol=1e-4, atol=1e-5,
                      hint="normalise with the mean and std of resolve_model_data_config(self.model) (0.5 for this "
                           "ViT, ImageNet's for a ConvNeXt), then return self.model(...)")
        C.check_equal(g["hparams"], r["hparams"], name=f"{label}: self.hparams",
                      hint="self.save_hyperparameters() first in __init__ records every argument, **timm_kwargs too")


@judge.probe("test_capstone_optimizer")
def probe_capstone_optimizer(seed):
    import shutil as _shutil
    s = seed % 100003
    cnx_kw = {"depths": (1, 1, 1, 1), "dims": (8, 16, 24, 32)}
    path = judge_cap_weights(s + 3, "convnext_atto", 10, **cnx_kw)
    lr = 1e-4 * (1 + s % 50)
    cases = [("visible", FineTuner(CAP_WEIGHTS, CAP_ARCH, 4, lr=3e-3, weight_decay=0.2, **CAP_KW)),
             ("ViT, other lr and weight_decay", FineTuner(CAP_WEIGHTS, CAP_ARCH, 5, lr=lr, weight_decay=0.07, **CAP_KW)),
             ("ConvNeXt (no no_weight_decay method)", FineTuner(path, "convnext_atto", 3, lr=lr, weight_decay=0.11, **cnx_kw))]
    _shutil.rmtree(path.rsplit("/", 1)[0], ignore_errors=True)
    out = []
    for label, ft in cases:
        opt = judge_cap_optimizer(ft.configure_optimizers())
        t = judge_opt_table(opt, ft.model)
        extra = {id(p) for p in ft.parameters()} - {id(p) for p in ft.model.parameters()}
        out.append({"label": label, "t": t, "extra_params": len(extra)})
    return out


@probe_capstone_optimizer.verdict
def _(got, ref):
    for i, (g, r) in enumerate(zip(got, ref)):
        label = r["label"]
        with visible() if i == 0 else nullcontext():
            C.check_true(g["t"].get("is_adamw") is True, f"{label}: configure_optimizers gave {g['t']['type']}, "
                         "expected torch.optim.AdamW", hint="timm.optim.create_optimizer_v2(self.model, opt='adamw', ...)")
            for name, (r_wd, r_lr, _) in r["t"]["table"].items():
                g_wd, g_lr, g_n = g["t"]["table"].get(name, (None, None, 0))
                C.check_equal(g_n, 1, name=f"{label}: number of parameter groups holding model.{name}",
                              hint="every parameter of self.model, exactly once")
                C.check_float(float(g_wd), r_wd, name=f"{label}: weight_decay of model.{name}", rel=1e-9, abs_tol=0.0,
                              hint="0 for ndim <= 1, names ending in .bias and self.model.no_weight_decay()'s names; "
                                   "weight_decay for the rest")
                C.check_float(float(g_lr), r_lr, name=f"{label}: lr of model.{name}", rel=1e-9, abs_tol=0.0,
                              hint="lr = self.hparams.lr for every group")


@judge.probe("test_capstone_training_step")
def probe_capstone_training_step(seed):
    from timm.loss import SoftTargetCrossEntropy
    s = seed % 100003
    g = torch.Generator().manual_seed(s)
    images, labels = E.make_images(12, size=16, num_classes=3, seed=s % 1000)
    order = torch.randperm(12, generator=g)
    batches = [(images[order[:6]], labels[order[:6]]), (images[order[6:]], labels[order[6:]])]
    out = {}
    cases = [("visible", 4, 3, [(CAP_IMAGES[:8], CAP_LABELS[:8])]),
             ("3 classes, mix_seed from the test, two steps", 3, s % 997, batches)]
    for label, k, mix_seed, data in cases:
        torch.manual_seed(s + 11)
        ft = FineTuner(CAP_WEIGHTS, CAP_ARCH, k, mix_seed=mix_seed, **CAP_KW)
        state = {n: v.clone() for n, v in ft.state_dict().items()}
        rows = []
        for step, (x, y) in enumerate(data):
            before = E.global_rng_fingerprint()
            loss = ft.training_step((x.clone(), y.clone()), step)
            rng_same = E.global_rng_fingerprint() == before
            is_tensor = isinstance(loss, torch.Tensor)
            rows.append({"is_tensor": is_tensor, "shape": tuple(loss.shape) if is_tensor else None,
                         "has_graph": bool(is_tensor and loss.grad_fn is not None),
                         "value": loss.detach().float() if is_tensor else torch.tensor(float("nan")),
                         "rng_same": rng_same,
                         "grads": sum(p.grad is not None for p in ft.parameters())})
        # the probe's own recomputation with a fresh mixer: the loss the statement asks for
        torch.manual_seed(s + 11)
        ref_ft = FineTuner(CAP_WEIGHTS, CAP_ARCH, k, mix_seed=mix_seed, **CAP_KW)
        ref_ft.load_state_dict(state)
        mixer = E.LocalMixup(k, seed=mix_seed)
        want = []
        with torch.no_grad():
            for x, y in data:
                xm, t = mixer(x, y)
                want.append(SoftTargetCrossEntropy()(ref_ft(xm), t).float())
        out[label] = {"rows": rows, "want": want}
    return out


@probe_capstone_training_step.verdict
def _(got, ref):
    for label, r in ref.items():
        g = got[label]
        with visible() if label == "visible" else nullcontext():
            for step, (gr, rr) in enumerate(zip(g["rows"], r["rows"])):
                where = f"{label}, step {step + 1}"
                C.check_true(gr["rng_same"] is True, f"{where}: training_step changed the global random state "
                             "(torch, NumPy or random)", hint="mix with self.mixup, an E.LocalMixup: it has its own "
                                                              "generator; never reseed inside a step")
                C.check_true(gr["is_tensor"] is True and tuple(gr["shape"]) == (),
                             f"{where}: training_step must return the loss as a 0-dim tensor",
                             hint="return the loss: Lightning calls backward() on it (None skips the batch)")
                C.check_true(gr["has_graph"] is True, f"{where}: the returned loss has no grad_fn",
                             hint="do not .item() or .detach() the loss")
                C.check_true(gr["grads"] == 0, f"{where}: parameters had .grad after training_step",
                             hint="do not call backward(): Lightning does")
                C.check_close(gr["value"], g["want"][step], name=f"{where}: training_step loss", rtol=1e-4, atol=1e-5,
                              hint="SoftTargetCrossEntropy()(self(mixed), soft_targets) with mixed, soft_targets = "
                                   "self.mixup(images, labels); self.mixup = E.LocalMixup(num_classes, seed=mix_seed), "
                                   "built once in __init__ so that its generator advances from step to step")
        # against the reference's own run (outside the visible example: the visible test cannot know these values)
        for step, (gr, rr) in enumerate(zip(g["rows"], r["rows"])):
            C.check_close(gr["value"], rr["value"], name=f"{label}, step {step + 1}: training_step loss vs the reference "
                          "solution's", rtol=1e-4, atol=1e-5,
                          hint="the model must hold the file's weights and normalise with its own data config")


@judge.probe("test_capstone_fit")
def probe_capstone_fit(seed):
    import os as _os
    import shutil as _shutil
    import tempfile as _tempfile
    import torch.nn.functional as _F
    s = seed % 100003
    images, labels = E.make_images(14, size=16, num_classes=3, seed=s % 1000 + 1)
    lr, wd, mix_seed = 2e-3, 0.1, s % 991
    torch.manual_seed(s + 21)
    ft = FineTuner(CAP_WEIGHTS, CAP_ARCH, 3, lr=lr, weight_decay=wd, mix_seed=mix_seed, **CAP_KW)
    initial = judge_state_digest(ft.model)
    dtypes = []
    forward = ft.forward

    def spy(*args, **kwargs):
        out = forward(*args, **kwargs)
        dtypes.append(str(getattr(out, "dtype", type(out).__name__)))
        return out

    ft.forward = spy
    # 2 batches per epoch and max_steps=3: the run crosses an epoch boundary (max_epochs=1 or
    # limit_train_batches=max_steps would stop at 2)
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(images[:8], labels[:8]), batch_size=4)
    folder = _tempfile.mkdtemp(prefix="judge-fit-")
    path = _os.path.join(folder, "run.ckpt")
    try:
        back, metrics = fine_tune(ft, loader, images[8:], labels[8:], path, max_steps=3)
        ck = torch.load(path, weights_only=True) if _os.path.isfile(path) else None
    finally:
        _shutil.rmtree(folder, ignore_errors=True)
    # The trained weights themselves are not compared with the reference's: one float32 Lightning step already
    # differed in the last bits between two processes with other thread counts (the visible checkpoint), and
    # bf16 autocast rounds far more coarsely. What training did is checked through
    # the loss (test_capstone_training_step), the steps, groups and hyper-parameters below, and the checkpoint.
    out = {"dtypes": dtypes, "exists": ck is not None, "changed": judge_state_digest(ft.model) != initial,
           "param_dtypes": sorted({str(p.dtype) for p in ft.model.parameters()})}
    if ck is not None:
        pairs = {}
        for grp in ck.get("optimizer_states", [{}])[0].get("param_groups", []):
            key = (round(float(grp.get("weight_decay", 0.0)), 9), round(float(grp.get("lr", 0.0)), 12))
            pairs[str(key)] = pairs.get(str(key), 0) + len(grp.get("params", []))
        hp = {str(k): judge_plain(v) for k, v in dict(ck.get("hyper_parameters", {})).items()}
        hp["weights"] = "<CAP_WEIGHTS>" if hp.get("weights") == CAP_WEIGHTS else hp.get("weights")
        sd = ck.get("state_dict", {})
        out.update(global_step=ck.get("global_step"), groups=pairs, hparams=hp,
                   ckpt_dtypes=sorted({str(v.dtype) for k, v in sd.items() if k.startswith("model.")}),
                   ckpt_matches_trained=all(torch.equal(sd.get("model." + k, torch.empty(0)), v)
                                            for k, v in ft.model.state_dict().items()))
    out["back_type"] = type(back).__name__
    out["back_is_new"] = back is not ft
    out["back_training"] = getattr(back, "training", None)
    bm = getattr(back, "model", None)
    out["back_matches_trained"] = bool(bm is not None and all(
        torch.equal(bm.state_dict().get(k, torch.empty(0)), v) for k, v in ft.model.state_dict().items()))
    with torch.no_grad():
        lg = back(images[8:]).float() if callable(back) else torch.zeros(6, 3)
    out["want"] = {"val_loss": float(_F.cross_entropy(lg, labels[8:])), "val_acc": float((lg.argmax(1) == labels[8:]).float().mean())}
    out["metrics"] = {k: (float(v) if isinstance(v, (int, float)) else repr(type(v).__name__))
                      for k, v in (metrics.items() if isinstance(metrics, dict) else [])}
    out["metric_types"] = {k: type(v).__name__ for k, v in (metrics.items() if isinstance(metrics, dict) else [])}
    return out


@probe_capstone_fit.verdict
def _(got, ref):
    C.check_true(got["exists"] is True, "fine_tune wrote no checkpoint at ckpt_path", hint="trainer.save_checkpoint(ckpt_path)")
    C.check_equal(got["global_step"], ref["global_step"], name="optimizer steps recorded in the checkpoint (max_steps=3, "
                  "2 batches per epoch)", hint="L.Trainer(max_epochs=-1, max_steps=max_steps): stop on the step count")
    C.check_true(len(got["dtypes"]) == len(ref["dtypes"]) and set(got["dtypes"]) == {"torch.bfloat16"},
                 f"dtypes of the logits during training: {got['dtypes']}; expected {ref['dtypes']}",
                 hint='L.Trainer(..., precision="bf16-mixed") runs every training_step under bfloat16 autocast')
    C.check_equal(got["param_dtypes"], ref["param_dtypes"], name="dtypes of the trained model's parameters",
                  hint='"bf16-mixed" keeps the parameters in float32 and runs the forward under autocast; '
                       '"bf16-true" converts the weights themselves to bfloat16')
    C.check_equal(got["ckpt_dtypes"], ref["ckpt_dtypes"], name="dtypes of the checkpoint's weights",
                  hint='precision="bf16-mixed", not "bf16-true"')
    C.check_true(got["changed"] is True, "the module passed to fine_tune was not trained (its weights did not change)",
                 hint="trainer.fit(module, train_loader) trains the module in place")
    C.check_equal(got["hparams"], ref["hparams"], name="the checkpoint's hyper_parameters",
                  hint="self.save_hyperparameters() in __init__; save with trainer.save_checkpoint")
    C.check_equal(got["groups"], ref["groups"], name="the checkpoint's optimizer groups {(weight_decay, lr): tensors}",
                  hint="the optimizer comes from configure_optimizers: AdamW with timm's weight-decay groups")
    C.check_true(got["ckpt_matches_trained"] is True, "the checkpoint's state_dict does not hold the trained weights",
                 hint="save the checkpoint after trainer.fit, with the same trainer")
    C.check_true(got["back_type"] == "FineTuner" and got["back_is_new"] is True and got["back_training"] is False,
                 f"fine_tune returned a {got['back_type']} (new object: {got['back_is_new']}, training: "
                 f"{got['back_training']}); expected a new FineTuner in eval mode",
                 hint="FineTuner.load_from_checkpoint(ckpt_path).eval()")
    C.check_true(got["back_matches_trained"] is True, "the reloaded module's weights differ from the trained ones",
                 hint="reload the checkpoint you just saved")
    for key in ("val_loss", "val_acc"):
        C.check_true(got["metric_types"].get(key) == "float", f"metrics[{key!r}] is a "
                     f"{got['metric_types'].get(key, 'missing entry')}, expected a Python float", hint=".item()")
        C.check_float(got["metrics"][key], got["want"][key], name=f"metrics[{key!r}] of the reloaded module",
                      rel=1e-5, abs_tol=1e-6, hint="plain cross-entropy and the fraction of correct argmax predictions "
                                                   "of the reloaded module's float32 logits on (val_images, val_labels)")


# --- Exercise 4.5 · lora_fine_tune ---------------------------------------------------------------------------
# clause -> test
#   returns (peft_model, merged, report); peft_model a PeftModel ......................... test_lora_trainable
#   LoRA on the modules target_modules names (PEFT's suffix rule; other lists, BERT's
#       query/value/intermediate.dense, Llama's o_proj/gate_proj...) ..................... test_lora_trainable (wrapped names)
#   rank r (1, 2, 3, 8 hidden; 4 visible) ................................................ test_lora_trainable (count), test_lora_training
#   lora_alpha = 2 * r, lora_dropout = 0 ................................................. test_lora_training (losses vs reference)
#   head trains in full as modules_to_save (Llama "score" without bias, BERT "classifier"
#       with bias); head=None: nothing else trains (a causal LM, and a BERT classifier
#       whose `classifier` stays frozen: task_type="SEQ_CLS" would train it) ............. test_lora_trainable, test_lora_training
#   report["trainable"]: an int, the trainable values, equal to the count the judge's
#       probe computes from the module shapes (r * (in + out) per wrapped Linear + head) test_lora_trainable
#   exactly `steps` AdamW steps (default betas/eps/weight decay), lr, train mode,
#       batches[i % len(batches)] (steps > len(batches) in hidden cases) ................ test_lora_training (losses;
#                                                                                         lora_A after training at
#                                                                                         rtol 1e-5: Adam's missing
#                                                                                         weight decay shows there)
#   report["losses"]: `steps` Python floats, each step's loss before its update ......... test_lora_training
#   adapters moved (every lora_B nonzero), the head's trained copy moved ................ test_lora_training
#   peft_model in eval mode, adapters still separate ..................................... test_lora_training (mode), test_lora_merge (LoRA layers)
#   "wrap model": peft_model is a PeftModel around the very model passed in ............... test_lora_base_frozen
#   base weights bit for bit unchanged, the caller's Parameters and the peft_model's base
#       tensors, the head's original included ............................................ test_lora_base_frozen
#   report["trainable"] is also what requires grad in peft_model ......................... test_lora_trainable
#   merged: model's own class, eval mode, no LoRA layer, same outputs as peft_model ..... test_lora_merge
#   adapter init draws from torch's global generator: probes seed it before the call .... every probe

# Hidden cases per probe (4): a Llama classifier, a Llama causal LM (no head), a BERT classifier, and a BERT classifier
# passed with head=None (nothing but the adapters trains, although the model has a `classifier`).

@judge.shared
def judge_lora_case(seed, k):
    """Hidden case k for a seed: (label, model, batches, targets, r, steps, head), built from seeded generators."""
    import random
    import transformers
    rng = random.Random(seed * 7 + k)
    g = torch.Generator().manual_seed(seed * 13 + k)
    kind = ("llama-cls", "llama-lm", "bert-cls", "bert-cls-frozen-head")[k % 4]
    r = rng.choice([1, 2, 3, 8])
    steps = rng.choice([3, 4, 5])
    length, batch = rng.choice([5, 7]), rng.choice([2, 3])
    torch.manual_seed(seed * 17 + k)
    if kind.startswith("llama"):
        width = rng.choice([16, 24, 48])
        kv = rng.choice([1, 2, 4])
        vocab, labels = 40, rng.choice([2, 5])
        cfg = transformers.LlamaConfig(vocab_size=vocab, hidden_size=width, intermediate_size=rng.choice([20, 40]),
                                       num_hidden_layers=rng.choice([1, 2]), num_attention_heads=4,
                                       num_key_value_heads=kv, max_position_embeddings=32, pad_token_id=0,
                                       num_labels=labels)
        pool = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]
        targets = rng.sample(pool, rng.choice([1, 2, 3]))
        if kind == "llama-cls":
            model, head = transformers.LlamaForSequenceClassification(cfg), "score"
        else:
            model, head = transformers.LlamaForCausalLM(cfg), None
    else:
        width = rng.choice([16, 32])
        vocab, labels = 40, rng.choice([2, 4])
        cfg = transformers.BertConfig(vocab_size=vocab, hidden_size=width, num_hidden_layers=rng.choice([1, 2]),
                                      num_attention_heads=2, intermediate_size=rng.choice([24, 40]),
                                      max_position_embeddings=32, num_labels=labels, hidden_dropout_prob=0.0,
                                      attention_probs_dropout_prob=0.0, classifier_dropout=0.0)
        targets = rng.choice([["query", "value"], ["key", "intermediate.dense"], ["dense"]])
        model = transformers.BertForSequenceClassification(cfg)
        head = None if kind == "bert-cls-frozen-head" else "classifier"   # head=None: its classifier stays frozen
    batches = []
    for _ in range(2):
        ids = torch.randint(1, vocab, (batch, length), generator=g)
        item = {"input_ids": ids, "attention_mask": torch.ones(batch, length, dtype=torch.long)}
        item["labels"] = ids.clone() if kind == "llama-lm" else torch.randint(0, labels, (batch,), generator=g)
        batches.append(item)
    label = f"{type(model).__name__}(width {width}), target_modules={targets}, r={r}, steps={steps}, head={head!r}"
    return label, model, batches, targets, r, steps, head


@judge.shared
def judge_lora_expected(model, targets, r, head):
    """The trainable count from the module shapes (r * (in + out) per wrapped Linear, plus the head), and the names."""
    names = [n for n, m in model.named_modules() if isinstance(m, torch.nn.Linear)
             and any(n == t or n.endswith("." + t) for t in targets)]
    count = sum(r * (model.get_submodule(n).in_features + model.get_submodule(n).out_features) for n in names)
    if head is not None:
        count += sum(p.numel() for p in model.get_submodule(head).parameters())
    return count, sorted(names)


@judge.shared
def judge_lora_run(seed, k):
    """Run lora_fine_tune on hidden case k; return (label, model, batches, targets, r, steps, head, expected, names,
    the base's (name, Parameter, clone) triples, result or the exception's text)."""
    label, model, batches, targets, r, steps, head = judge_lora_case(seed, k)
    expected, names = judge_lora_expected(model, targets, r, head)
    base = [(n, p, p.detach().clone()) for n, p in model.named_parameters()]
    torch.manual_seed(seed * 19 + k)
    result = lora_fine_tune(model, batches, list(targets), r=r, steps=steps, lr=2e-2, head=head)
    return label, model, batches, targets, r, steps, head, expected, names, base, result


@judge.shared
def judge_lora_parts(result):
    """(peft_model, merged, report) or raise a TypeError a verdict can report."""
    if type(result) is not tuple or len(result) != 3:
        raise TypeError(f"lora_fine_tune returned {type(result).__name__}, not a tuple of 3")
    return result


@judge.probe("test_lora_trainable")
def probe_lora_trainable(seed):
    from peft import PeftModel
    from peft.tuners.lora import LoraLayer
    rows = []
    for k in range(4):       # the four kinds of judge_lora_case
        label, model, batches, targets, r, steps, head, expected, names, base, result = judge_lora_run(seed, k)
        pm, merged, report = judge_lora_parts(result)
        count = report.get("trainable") if isinstance(report, dict) else None
        wrapped = sorted(n.replace("base_model.model.", "") for n, m in pm.named_modules() if isinstance(m, LoraLayer)) \
            if isinstance(pm, torch.nn.Module) else None
        actual = sum(p.numel() for p in pm.parameters() if p.requires_grad) if isinstance(pm, torch.nn.Module) else None
        rows.append({"label": label, "is_peft": isinstance(pm, PeftModel), "count": count if type(count) is int else None,
                     "count_type": type(count).__name__, "expected": expected, "names": names, "wrapped": wrapped,
                     "actual": actual})
    return rows


@probe_lora_trainable.verdict
def _(got, ref):
    for g, r in zip(got, ref):
        C.check_true(r["count"] == r["expected"], f"judge: the reference's count {r['count']} != {r['expected']}")
        C.check_true(g["is_peft"] is True, f"{r['label']}: peft_model is not a PeftModel",
                     hint="return what peft.get_peft_model returned")
        C.check_equal(g["wrapped"], r["names"], name=f"modules with LoRA adapters, {r['label']}",
                      hint="pass target_modules on to LoraConfig: PEFT wraps each module whose name equals an entry "
                           "or ends with '.' plus an entry")
        C.check_true(g["count_type"] == "int", f'report["trainable"] is a {g["count_type"]}, not an int')
        C.check_equal(g["count"], r["expected"], name=f'report["trainable"], {r["label"]}',
                      hint="r * (in_features + out_features) per wrapped nn.Linear, plus every value of the head "
                           "(its bias too) when head is given")
        C.check_equal(g["actual"], r["expected"], name=f"values that require grad in peft_model, {r['label']}",
                      hint="only the adapters and the head's copy train: leave requires_grad as PEFT set it")


@judge.probe("test_lora_base_frozen")
def probe_lora_base_frozen(seed):
    from peft import PeftModel
    rows = []
    for k in range(4):       # the four kinds of judge_lora_case
        label, model, batches, targets, r, steps, head, expected, names, base, result = judge_lora_run(seed, k)
        pm, merged, report = judge_lora_parts(result)
        caller = [n for n, p, saved in base if not torch.equal(p.detach(), saved)]
        now = {}
        if isinstance(pm, torch.nn.Module):
            for key, v in pm.state_dict().items():
                if "lora_" in key or "modules_to_save" in key:
                    continue
                now[key.replace("base_model.model.", "").replace(".base_layer", "").replace(".original_module", "")] = v
        inside = [n for n, p, saved in base if n not in now or not torch.equal(now[n], saved)]
        wraps = isinstance(pm, PeftModel) and pm.base_model.model is model
        rows.append({"label": label, "caller": caller[:4], "n_caller": len(caller), "inside": inside[:4],
                     "n_inside": len(inside), "wraps": wraps})
    return rows


@probe_lora_base_frozen.verdict
def _(got, ref):
    for g, r in zip(got, ref):
        C.check_true(g["wraps"] is True, f"{r['label']}: peft_model is not a PeftModel around the model passed in",
                     hint="get_peft_model(model, config) wraps the model you were given (it adds the adapters in place)")
        C.check_true(g["n_caller"] == 0, f"{r['label']}: {g['n_caller']} of the model's own tensors changed, e.g. "
                     f"{g['caller']}", hint="only adapters and the head's copy may train; merge_and_unload writes into "
                                            "the weights of the model it is called on, so merge a deep copy")
        C.check_true(g["n_inside"] == 0, f"{r['label']}: {g['n_inside']} base tensors of peft_model changed or are "
                     f"missing, e.g. {g['inside']}", hint="return the PeftModel that wraps the model you were given")


@judge.probe("test_lora_training")
def probe_lora_training(seed):
    rows = []
    for k in range(4):       # the four kinds of judge_lora_case
        label, model, batches, targets, r, steps, head, expected, names, base, result = judge_lora_run(seed, k)
        pm, merged, report = judge_lora_parts(result)
        losses = report.get("losses") if isinstance(report, dict) else None
        ok_list = type(losses) is list and all(type(v) is float for v in losses)
        params = dict(pm.named_parameters())
        b_zero = [n for n, p in params.items() if "lora_B" in n and not bool(p.detach().abs().sum() > 0)]
        n_b = sum("lora_B" in n for n in params)
        head_moved = None
        if head is not None:
            copies = [p for n, p in params.items() if "modules_to_save" in n]
            originals = [p for n, p in params.items() if "original_module" in n]
            head_moved = bool(copies) and len(copies) == len(originals) and \
                all(not torch.equal(c.detach(), o.detach()) for c, o in zip(copies, originals))
        modes = sorted({m.training for m in pm.modules()})
        adapters = [p.detach().double() for n, p in sorted(params.items()) if "lora_A" in n][:8]
        rows.append({"label": label, "steps": steps, "losses": [float(v) for v in losses] if ok_list else None,
                     "adapters": adapters,
                     "loss_types": sorted({type(v).__name__ for v in losses}) if isinstance(losses, list) else
                     type(losses).__name__, "b_zero": b_zero[:3], "n_b": n_b, "head_moved": head_moved, "modes": modes})
    return rows


@probe_lora_training.verdict
def _(got, ref):
    for g, r in zip(got, ref):
        C.check_true(g["losses"] is not None, f'{r["label"]}: report["losses"] must be a list of Python floats, got '
                     f'{g["loss_types"]}', hint="loss.item() at each step")
        C.check_equal(len(g["losses"]), r["steps"], name=f'len(report["losses"]), {r["label"]}',
                      hint="exactly `steps` optimizer steps, cycling through the batches")
        C.check_true(g["n_b"] > 0 and not g["b_zero"], f"{r['label']}: adapters that never moved: {g['b_zero']}",
                     hint="the optimizer gets the parameters that require grad after wrapping")
        if r["head_moved"] is not None:
            C.check_true(g["head_moved"] is True, f"{r['label']}: the head's trained copy did not move from the "
                         "original (or there is none)", hint="modules_to_save=[head]")
        C.check_close(torch.tensor(g["losses"], dtype=torch.float64), torch.tensor(r["losses"], dtype=torch.float64),
                      name=f"the losses of each step, {r['label']}", rtol=2e-4, atol=1e-5,
                      hint="lora_alpha = 2 * r, lora_dropout = 0, AdamW(lr) with its defaults, one zero_grad per "
                           "step, batches[i % len(batches)], the loss before the update; draw nothing from torch's "
                           "global generator yourself")
        C.check_equal(len(g["adapters"]), len(r["adapters"]), name=f"number of lora_A matrices, {r['label']}")
        for i, (ga, ra) in enumerate(zip(g["adapters"], r["adapters"])):
            C.check_close(ga, ra, name=f"lora_A matrix {i} after training, {r['label']}", rtol=1e-5, atol=1e-6,
                          hint="torch.optim.AdamW with only lr set: its default weight decay (0.01) shrinks the "
                               "adapters a little at every step, which Adam or weight_decay=0 does not")
        C.check_equal(g["modes"], [False], name=f"the .training flags of peft_model's modules, {r['label']}",
                      hint="peft_model.eval() before returning it")


@judge.probe("test_lora_merge")
def probe_lora_merge(seed):
    from peft.tuners.lora import LoraLayer
    rows = []
    for k in range(4):       # the four kinds of judge_lora_case
        label, model, batches, targets, r, steps, head, expected, names, base, result = judge_lora_run(seed, k)
        pm, merged, report = judge_lora_parts(result)
        row = {"label": label, "cls": type(merged).__name__, "want_cls": type(model).__name__,
               "lora_in_merged": sum(isinstance(m, LoraLayer) for m in merged.modules())
               if isinstance(merged, torch.nn.Module) else -1,
               "lora_in_peft": sum(isinstance(m, LoraLayer) for m in pm.modules()), "gap": None,
               "modes": sorted({m.training for m in merged.modules()}) if isinstance(merged, torch.nn.Module) else None}
        if isinstance(merged, torch.nn.Module):
            x = {key: v for key, v in batches[0].items() if key != "labels"}
            with torch.no_grad():
                a, b = merged(**x).logits.float(), pm(**x).logits.float()
            row["gap"] = float((a - b).abs().max()) if a.shape == b.shape else -1.0
            row["scale"] = float(b.abs().max())
        rows.append(row)
    return rows


@probe_lora_merge.verdict
def _(got, ref):
    for g, r in zip(got, ref):
        C.check_equal(g["cls"], r["want_cls"], name=f"type of merged, {r['label']}",
                      hint="merge_and_unload() returns the base model, of the class you were given")
        C.check_equal(g["lora_in_merged"], 0, name=f"LoRA layers left in merged, {r['label']}")
        C.check_true(g["lora_in_peft"] > 0, f"{r['label']}: peft_model has no LoRA layers left",
                     hint="merge a deep copy; merge_and_unload on peft_model itself removes its adapters")
        C.check_equal(g["modes"], [False], name=f"the .training flags of merged's modules, {r['label']}")
        C.check_true(g["gap"] is not None and 0.0 <= g["gap"] <= 1e-4 * (1.0 + g.get("scale", 0.0)),
                     f"{r['label']}: merged and peft_model disagree by {g['gap']}",
                     hint="merged must be the same trained adapters, folded into the weights")


#: Why each reference solution is right: one line shown under the worked solution in a student's feedback once the
#: instructor releases solutions (grade-class --solutions), never before.
WHY = {
    "linear_probe": "num_classes=0 drops the classifier, and forward_features + forward_head(pre_logits=True) pool exactly as that architecture's head does, its width from head_hidden_size or num_features. eval() calls train(False), so the overridden train() puts the backbone back in eval after every mode change.",
    "make_optimizer": "named_parameters() lists a shared parameter once and frozen ones are skipped; each trainable one gets a (weight decay, lr) key from timm's exemption rule and from whether it is, by identity, a parameter of get_classifier(), and each key becomes one AdamW group.",
    "load_checkpoint_flexible": "Prefixes are stripped only while the key names no entry of the model, and every decision goes into a new dict first, so an unknown key raises KeyError before anything is copied and the checkpoint stays unchanged. copy_ into model.state_dict()'s tensors then writes into the model itself.",
    "fine_tuner": "save_hyperparameters() records every argument, so load_from_checkpoint can rerun __init__ alone; timm loads the file's weights into all but the new classifier. The mean/std come from the model's own data config, LocalMixup uses its own generator, and metrics use the reloaded model's float32 logits.",
    "lora_fine_tune": "PEFT wraps each Linear whose name ends with a target, adds r*(in+out) values there and trains a full copy of the head; the optimizer sees only what requires grad, so the base never moves, and merging a deep copy leaves the adapter model and the caller's weights intact.",
}
