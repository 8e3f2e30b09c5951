"""Exercise 'fine_tuner' of 04_ecosystem: its hidden probes and verdicts (instructor side: never released).

Run by course.grading.judge.verdicts.load after ../../judge.py, in its namespace (the names defined there,
and in the exercises above this one, are in scope). Its mutants and alternatives are in the folders beside
this file.
"""

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


WHY['fine_tuner'] = "save_hyperparameters() records every argument, so load_from_checkpoint can rerun __init__ alone; timm loads the file's weights into all but the new classifier. The mean/std come from the model's own data config, LocalMixup uses its own generator, and metrics use the reloaded model's float32 logits."
