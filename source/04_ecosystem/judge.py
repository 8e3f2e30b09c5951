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
#       (MobileNetV3: head_hidden_size 1024 != num_features 288), test_probe_frozen (trainable count)
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
    cases = [("resnet18", 7, 3, {}, 64), ("convnext_atto", 4, 3, {"depths": (1, 1, 1, 1)}, 64),
             ("vit_tiny_patch16_224", 5, 3, {"img_size": 32, "depth": 2}, 32),
             ("mobilenetv3_small_050", 6, 3, {}, 64), ("resnet10t", 3, 1, {}, 48),
             ("convnext_atto", 2, 5, {"depths": (1, 1, 1, 1), "dims": (16, 32, 48, 64)}, 64)]
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
                                "width is the pooled pre-logit width (model.head_hidden_size: MobileNetV3's is 1024, "
                                "its num_features only 288)")


@judge.probe("test_probe_values")
def probe_probe_values(seed):
    import timm
    cases = [("resnet10t", 5, 3, {}, 48), ("convnext_atto", 4, 3, {"depths": (1, 1, 2, 1)}, 64),
             ("vit_tiny_patch16_224", 3, 3, {"img_size": 32, "depth": 2}, 32),
             ("mobilenetv3_small_050", 6, 2, {}, 64)]
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
    vis = LinearProbe("resnet18", 5).eval()
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
        C.check_close(g_out, g_want, name="LinearProbe('resnet18', 5) logits", rtol=1e-5, atol=1e-6,
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
    cases = [("resnet18", 4, 64), ("resnet10t", 3, 48), ("convnext_atto", 6, 64)]
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
    x = torch.randn(4, 3, 48, 48, generator=g)
    xc = torch.randn(3, 3, 64, 64, generator=g)

    def training_modules(mod):
        return [n or "<backbone>" for n, m in mod.named_modules() if m.training]

    p = LinearProbe("resnet18", 3)
    ret = p.train()
    out = {"visible": {"ret_is_self": ret is p, "training": training_modules(p.backbone)[:5],
                       "probe": p.training, "head": p.head.training}}
    rows = []
    for arch, kw, xx in (("resnet10t", {"drop_rate": 0.5}, x), ("convnext_atto", {"depths": (1, 1, 1, 1), "drop_rate": 0.5}, xc)):
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
#       but not head.norm, MobileNet classifier, non-default mult), lr elsewhere; a model
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
              ("ViT", timm.create_model("vit_tiny_patch16_224", pretrained=False, num_classes=3, img_size=32, depth=1)),
              ("ConvNeXt", timm.create_model("convnext_atto", pretrained=False, num_classes=4, depths=(1, 1, 1, 1))),
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
    vis = timm.create_model("vit_tiny_patch16_224", pretrained=False, num_classes=3, img_size=32, depth=1)
    cases = [("ViT", timm.create_model("vit_tiny_patch16_224", pretrained=False, num_classes=5, img_size=32, depth=2), 2e-4, 0.3, 10.0),
             ("ViT, weight_decay=0", timm.create_model("vit_tiny_patch16_224", pretrained=False, num_classes=5, img_size=32, depth=1), 1e-3, 0.0, 10.0),
             ("resnet10t", timm.create_model("resnet10t", pretrained=False, num_classes=3), 1e-3, 0.05, 10.0),
             ("ConvNeXt", timm.create_model("convnext_atto", pretrained=False, num_classes=4, depths=(1, 1, 1, 1)), 1e-3, 0.01, 3.0)]
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
    vis = timm.create_model("resnet10t", pretrained=False, num_classes=3)
    net, plain = judge_custom_nets()
    cases = [("ConvNeXt, head_lr_mult=2.5", timm.create_model("convnext_atto", pretrained=False, num_classes=4,
                                                                depths=(1, 1, 1, 1)), 2.5),
             ("MobileNetV3 (its classifier is model.classifier), head_lr_mult=4",
              timm.create_model("mobilenetv3_small_050", pretrained=False, num_classes=2), 4.0),
             ("ViT with num_classes=0 (no classifier)",
              timm.create_model("vit_tiny_patch16_224", pretrained=False, num_classes=0, img_size=32, depth=1), 10.0),
             ("a model whose get_classifier() is model.classifier, head_lr_mult=1", net, 1.0),
             ("an nn.Sequential (no get_classifier)", plain, 3.0),
             ("resnet10t, head_lr_mult=0.5", timm.create_model("resnet10t", pretrained=False, num_classes=7), 0.5)]
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
        check_lr_tables(got["visible"], ref["visible"], "resnet10t of the visible test")
    for g, r in zip(got["cases"], ref["cases"]):
        check_lr_tables(g["t"], r["t"], r["model"])


@judge.probe("test_make_optimizer_frozen")
def probe_make_optimizer_frozen(seed):
    import timm
    from torch import nn as _nn
    torch.manual_seed(seed % 100003)
    vis = timm.create_model("resnet10t", pretrained=False, num_classes=3)
    vis.conv1.requires_grad_(False)
    vit = timm.create_model("vit_tiny_patch16_224", pretrained=False, num_classes=4, img_size=32, depth=2)
    vit.patch_embed.requires_grad_(False)
    vit.pos_embed.requires_grad_(False)
    cnx = timm.create_model("convnext_atto", pretrained=False, num_classes=4, depths=(1, 1, 1, 1))
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
        check_membership(got["visible"], ref["visible"], "resnet10t with conv1 frozen")
    for g, r in zip(got["cases"], ref["cases"]):
        check_membership(g["t"], r["t"], r["model"])


# --- Exercise 4.3 · mix_batch ---------------------------------------------------------------------------
# clause -> test
#   mixed images of the input's shape, float32 targets (B, num_classes), any C, H, W .... test_mix_batch_shapes
#   every target row sums to 1 (and is non-negative) ..................................... test_mix_batch_rows_sum_to_one
#   smoothing floor 0.1 / num_classes ..................................................... test_mix_batch_smoothing_floor
#   each image a mixup/cutmix of two batch images, targets mixed alike; both modes occur . test_mix_batch_targets_match_images
#   same seed -> same result whatever the global RNG state; images and labels unchanged . test_mix_batch_deterministic

@judge.probe("test_mix_batch_shapes")
def probe_mix_shapes(seed):
    g = torch.Generator().manual_seed(seed % 100003)
    imgs, labs = torch.rand(6, 2, 12, 10, generator=g), torch.randint(0, 7, (6,), generator=g)
    imgs2, labs2 = torch.rand(4, 1, 9, 9, generator=g), torch.randint(0, 3, (4,), generator=g)
    vis = mix_batch(MIX_IMAGES.clone(), MIX_LABELS.clone(), 4, seed=0)
    return {"visible": (list(vis) if isinstance(vis, (tuple, list)) else vis, tuple(MIX_IMAGES.shape)),
            "cases": [(list(mix_batch(imgs.clone(), labs.clone(), 7, seed=5)), (6, 2, 12, 10), 7),
                      (list(mix_batch(imgs2.clone(), labs2.clone(), 3, seed=seed % 1000)), (4, 1, 9, 9), 3)]}


@probe_mix_shapes.verdict
def _(got, ref):
    with visible():
        out, shape = got["visible"]
        C.check_true(isinstance(out, list) and len(out) == 2, "mix_batch should return (images, targets)")
        C.check_tensor(out[0], name="mixed images", shape=tuple(shape), dtype=torch.float32)
        C.check_tensor(out[1], name="targets", shape=(8, 4), dtype=torch.float32,
                       hint="targets are soft labels, one row of num_classes probabilities per image")
    for (out, shape, k) in got["cases"]:
        C.check_true(len(out) == 2, "mix_batch should return (images, targets)")
        C.check_tensor(out[0], name=f"mixed images of a {shape} batch", shape=tuple(shape), dtype=torch.float32)
        C.check_tensor(out[1], name=f"targets with {k} classes", shape=(shape[0], k), dtype=torch.float32,
                       hint="one row of num_classes soft labels per image")


@judge.probe("test_mix_batch_rows_sum_to_one")
def probe_mix_rows(seed):
    g = torch.Generator().manual_seed(seed % 100003 + 1)
    cases = [(torch.rand(10, 3, 8, 8, generator=g), torch.randint(0, 9, (10,), generator=g), 9, s) for s in (3, 11)]
    out = {"visible": mix_batch(MIX_IMAGES.clone(), MIX_LABELS.clone(), 4, seed=1)[1]}
    out["cases"] = [mix_batch(x, y, k, seed=s)[1] for x, y, k, s in cases]
    return out


@probe_mix_rows.verdict
def _(got, ref):
    for i, t in enumerate([got["visible"]] + got["cases"]):
        with visible() if i == 0 else nullcontext():
            n = 8 if i == 0 else 10
            C.check_tensor(t, name="targets", shape=(n, 4 if i == 0 else 9))
            C.check_close(t.sum(dim=1), torch.ones(n), name="row sums of the targets", atol=1e-5, rtol=0,
                          hint="use the targets Mixup returns: they are mixed and smoothed already")
            C.check_true(bool((t >= 0).all()), "targets: some entries are negative")


@judge.probe("test_mix_batch_smoothing_floor")
def probe_mix_floor(seed):
    g = torch.Generator().manual_seed(seed % 100003 + 2)
    cases = [(torch.rand(8, 3, 8, 8, generator=g), torch.randint(0, k, (8,), generator=g), k, s) for k, s in ((6, 4), (10, 9))]
    out = {"visible": mix_batch(MIX_IMAGES.clone(), MIX_LABELS.clone(), 4, seed=2)[1]}
    out["cases"] = [(k, mix_batch(x, y, k, seed=s)[1]) for x, y, k, s in cases]
    return out


@probe_mix_floor.verdict
def _(got, ref):
    for i, (k, t) in enumerate([(4, got["visible"])] + got["cases"]):
        with visible() if i == 0 else nullcontext():
            C.check_tensor(t, name="targets", shape=(8, k))
            C.check_float(float(t.min().item()), 0.1 / k, name=f"smallest target entry with {k} classes",
                          rel=1e-4, abs_tol=1e-6, hint="label_smoothing=0.1: the floor is 0.1 / num_classes; 0 means no smoothing")


@judge.probe("test_mix_batch_targets_match_images")
def probe_mix_match(seed):
    cases = []
    for s in range(10):
        g = torch.Generator().manual_seed(seed % 100003 + 100 + s)
        cases.append((s, torch.rand(8, 3, 12, 12, generator=g), torch.randint(0, 5, (8,), generator=g)))
    vis_x, _ = mix_batch(MIX_IMAGES.clone(), MIX_LABELS.clone(), 4, seed=0)
    out = {"visible_changed": float((vis_x - MIX_IMAGES).abs().max()), "cases": []}
    for s, imgs, labs in cases:
        x, t = mix_batch(imgs.clone(), labs.clone(), 5, seed=s)
        out["cases"].append({"seed": s, "imgs": imgs, "labs": labs, "x": x, "t": t})
    return out


def explain_mix(out, x, i):
    """Best (partner j, lam, mode, residual) explaining out[i] as a mixup/cutmix of x[i] and x[j]."""
    best = None
    for j in range(x.shape[0]):
        xi, xj, oi = x[i].double(), x[j].double(), out[i].double()
        if j == i:
            cand = (j, 1.0, "none", float((oi - xi).abs().max()))
        else:
            eq_i = (oi - xi).abs().amax(0) < 1e-6
            eq_j = (oi - xj).abs().amax(0) < 1e-6
            if bool((eq_i | eq_j).all()) and bool(eq_j.any()):
                cand = (j, float(eq_i.double().mean()), "cutmix", 0.0)
            else:
                d = xi - xj
                lam = float(((oi - xj) * d).sum() / (d * d).sum())
                cand = (j, lam, "mixup", float((oi - (lam * xi + (1 - lam) * xj)).abs().max()))
        if best is None or cand[3] < best[3]:
            best = cand
    return best


@probe_mix_match.verdict
def _(got, ref):
    with visible():
        C.check_true(got["visible_changed"] > 1e-3,
                     "the images came back unchanged: they must be mixed (Mixup returns the mixed batch)")
    modes, changed, k = set(), False, 5
    for c in got["cases"]:
        s, imgs, labs, x, t = c["seed"], c["imgs"], c["labs"], c["x"], c["t"]
        C.check_tensor(x, name=f"mixed images (seed {s})", shape=(8, 3, 12, 12))
        C.check_tensor(t, name=f"targets (seed {s})", shape=(8, k))
        smooth = torch.full((8, k), 0.1 / k, dtype=torch.float64)
        smooth[torch.arange(8), labs] = 1 - 0.1 + 0.1 / k
        expected = torch.empty(8, k, dtype=torch.float64)
        for i in range(8):
            j, lam, mode, res = explain_mix(x, imgs, i)
            C.check_true(res < 1e-4, f"mixed image {i} (seed {s}) is not a mixup or cutmix of two images of the "
                                     f"batch (best residual {res:.3g})")
            if 1e-6 < lam < 1 - 1e-6:
                modes.add(mode)
                changed = True
            expected[i] = lam * smooth[i] + (1 - lam) * smooth[j]
        C.check_close(t.double(), expected, name=f"targets (seed {s})", atol=2e-3, rtol=0,
                      hint="each target must be lam * smooth(label_i) + (1 - lam) * smooth(label_partner), with lam the "
                           "share of image i in the mix; one-hot or unmixed targets do not match the images")
    C.check_true(changed, "no image was ever mixed: use Mixup's output images")
    C.check_true("mixup" in modes and "cutmix" in modes,
                 f"over 10 seeds only these modes occurred: {sorted(modes)}; enable both mixup_alpha and cutmix_alpha")


@judge.probe("test_mix_batch_deterministic")
def probe_mix_deterministic(seed):
    import random as _random
    import numpy as _np
    g = torch.Generator().manual_seed(seed % 100003 + 3)
    imgs, labs = torch.rand(6, 3, 10, 10, generator=g), torch.randint(0, 5, (6,), generator=g)
    keep_imgs, keep_labs = imgs.clone(), labs.clone()
    vis_before = MIX_IMAGES.clone()
    v1 = mix_batch(MIX_IMAGES, MIX_LABELS, 4, seed=7)
    vis_after = MIX_IMAGES.clone()
    v2 = mix_batch(MIX_IMAGES, MIX_LABELS, 4, seed=7)
    a = mix_batch(imgs, labs, 5, seed=123)
    _np.random.seed(999)
    _random.seed(999)
    torch.manual_seed(999)
    _ = _np.random.rand(17)
    b = mix_batch(imgs, labs, 5, seed=123)
    return {"visible": (vis_before, vis_after, list(v1), list(v2)),
            "inputs": (keep_imgs, imgs, keep_labs, labs), "a": list(a), "b": list(b)}


@probe_mix_deterministic.verdict
def _(got, ref):
    with visible():
        before, after, v1, v2 = got["visible"]
        C.check_close(after, before, name="images after mix_batch", rtol=0, atol=0,
                      hint="timm's Mixup mixes in place: give it images.clone()")
        C.check_close(v2[0], v1[0], name="images of a second call with the same seed", rtol=0, atol=0,
                      hint="timm's Mixup draws from NumPy's global RNG: np.random.seed(seed)")
        C.check_close(v2[1], v1[1], name="targets of a second call with the same seed", rtol=0, atol=0)
    keep_imgs, imgs, keep_labs, labs = got["inputs"]
    C.check_close(imgs, keep_imgs, name="input images after two calls", rtol=0, atol=0,
                  hint="give Mixup a clone: it mixes in place")
    C.check_close(labs, keep_labs, name="input labels after two calls", rtol=0, atol=0)
    C.check_close(got["b"][0], got["a"][0], name="images, same seed after the global RNGs were reseeded", rtol=0, atol=0,
                  hint="seed NumPy's global RNG (which Mixup uses) from `seed` inside mix_batch")
    C.check_close(got["b"][1], got["a"][1], name="targets, same seed after the global RNGs were reseeded", rtol=0, atol=0)


# --- Exercise 4.4 · load_checkpoint_flexible ---------------------------------------------------------------
# clause -> test
#   plain state_dict (any key order) .................................... test_load_plain
#   DDP module. prefix ................................................... test_load_ddp
#   checkpoint["state_dict"] if it is a dict, other top-level entries ignored; real
#       Lightning checkpoints (Trainer.save_checkpoint) ................. test_load_lightning
#   skip tensors whose shape differs; report them as skipped (and missing) ... test_load_head_mismatch
#   module./model. prefixes in any combination; other architectures; missing = every model
#       key not loaded (a checkpoint without the last layer, one without BatchNorm's
#       num_batches_tracked in a plain dict without _metadata) ........ test_load_unseen_formats
#   unknown key -> KeyError naming it, model untouched; non-tensor values ignored (flat
#       dict and nested state_dict); checkpoint not modified .............. test_load_contract
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
        if have != want:
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
    make_r10 = lambda: timm.create_model("resnet10t", pretrained=False, num_classes=6)
    return [judge_load_case(make_r10, dict(CKPT_PLAIN), "plain resnet10t state_dict of the visible test"),
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
    src = timm.create_model("mobilenetv3_small_050", pretrained=False, num_classes=3)
    sd = {"module." + k: v.clone() for k, v in src.state_dict().items()}
    return [judge_load_case(lambda: timm.create_model("resnet10t", pretrained=False, num_classes=6),
                            {"module." + k: v for k, v in CKPT_PLAIN.items()}, "DDP state_dict of the visible test"),
            judge_load_case(lambda: timm.create_model("mobilenetv3_small_050", pretrained=False, num_classes=3), sd,
                            "DDP state_dict of a MobileNetV3")]


@probe_load_ddp.verdict
def _(got, ref):
    for i, (g, r) in enumerate(zip(got, ref)):
        with visible() if i == 0 else nullcontext():
            check_load_case(g, r, hint="strip the leading 'module.' that DistributedDataParallel adds")


@judge.probe("test_load_lightning")
def probe_load_lightning(seed):
    import os as _os
    import tempfile as _tempfile
    import timm
    torch.manual_seed(seed % 100003 + 52)
    src = E.tiny_mlp(5, 4, hidden=7)
    g = torch.Generator().manual_seed(seed % 100003)
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(torch.randn(8, 5, generator=g),
                                                                        torch.randint(0, 4, (8,), generator=g)), batch_size=8)
    with _tempfile.TemporaryDirectory() as d:
        real = E.lightning_checkpoint(src, loader, _os.path.join(d, "mlp.ckpt"))
    real["hyper_parameters"] = {"lr": 0.01, "note": "not a tensor"}
    return [judge_load_case(lambda: timm.create_model("resnet10t", pretrained=False, num_classes=6), CKPT_LIGHTNING,
                            "Lightning checkpoint of the visible test"),
            judge_load_case(lambda: E.tiny_mlp(5, 4, hidden=7), real, "real Lightning checkpoint of an MLP")]


@probe_load_lightning.verdict
def _(got, ref):
    for i, (g, r) in enumerate(zip(got, ref)):
        with visible() if i == 0 else nullcontext():
            check_load_case(g, r, hint="use checkpoint['state_dict'] when it is a dict, and strip the 'model.' prefix "
                                       "(the LightningModule's attribute name)")


@judge.probe("test_load_head_mismatch")
def probe_load_head(seed):
    import timm
    torch.manual_seed(seed % 100003 + 53)
    src = timm.create_model("convnext_atto", pretrained=False, num_classes=9, depths=(1, 1, 1, 1))
    sd = {k: v.clone() for k, v in src.state_dict().items()}
    return [judge_load_case(lambda: timm.create_model("resnet10t", pretrained=False, num_classes=2), dict(CKPT_PLAIN),
                            "6-class checkpoint in a 2-class resnet10t (visible test)"),
            judge_load_case(lambda: timm.create_model("convnext_atto", pretrained=False, num_classes=5,
                                                      depths=(1, 1, 1, 1)), sd, "9-class ConvNeXt into 5 classes")]


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
    vit = timm.create_model("vit_tiny_patch16_224", pretrained=False, num_classes=7, img_size=32, depth=2)
    vit_ckpt = {"epoch": 9, "state_dict": {"module.model." + k: v.clone() for k, v in vit.state_dict().items()}}
    mlp = E.tiny_mlp(6, 2, hidden=9)
    partial = {"module." + k: v.clone() for k, v in mlp.state_dict().items() if not k.startswith("2.")}
    make_bn = lambda: _nn.Sequential(_nn.Conv2d(2, 3, 3), _nn.BatchNorm2d(3), _nn.ReLU(), _nn.Conv2d(3, 3, 1), _nn.BatchNorm2d(3))
    bn = make_bn()
    with torch.no_grad():
        bn[1].running_var.uniform_(0.5, 2.0)
        bn[4].running_mean.uniform_(-1, 1)
    old_style = {"model." + k: v.clone() for k, v in bn.state_dict().items() if not k.endswith("num_batches_tracked")}
    return [judge_load_case(lambda: timm.create_model("resnet10t", pretrained=False, num_classes=6),
                            {"state_dict": {"model.module." + k: v for k, v in CKPT_PLAIN.items()}},
                            "Lightning checkpoint of a DDP model (visible test)"),
            judge_load_case(lambda: timm.create_model("vit_tiny_patch16_224", pretrained=False, num_classes=3,
                                                      img_size=32, depth=2), vit_ckpt, "DDP-in-Lightning ViT with a new head"),
            judge_load_case(lambda: E.tiny_mlp(6, 2, hidden=9), partial, "checkpoint without the last layer"),
            judge_load_case(make_bn, old_style, "checkpoint without BatchNorm's num_batches_tracked (a plain dict)")]


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

    make_r10 = lambda: timm.create_model("resnet10t", pretrained=False, num_classes=6)
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
    # the checkpoint is not modified (keys, values, identity of the nested dict)
    nested = {"module." + k: v for k, v in sd.items()}
    ckpt = {"state_dict": nested, "epoch": 2}
    keys_before, ids_before = list(nested), {k: id(v) for k, v in nested.items()}
    values_before = {k: v.clone() for k, v in nested.items()}
    judge_load_case(lambda: E.tiny_mlp(4, 3, hidden=6), ckpt, "unused")
    out["not_modified"] = {"same_nested": ckpt.get("state_dict") is nested, "keys": list(nested) == keys_before,
                           "top_keys": sorted(ckpt) == ["epoch", "state_dict"],
                           "tensors": all(id(nested.get(k)) == i for k, i in ids_before.items()),
                           "values": all(torch.equal(nested[k], values_before[k]) for k in values_before if k in nested)}
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
    nm = got["not_modified"]
    bad = [k for k, ok in nm.items() if ok is not True]
    C.check_true(bad == [], f"load_checkpoint_flexible modified the checkpoint it was given ({', '.join(bad)} changed)",
                 hint="build a new dict of cleaned keys; do not pop, rename or replace entries of the caller's checkpoint")


# --- Exercise 4.5 · LitClassifier ----------------------------------------------------------------------------
# clause -> test
#   __init__ builds E.tiny_mlp(in_features, num_classes) ............ every probe (weights are loaded into it)
#   hyperparameters in self.hparams and in checkpoints; load_from_checkpoint(path) alone
#       rebuilds hparams and weights .................................... test_lit_checkpoint
#   training_step: label-smoothed CE of self(x), logged train_loss, returned with its
#       graph, no backward ............................................. test_lit_training_step, test_lit_fit_accuracy
#   validation_step: val_loss = plain CE, val_acc = fraction ......... test_lit_logged_keys
#   predict_step: softmax probabilities of batch[0] (also through trainer.predict) .. test_lit_predict
#   configure_optimizers: over self.parameters(), lr = the lr argument ... test_lit_configure_optimizers
#   Trainer.fit on separable data reaches val_acc >= 0.9 .............. test_lit_fit_accuracy

@judge.shared
def judge_fit_lit(seed, epochs=5, dim=8, classes=3, lr=0.1, label_smoothing=0.0):
    """Train a fresh LitClassifier with a quiet CPU Trainer; return (module, trainer, X_val, y_val)."""
    import lightning as _L
    X, y = E.make_separable(480, dim=dim, num_classes=classes, seed=seed)
    tl = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(X[:320], y[:320]), batch_size=32, shuffle=True)
    vl = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(X[320:], y[320:]), batch_size=160)
    torch.manual_seed(seed)
    lit = LitClassifier(dim, classes, lr=lr, label_smoothing=label_smoothing)
    trainer = _L.Trainer(**E.trainer_kwargs(max_epochs=epochs))
    trainer.fit(lit, tl, vl)
    return lit, trainer, X[320:], y[320:]


