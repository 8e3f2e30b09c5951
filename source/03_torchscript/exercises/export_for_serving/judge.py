"""Exercise 'export_for_serving' of 03_torchscript: its hidden probes and verdicts (instructor side: never released).

Run by course.grading.judge.verdicts.load after ../../judge.py, in its namespace (the names defined there,
and in the exercises above this one, are in scope). Its mutants and alternatives are in the folders beside
this file.
"""

# --- Exercise 3.2 · export_for_serving -----------------------------------------------------------------
# clause -> test
#   returns an ExportedProgram ............................................. every serving test
#   called with the keywords input_ids= / attention_mask= .................. every serving test (probes call it so)
#   returns the logits TENSOR (not the dict) ............................... test_serving_logits (type checked)
#   equal to the eval-mode model's logits (dropout off), padded masks ....... test_serving_logits
#   "the eval-mode model" is model.eval(): the hidden model of this cell also
#   drops out through F.dropout(..., training=self.training) (as BERT's
#   attention does), so switching only the nn.Dropout submodules fails ...... test_serving_logits
#   other model sizes (vocab, hidden, labels, max positions) ............... test_serving_logits, _shapes, _snapshot
#   "a dict, or a transformers ModelOutput": a real BertForSequenceClassification
#   (small config, offline, train mode as constructed) ..................... test_serving_logits
#   every batch 1..64 and length 2..config.max_position_embeddings ......... test_serving_shapes (a hidden max
#                                                                             above the visible 24: no hard-coding)
#   refuses a sequence longer than max_position_embeddings ................. test_serving_shapes
#   a snapshot: training the caller's model afterwards changes nothing ..... test_serving_snapshot
#   the caller's model keeps its modes, module by module (a frozen LayerNorm
#   inside a train-mode model) ............................................. test_serving_snapshot
# Budget: one export per probe for the hidden model, plus the visible example in test_serving_logits.

@judge.shared
def judge_text_setup(seed, min_positions, max_positions, functional_dropout=False):
    """A hidden TinyTextClassifier config and model (train mode), built before any student call.

    With functional_dropout, the model also drops out its logits through F.dropout(training=self.training),
    a dropout that no nn.Dropout submodule holds: only model.eval() switches it off; and its output has an
    entry before "logits" (the first value of the mapping is not the logits)."""
    import torch as _t
    g = _t.Generator().manual_seed(seed)
    pick = lambda lo, hi: int(_t.randint(lo, hi + 1, (1,), generator=g))
    config = TextConfig(vocab_size=pick(30, 70), hidden_size=pick(8, 20),
                        max_position_embeddings=pick(min_positions, max_positions), num_labels=pick(2, 5),
                        dropout=0.2)
    cls = TinyTextClassifier
    if functional_dropout:
        class FunctionalDropout(TinyTextClassifier):
            def forward(self, input_ids, attention_mask=None):
                logits = super().forward(input_ids=input_ids, attention_mask=attention_mask)["logits"]
                # another entry before "logits", as real models return (hidden states, pooled output...)
                return {"hidden_states": self.tokens(input_ids),
                        "logits": _t.nn.functional.dropout(logits, p=0.3, training=self.training)}
        cls = FunctionalDropout
    with _t.random.fork_rng():
        _t.manual_seed(seed)
        model = cls(config)
    return config, model


@judge.shared
def judge_bert_setup(seed):
    """A real transformers model, offline: BertForSequenceClassification from a small config (random weights,
    train mode as constructed; its attention dropout reads self.training), sizes drawn from the seed."""
    import torch as _t
    import logging as _logging
    _logging.getLogger("transformers").setLevel(_logging.ERROR)
    from transformers import BertConfig as _BertConfig, BertForSequenceClassification as _Bert
    g = _t.Generator().manual_seed(seed)
    pick = lambda lo, hi: int(_t.randint(lo, hi + 1, (1,), generator=g))
    heads = pick(1, 2)
    config = _BertConfig(vocab_size=pick(30, 70), hidden_size=8 * heads, num_hidden_layers=1,
                         num_attention_heads=heads, intermediate_size=pick(16, 32),
                         max_position_embeddings=pick(24, 36), num_labels=pick(2, 4),
                         hidden_dropout_prob=0.2, attention_probs_dropout_prob=0.2, attn_implementation="sdpa")
    with _t.random.fork_rng():
        _t.manual_seed(seed)
        model = _Bert(config)
    model.train()
    return config, model


