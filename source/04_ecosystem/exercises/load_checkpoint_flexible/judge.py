"""Exercise 'load_checkpoint_flexible' of 04_ecosystem: its hidden probes and verdicts (instructor side: never released).

Run by course.grading.judge.verdicts.load after ../../judge.py, in its namespace (the names defined there,
and in the exercises above this one, are in scope). Its mutants and alternatives are in the folders beside
this file.
"""

# --- this exercise's own helpers (only its probes and verdicts use them; a @judge.shared one ships with
# every probe of the chapter, as the chapter's own do) ------------------------------------------------

def same_digest(have, want, rel=1e-4, abs_tol=1e-5):
    """Two entries of judge_state_digest: shape and dtype equal, sums close."""
    import math
    if type(have) not in (tuple, list) or len(have) != len(want):
        return False
    return (tuple(have[0]) == tuple(want[0]) and have[1] == want[1]
            and all(type(a) is float and math.isclose(a, b, rel_tol=rel, abs_tol=abs_tol) for a, b in zip(have[2:], want[2:])))


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


WHY['load_checkpoint_flexible'] = "Prefixes are stripped only while the key names no entry of the model, and every decision goes into a new dict first, so an unknown key raises KeyError before anything is copied and the checkpoint stays unchanged. copy_ into model.state_dict()'s tensors then writes into the model itself."
