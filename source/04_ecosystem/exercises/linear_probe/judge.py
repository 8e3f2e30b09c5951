"""Exercise 'linear_probe' of 04_ecosystem: its hidden probes and verdicts (instructor side: never released).

Run by course.grading.judge.verdicts.load after ../../judge.py, in its namespace (the names defined there,
and in the exercises above this one, are in scope). Its mutants and alternatives are in the folders beside
this file.
"""

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


WHY['linear_probe'] = "num_classes=0 drops the classifier, and forward_features + forward_head(pre_logits=True) pool exactly as that architecture's head does, its width from head_hidden_size or num_features. eval() calls train(False), so the overridden train() puts the backbone back in eval after every mode change."