@judge.shared
def judge_fixed_mlp_state(dim, classes, seed):
    """A deterministic state_dict for E.tiny_mlp(dim, classes) (hidden 32), from its own generator."""
    g = torch.Generator().manual_seed(seed)
    return {"0.weight": 0.5 * torch.randn(32, dim, generator=g), "0.bias": 0.1 * torch.randn(32, generator=g),
            "2.weight": 0.5 * torch.randn(classes, 32, generator=g), "2.bias": 0.1 * torch.randn(classes, generator=g)}


@judge.probe("test_lit_training_step")
def probe_lit_training_step(seed):
    import torch.nn.functional as _F
    g = torch.Generator().manual_seed(seed % 100003 + 60)
    cases = [(5, 4, 0.25, torch.randn(12, 5, generator=g), torch.randint(0, 4, (12,), generator=g)),
             (3, 2, 0.0, torch.randn(7, 3, generator=g), torch.randint(0, 2, (7,), generator=g))]
    states = [judge_fixed_mlp_state(d, k, seed % 1000 + i) for i, (d, k, _, _, _) in enumerate(cases)]
    torch.manual_seed(0)
    lit = LitClassifier(8, 3, label_smoothing=0.1)
    xv, yv = E.make_separable(16, 8, 3, seed=1)
    loss = lit.training_step((xv, yv), 0)
    with torch.no_grad():
        want = _F.cross_entropy(lit(xv), yv, label_smoothing=0.1)
    out = {"visible": {"loss": loss, "has_graph": getattr(loss, "grad_fn", None) is not None, "want": want,
                       "grads": [p.grad is not None for p in lit.parameters()]}, "cases": []}
    for (d, k, s, x, y), st in zip(cases, states):
        lit = LitClassifier(d, k, label_smoothing=s)
        lit.model.load_state_dict(st)
        loss = lit.training_step((x, y), 3)
        out["cases"].append({"ls": s, "loss": loss, "has_graph": getattr(loss, "grad_fn", None) is not None,
                             "grads": [p.grad is not None for p in lit.parameters()]})
    return out


