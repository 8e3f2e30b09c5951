"""Exercise 'make_optimizer' of 04_ecosystem: its hidden probes and verdicts (instructor side: never released).

Run by course.grading.judge.verdicts.load after ../../judge.py, in its namespace (the names defined there,
and in the exercises above this one, are in scope). Its mutants and alternatives are in the folders beside
this file.
"""

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


WHY['make_optimizer'] = "named_parameters() lists a shared parameter once and frozen ones are skipped; each trainable one gets a (weight decay, lr) key from timm's exemption rule and from whether it is, by identity, a parameter of get_classifier(), and each key becomes one AdamW group."