@judge.shared
def judge_package_in_fresh_process(path, batch):
    """Load the package file at `path` in a new process, as a server would, and run it on `batch` (ids, mask) with
    keywords: {"ok": True, "out": tensor} or an error record. A crash stays in that process. The process is forked
    from a server that imported torch and nothing of this kernel (course.grading.run.fresh)."""
    import os as _os
    import tempfile as _tempfile
    import torch as _t
    from course.grading.run.fresh import run_package as _run_package
    folder = _tempfile.mkdtemp(prefix="judge-load-")
    inputs, outputs = _os.path.join(folder, "inputs.pt"), _os.path.join(folder, "outputs.pt")
    _t.save({"input_ids": batch[0], "attention_mask": batch[1]}, inputs)
    code, why = _run_package(path, inputs, outputs, timeout=180)
    if code is None:
        return {"ok": False, "error": f"a new process loading the package file {why}"}
    if code != 0 or not _os.path.isfile(outputs):
        return {"ok": False, "error": f"a new process could not load and run the file (exit code {code}): {why}"}
    out = _t.load(outputs)
    if not isinstance(out, _t.Tensor):
        return {"ok": True, "out": None, "type": "non-tensor"}
    return {"ok": True, "out": out}


@judge.shared
def judge_tensor_record(rec):
    """A judge_attempt record as the wire carries it: a tensor output stays, any other output becomes its type name."""
    import torch as _t
    if rec.get("ok") and not isinstance(rec["out"], _t.Tensor):
        return {"ok": True, "out": None, "type": type(rec["out"]).__name__}
    return rec


@judge.shared
def judge_logits_run(program, batches):
    """Run program.module() with keywords on each (ids, mask); one record per batch, with the output's type."""
    if not isinstance(program, torch.export.ExportedProgram):
        return [{"ok": False, "error": f"not an ExportedProgram but a {type(program).__name__}"} for _ in batches]
    prog = program.module()
    out = []
    with torch.no_grad():
        for ids, mask in batches:
            out.append(judge_tensor_record(judge_attempt(lambda ids=ids, mask=mask: prog(input_ids=ids,
                                                                                     attention_mask=mask))))
    return out


@judge.shared
def judge_eval_logits(model, batches):
    import copy as _copy
    ref = _copy.deepcopy(model).eval()
    with torch.no_grad():
        return [ref(input_ids=ids, attention_mask=mask)["logits"] for ids, mask in batches]


def _logits(rec, what):
    out = _out(rec, what)
    C.check_true(out is not None, f"{what} returned a {rec.get('type', 'non-tensor')}, not the logits tensor",
                 hint="a C++ caller receives tensors: export a wrapper whose forward returns the 'logits' entry")
    return out


@judge.probe("test_serving_logits")
def probe_serving_logits(seed):
    import torch as _t
    with _t.random.fork_rng():
        _t.manual_seed(0)
        vis_config = TextConfig()
        vis_model = TinyTextClassifier(vis_config)
    vis_batch = text_batch(vis_config, 3, 10, seed=0)
    config, model = judge_text_setup(seed, 24, 40, functional_dropout=True)   # at least the visible 24 positions
    example = text_batch(config, 4, 9, seed=seed)
    other = text_batch(config, 2, 9, seed=seed + 1)      # another batch of the example's length
    expect = {"visible": judge_eval_logits(vis_model, [vis_batch]),
              "hidden": judge_eval_logits(model, [example, other])}
    bert_config, bert = judge_bert_setup(seed + 4)       # a real transformers model: its output is a ModelOutput
    bert_example = text_batch(bert_config, 3, 7, seed=seed + 2)
    bert_other = text_batch(bert_config, 2, 7, seed=seed + 3)   # the example's length: lengths are _shapes' business
    expect["bert"] = judge_eval_logits(bert, [bert_example, bert_other])
    got = {"expect": expect}
    for key, m, ex, batches in (("visible", vis_model, vis_batch, [vis_batch]),
                                ("hidden", model, example, [example, other]),
                                ("bert", bert, bert_example, [bert_example, bert_other])):
        rec = judge_attempt(lambda m=m, ex=ex: export_for_serving(m, *ex))
        got[key] = judge_logits_run(rec["out"], batches) if rec["ok"] else [rec] * len(batches)
    return got


@probe_serving_logits.verdict
def _(got, ref):
    with visible():
        C.check_close(_logits(got["visible"][0], "program(input_ids=..., attention_mask=...)"),
                      ref["expect"]["visible"][0], name="program(...) on the example", rtol=1e-5, atol=1e-5,
                      hint="compare with the eval-mode model: is dropout still on?")
    for label, rec, want in zip(("the example", "another padded batch"), got["hidden"], ref["expect"]["hidden"]):
        C.check_close(_logits(rec, f"the program of a model with other sizes, on {label}"), want,
                      name=f"program(...) on {label}, another model size", rtol=1e-5, atol=1e-5,
                      hint="the eval-mode logits of this model, whatever its vocabulary, width and number of "
                           "labels; call .eval() on the model (or its copy): code that reads the module's own "
                           "self.training, such as F.dropout(..., training=self.training), ignores nn.Dropout's mode")
    for label, rec, want in zip(("an example", "another padded batch"), got["bert"], ref["expect"]["bert"]):
        C.check_close(_logits(rec, f"the program of a transformers BertForSequenceClassification, on {label}"), want,
                      name=f"program(...) of a transformers BERT (small config), on {label}", rtol=1e-5, atol=1e-5,
                      hint="a transformers model returns a ModelOutput: take its 'logits' entry; its attention "
                           "dropout reads self.training, so export the model in eval mode")


