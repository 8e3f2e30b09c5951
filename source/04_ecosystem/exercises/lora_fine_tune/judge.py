"""Exercise 'lora_fine_tune' of 04_ecosystem: its hidden probes and verdicts (instructor side: never released).

Run by course.grading.judge.verdicts.load after ../../judge.py, in its namespace (the names defined there,
and in the exercises above this one, are in scope). Its mutants and alternatives are in the folders beside
this file.
"""

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


WHY['lora_fine_tune'] = "PEFT wraps each Linear whose name ends with a target, adds r*(in+out) values there and trains a full copy of the head; the optimizer sees only what requires grad, so the base never moves, and merging a deep copy leaves the adapter model and the caller's weights intact."