@probe_lit_training_step.verdict
def _(got, ref):
    with visible():
        v = got["visible"]
        C.check_tensor(v["loss"], name="training_step's return value", shape=(),
                       hint="return the loss tensor: Lightning calls backward() on what training_step returns")
        C.check_true(v["has_graph"] is True, "the returned loss has no grad_fn: do not .item() or .detach() it")
        C.check_close(v["loss"], v["want"], name="training_step loss (label_smoothing=0.1)",
                      hint="mean cross-entropy of self(x) against y, with label_smoothing=self.hparams.label_smoothing")
        C.check_true(not any(v["grads"]), "after training_step the parameters already have .grad: training_step must "
                                          "not call backward(); Lightning calls it")
    for g, r in zip(got["cases"], ref["cases"]):
        C.check_tensor(g["loss"], name=f"training_step's return value (label_smoothing={r['ls']})", shape=())
        C.check_true(g["has_graph"] is True, "the returned loss has no grad_fn")
        C.check_close(g["loss"], r["loss"], name=f"training_step loss with label_smoothing={r['ls']}", rtol=1e-5, atol=1e-6,
                      hint="F.cross_entropy(self(x), y, label_smoothing=...) with the module's own label_smoothing")
        C.check_true(not any(g["grads"]), "training_step must not call backward()")