@judge.probe("test_serving_shapes")
def probe_serving_shapes(seed):
    import torch as _t
    config, model = judge_text_setup(seed + 1, 28, 44)  # above the visible 24: a hard-coded maximum fails
    top = config.max_position_embeddings
    example = text_batch(config, 3, 8, seed=seed)
    batches = [text_batch(config, b, length, seed=seed + b) for b, length in
               ((1, 2), (7, top // 2 + 1), (64, top), (2, 25))]
    expect = judge_eval_logits(model, batches)
    too_long = text_batch(config, 2, top + 1, seed=seed + 99)
    rec = judge_attempt(lambda: export_for_serving(model, *example))
    if not rec["ok"]:
        return {"expect": expect, "runs": [rec] * len(batches), "too_long": rec, "top": top}
    runs = judge_logits_run(rec["out"], batches + [too_long])
    return {"expect": expect, "runs": runs[:-1], "too_long": runs[-1], "top": top}


@probe_serving_shapes.verdict
def _(got, ref):
    top = ref["top"]
    sizes = ((1, 2), (7, top // 2 + 1), (64, top), (2, 25))
    for (b, length), rec, want in zip(sizes, got["runs"], ref["expect"]):
        C.check_close(_logits(rec, f"the program on batch {b}, length {length} (max_position_embeddings {top})"), want,
                      name=f"batch {b}, length {length}", rtol=1e-5, atol=1e-5,
                      hint="both dimensions of both inputs dynamic (the same Dim objects), the length's maximum "
                           "read from model.config.max_position_embeddings")
    C.check_true(got["too_long"].get("ok") is False,
                 f"the program accepted a sequence of {top + 1} tokens, one more than max_position_embeddings",
                 hint="the position table has max_position_embeddings rows: the program must refuse longer input")


@judge.probe("test_serving_snapshot")
def probe_serving_snapshot(seed):
    import torch as _t
    config, model = judge_text_setup(seed + 2, 24, 40)
    example = text_batch(config, 4, 11, seed=seed)
    later = text_batch(config, 3, 11, seed=seed + 5)     # the example's length: this cell tests the snapshot only
    targets = _t.randint(0, config.num_labels, (4,), generator=_t.Generator().manual_seed(seed))
    want = judge_eval_logits(model, [example, later])
    model.norm.eval()                              # frozen, as in fine-tuning: the caller's modes are mixed
    before = [m.training for m in model.modules()]
    rec = judge_attempt(lambda: export_for_serving(model, *example))
    modes = {"before": before, "after": [m.training for m in model.modules()]}
    if not rec["ok"]:
        return {"want": want, "after": [rec, rec], "moved": None, "modes": modes}
    opt = _t.optim.SGD(model.parameters(), lr=0.5)
    model.train()
    for _ in range(3):                             # training goes on after the export
        opt.zero_grad()
        logits = model(input_ids=example[0], attention_mask=example[1])["logits"]
        _t.nn.functional.cross_entropy(logits, targets).backward()
        opt.step()
    now = judge_eval_logits(model, [example, later])
    moved = max(float((a - b).abs().max()) for a, b in zip(now, want))
    return {"want": want, "after": judge_logits_run(rec["out"], [example, later]), "moved": moved, "modes": modes}


@probe_serving_snapshot.verdict
def _(got, ref):
    C.check_true(ref["moved"] is not None and ref["moved"] > 1e-3,
                 "judge error: training did not move the reference model")
    C.check_true(ref["modes"]["after"] == ref["modes"]["before"], "judge error: the reference changed the modes")
    C.check_type(got["modes"], dict, "the modes record")
    flags = got["modes"].get("after")
    C.check_true(flags == ref["modes"]["before"],
                 "the caller's model came back with other train/eval modes than it had (a frozen submodule in a "
                 f"train-mode model): {flags} instead of {ref['modes']['before']}",
                 hint="switch a copy to eval mode, never the caller's model: its modes are the caller's to set")
    for label, rec, want in zip(("the example", "another batch"), got["after"], ref["want"]):
        C.check_close(_logits(rec, f"the program after training the model, on {label}"), want,
                      name=f"program(...) on {label} after three optimizer steps on the model", rtol=1e-5, atol=1e-5,
                      hint="the program shares the model's weights (section 1.2.1): export a deep copy")


WHY['export_for_serving'] = "The wrapper's forward(input_ids, attention_mask) returns just the logits tensor of an eval-mode deepcopy (a snapshot without dropout). Giving both inputs the same batch and length Dim objects says their shapes match, and the length's max from model.config makes longer inputs fail."