@judge.probe("test_lit_configure_optimizers")
def probe_lit_configure_optimizers(seed):
    def unwrap(opt):
        if type(opt) is dict:
            opt = opt.get("optimizer")
        if type(opt) in (list, tuple):
            opt = opt[0][0] if opt and type(opt[0]) in (list, tuple) else (opt[0] if opt else None)
        return opt

    out = []
    for d, k, lr in ((8, 3, 0.037), (4, 2, 0.0123), (6, 5, 0.2 + (seed % 7) / 100)):
        lit = LitClassifier(d, k, lr=lr)
        opt = unwrap(lit.configure_optimizers())
        if not isinstance(opt, torch.optim.Optimizer):
            out.append({"lr": lr, "type": type(opt).__name__, "ok_type": False})
            continue
        ids = sorted(id(p) for grp in opt.param_groups for p in grp["params"])
        out.append({"lr": lr, "type": type(opt).__name__, "ok_type": True,
                    "same_params": ids == sorted(id(p) for p in lit.parameters()),
                    "lrs": [float(grp["lr"]) for grp in opt.param_groups]})
    return out


@probe_lit_configure_optimizers.verdict
def _(got, ref):
    for i, g in enumerate(got):
        with visible() if i == 0 else nullcontext():
            C.check_true(g["ok_type"] is True, f"configure_optimizers() returned {g['type']}, not a torch.optim.Optimizer")
            C.check_true(g["same_params"] is True, "the optimizer must hold self.parameters(), each once")
            for lr in g["lrs"]:
                C.check_float(lr, g["lr"], name=f"optimizer lr (LitClassifier(lr={g['lr']}))",
                              hint="use the lr argument (self.hparams.lr)")


@judge.probe("test_lit_fit_accuracy")
def probe_lit_fit_accuracy(seed):
    out = []
    for s, kw in ((0, {}), (7 + seed % 50, dict(epochs=5, dim=6, classes=4))):
        lit, trainer, xv, yv = judge_fit_lit(seed=s, **kw)
        out.append({"seed": s, "acc": E.accuracy(lit, xv, yv)})
    return out


@probe_lit_fit_accuracy.verdict
def _(got, ref):
    for i, g in enumerate(got):
        with visible() if i == 0 else nullcontext():
            C.check_true(type(g["acc"]) is float and g["acc"] >= 0.9,
                         f"validation accuracy after 5 epochs (data seed {g['seed']}) is {g['acc']}, expected >= 0.9",
                         hint="training_step must return the loss (None means: skip this batch), and must not call backward()")


@judge.probe("test_lit_logged_keys")
def probe_lit_logged(seed):
    import torch.nn.functional as _F
    out = []
    for s, kw in ((2, dict(epochs=2)), (9 + seed % 40, dict(epochs=1, dim=5, classes=3, lr=0.05, label_smoothing=0.3))):
        lit, trainer, xv, yv = judge_fit_lit(seed=s, **kw)
        metrics = {str(k): float(v) for k, v in trainer.callback_metrics.items()}
        lit.eval()
        with torch.no_grad():
            logits = lit(xv)
        out.append({"seed": s, "metrics": metrics, "acc": float((logits.argmax(1) == yv).float().mean()),
                    "ce": float(_F.cross_entropy(logits, yv))})
    return out


@probe_lit_logged.verdict
def _(got, ref):
    for i, g in enumerate(got):
        with visible() if i == 0 else nullcontext():
            keys = sorted(g["metrics"])
            C.check_true(all(k in keys for k in ("train_loss", "val_loss", "val_acc")),
                         f"logged keys are {keys}; expected 'train_loss', 'val_loss' and 'val_acc'",
                         hint='self.log("val_acc", acc) in validation_step')
            C.check_float(g["metrics"]["val_acc"], g["acc"], name="logged val_acc", rel=1e-4, abs_tol=1e-4,
                          hint="log the fraction of correct predictions (0..1), not a percentage or a count")
            C.check_float(g["metrics"]["val_loss"], g["ce"], name="logged val_loss", rel=1e-4, abs_tol=1e-5,
                          hint="val_loss is the plain cross-entropy of self(x) against y, without label smoothing")


@judge.probe("test_lit_checkpoint")
def probe_lit_checkpoint(seed):
    import os as _os
    import tempfile as _tempfile
    import lightning as _L
    from lightning.pytorch.callbacks import ModelCheckpoint as _MC
    out = []
    with _tempfile.TemporaryDirectory() as d:
        lit, trainer, _, _ = judge_fit_lit(seed=3, epochs=1, dim=5, classes=4, lr=0.05, label_smoothing=0.2)
        path = _os.path.join(d, "lit.ckpt")
        trainer.save_checkpoint(path)
        back = LitClassifier.load_from_checkpoint(path)
        out.append({"hp": {k: back.hparams.get(k) for k in ("in_features", "num_classes", "lr", "label_smoothing")},
                    "before": {k: v.clone() for k, v in lit.state_dict().items()}, "after": dict(back.state_dict())})
        # a checkpoint written by the ModelCheckpoint callback, with other hyperparameters
        X, y = E.make_separable(200, dim=3, num_classes=2, seed=seed % 1000)
        tl = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(X[:160], y[:160]), batch_size=40)
        vl = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(X[160:], y[160:]), batch_size=40)
        torch.manual_seed(seed % 1000)
        lit = LitClassifier(3, 2, lr=0.02, label_smoothing=0.05)
        cb = _MC(dirpath=d, monitor="val_loss", mode="min", save_top_k=1, filename="best")
        trainer = _L.Trainer(**E.trainer_kwargs(max_epochs=1, enable_checkpointing=True, callbacks=[cb]))
        trainer.fit(lit, tl, vl)
        back = LitClassifier.load_from_checkpoint(cb.best_model_path)
        out.append({"hp": {k: back.hparams.get(k) for k in ("in_features", "num_classes", "lr", "label_smoothing")},
                    "before": {k: v.clone() for k, v in lit.state_dict().items()}, "after": dict(back.state_dict())})
    return out


@probe_lit_checkpoint.verdict
def _(got, ref):
    for i, (g, r) in enumerate(zip(got, ref)):
        with visible() if i == 0 else nullcontext():
            C.check_equal(g["hp"], r["hp"], name="hyperparameters of the module rebuilt by load_from_checkpoint",
                          hint="call self.save_hyperparameters() in __init__: load_from_checkpoint then passes them back")
            C.check_equal(sorted(g["after"]), sorted(g["before"]), name="state_dict keys of the reloaded module")
            for k, v in g["before"].items():
                C.check_close(g["after"][k], v, name=f"reloaded {k}", rtol=0, atol=0)


@judge.probe("test_lit_predict")
def probe_lit_predict(seed):
    import lightning as _L
    g = torch.Generator().manual_seed(seed % 100003 + 61)
    X = torch.randn(10, 5, generator=g)
    x1 = torch.randn(4, 5, generator=g)
    st = judge_fixed_mlp_state(5, 4, seed % 1000)
    torch.manual_seed(0)
    vis = LitClassifier(8, 3).eval()
    xv = torch.randn(6, 8)
    with torch.no_grad():
        p = vis.predict_step([xv], 0)
        want = torch.softmax(vis(xv), dim=1)
    out = {"visible": (p, want)}
    lit = LitClassifier(5, 4)
    lit.model.load_state_dict(st)
    lit.eval()
    with torch.no_grad():
        out["direct"] = lit.predict_step((x1, torch.zeros(4, dtype=torch.long)), 0)
    trainer = _L.Trainer(**E.trainer_kwargs(max_epochs=1))
    preds = trainer.predict(lit, torch.utils.data.DataLoader(torch.utils.data.TensorDataset(X), batch_size=4))
    out["trainer"] = list(preds) if isinstance(preds, list) else preds
    return out


@probe_lit_predict.verdict
def _(got, ref):
    with visible():
        p, want = got["visible"]
        C.check_tensor(p, name="predict_step([x], 0)", shape=(6, 3), dtype=torch.float32,
                       hint="return probabilities for every row of batch[0]")
        C.check_close(p, want, name="predicted probabilities", rtol=1e-5, atol=1e-6,
                      hint="softmax over the class dimension (dim=1) of self(batch[0])")
    C.check_close(got["direct"], ref["direct"], name="predict_step on an (x, y) batch", rtol=1e-5, atol=1e-6,
                  hint="use batch[0] whatever else the batch holds; return softmax(self(x), dim=1)")
    C.check_true(isinstance(got["trainer"], list) and len(got["trainer"]) == len(ref["trainer"]),
                 f"trainer.predict should return one result per batch ({len(ref['trainer'])} batches)")
    for i, (g, r) in enumerate(zip(got["trainer"], ref["trainer"])):
        C.check_close(g, r, name=f"trainer.predict, batch {i} (a DataLoader over TensorDataset(X))", rtol=1e-5, atol=1e-6,
                      hint="a TensorDataset(X) batch is [x]: predict_step must work with batch[0]")
