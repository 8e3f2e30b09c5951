"""Exercise 'package_for_serving' of 03_torchscript: its hidden probes and verdicts (instructor side: never released).

Run by course.grading.judge.verdicts.load after ../../judge.py, in its namespace (the names defined there,
and in the exercises above this one, are in scope). Its mutants and alternatives are in the folders beside
this file.
"""

# --- Exercise 3.2 · package_for_serving (its own solution cell) -------------------------------------------------
# clause -> test (one probe, one AOTInductor compile of a small hidden model: its own time limit)
#   compiles `program` into the package file `path` (the file is there),
#   replacing a file already there, and the file works on its own ........... test_serving_package (an old file
#                                                                             is put at path first; a new process
#                                                                             loads path and runs it)
#   loads it and returns the loaded package, an AOTICompiledModel ........... test_serving_package (type)
#   called like the program (keywords), on every shape the program accepts ... test_serving_package (a new batch
#                                                                             size and length)
#   the weights are inside: training the model the program came from (the
#   program shares its weights) changes nothing ............................. test_serving_package
#   get_metadata() holds max_batch, max_length, num_labels as decimal strings,
#   read from the program (a hidden program: batch max 8, not the visible
#   64; a length max from the seed, 3 below the position table's rows; 2 to
#   5 labels; its last parameter is a temperature, not the head's bias) .... test_serving_package
#   (not caught: a contract computed once and cached across calls; catching
#   it takes a second AOTInductor compile per graded package, ~8 s)

# The reference run of a grading skips the compile (below): its record holds want, top, moved and call only, so
# the structure check leaves every other key, and call, to the verdict.
@judge.probe("test_serving_package", seconds=240,   # an AOTInductor compile: seconds, not milliseconds
             free=("call", "type", "is_package", "new", "file", "from_file", "after", "metadata"))
def probe_serving_package(seed):
    import os as _os
    import tempfile as _tempfile
    import torch as _t

    class _Temperature(_t.nn.Module):
        def __init__(self):
            super().__init__()
            self.t = _t.nn.Parameter(_t.ones(1))

        def forward(self, logits):
            return logits / self.t

    class _JudgeLogits(_t.nn.Module):
        """A program from elsewhere: its last parameter is a temperature (1.0), not the head's bias."""

        def __init__(self, inner):
            super().__init__()
            self.inner = inner
            self.post = _Temperature()                   # registered after inner: last in the state dict

        def forward(self, input_ids, attention_mask):
            return self.post(self.inner(input_ids=input_ids, attention_mask=attention_mask)["logits"])

    config, model = judge_text_setup(seed + 3, 12, 24)
    # The program serves shorter sequences than the model's position table holds: its own limit is the contract.
    top = config.max_position_embeddings - 3
    example = text_batch(config, 3, 6, seed=seed)
    new = text_batch(config, 5, top - 1, seed=seed + 7)          # another batch size and length than the example's
    want = judge_eval_logits(model, [example, new])
    model.eval()
    batch = _t.export.Dim("batch", min=1, max=8)      # below every length limit (9 to 21): a sorted pair fails
    length = _t.export.Dim("length", min=2, max=top)
    program = _t.export.export(_JudgeLogits(model), (), {"input_ids": example[0], "attention_mask": example[1]},
                               dynamic_shapes={"input_ids": {0: batch, 1: length},
                                               "attention_mask": {0: batch, 1: length}})   # shares model's weights
    targets = _t.randint(0, config.num_labels, (3,), generator=_t.Generator().manual_seed(seed))

    def train_model():                                           # training goes on after packaging
        opt = _t.optim.SGD(model.parameters(), lr=0.5)
        model.train()
        for _ in range(3):
            opt.zero_grad()
            logits = model(input_ids=example[0], attention_mask=example[1])["logits"]
            _t.nn.functional.cross_entropy(logits, targets).backward()
            opt.step()
        with _t.no_grad():
            return float((program.module()(input_ids=example[0], attention_mask=example[1]) - want[0]).abs().max())

    # The serving contract the package must carry: this program's batch (1..8) and length (2..top, three below
    # the position table's rows) maxima and its logits' width, as decimal strings. Known here from how the program
    # was built, so the reference run needs no compile to state it.
    contract = {"max_batch": "8", "max_length": str(top), "num_labels": str(config.num_labels)}
    got = {"want": want, "top": top, "contract": contract}
    if _os.environ.get("COURSE_JUDGE_REFERENCE_RUN") == "1":
        # The reference run of a grading: the verdict reads only want, top and moved from it, so the compile is
        # skipped there (the sweep runs this probe in full on the reference). Set by a student, it skips their
        # own call, which the verdict then fails.
        return {**got, "moved": train_model(), "call": {"ok": False, "error": "not called (reference run)"}}
    path = _os.path.join(_tempfile.mkdtemp(prefix="judge-package-"), f"served-{seed}.pt2")
    with open(path, "wb") as fh:                                 # an old file at path: it must be replaced
        fh.write(b"an old file, not this program's package\n")
    import torch._inductor.config as _inductor_config
    # One compile in a fresh sandbox: building Inductor's precompiled header first costs more than it saves, and
    # a pool of compile workers is not worth starting. Neither changes what is compiled.
    with _inductor_config.patch({"aot_inductor.precompile_headers": False, "compile_threads": 1}):
        rec = judge_attempt(lambda: package_for_serving(program, path))
    if not rec["ok"]:
        return {**got, "call": rec}
    served = rec["out"]
    got["type"] = f"{type(served).__module__}.{type(served).__qualname__}"
    try:
        from torch.export.pt2_archive._package import AOTICompiledModel as _Loaded
        got["is_package"] = isinstance(served, _Loaded)
    except ImportError:                                          # another torch: the class name decides
        got["is_package"] = type(served).__name__ == "AOTICompiledModel"
    got["call"] = {"ok": True, "out": None}

    def read_contract():
        meta = dict(served.get_metadata())
        return {key: (value[:64] if isinstance(value, str) else f"<a {type(value).__name__}>")
                for key, value in meta.items() if key in contract}
    got["metadata"] = judge_attempt(read_contract)
    with _t.no_grad():
        got["new"] = judge_attempt(lambda: served(input_ids=new[0], attention_mask=new[1]))
    got["file"] = _os.path.isfile(path)
    if got["file"]:
        got["from_file"] = judge_package_in_fresh_process(path, new)
    got["moved"] = train_model()
    with _t.no_grad():
        got["after"] = judge_attempt(lambda: served(input_ids=example[0], attention_mask=example[1]))
    for key in ("new", "after"):                                 # the wire carries tensors, not the student's types
        got[key] = judge_tensor_record(got[key])
    return got


@probe_serving_package.verdict
def _(got, ref):
    C.check_true(ref.get("moved") is not None and ref["moved"] > 1e-3,
                 "judge error: training did not move the program the package was compiled from")
    call = got.get("call", {})
    C.check_true(call.get("ok") is True, f"package_for_serving(program, path) raised {call.get('error')}",
                 hint="torch._inductor.aoti_compile_and_package(program, package_path=path), then load that file")
    C.check_true(got.get("file") is True, "after package_for_serving(program, path) there is no file at path",
                 hint="compile into the file you were given: package_path=path")
    C.check_true(got.get("is_package") is True,
                 f"package_for_serving returned a {got.get('type', '?')}, not the loaded AOTInductor package",
                 hint="return what torch._inductor.aoti_load_package(path) gives back (an AOTICompiledModel), "
                      "not the program or its module")
    meta = got.get("metadata", {})
    C.check_true(meta.get("ok") is True, f"the loaded package's get_metadata() raised {meta.get('error')}")
    have = meta.get("out")
    C.check_type(have, dict, "the package's contract entries")
    for key, want in ref["contract"].items():
        C.check_true(have.get(key) == want,
                     f"the package's metadata has {key}={have.get(key)!r}; the program it was compiled from says "
                     f"{want!r}" + (" (no such entry)" if key not in have else ""),
                     hint="read the contract from the program given (the ranges of its input's size symbols, the "
                          "width of its output), never from a model, a config or a constant, and store strings")
    label = f"batch 5, length {ref['top'] - 1}"
    C.check_close(_logits(got.get("from_file", {}), f"the package file at path, loaded in a new process, on {label}"),
                  ref["want"][1], name=f"the package file at path, loaded in a new process, on {label}",
                  rtol=1e-4, atol=1e-5,
                  hint="the file at path must be this program's package, weights included, replacing any old "
                       "file there: compile into path, then load path")
    C.check_close(_logits(got.get("new", {}), f"the loaded package on {label}"), ref["want"][1],
                  name=f"the loaded package on {label}", rtol=1e-4, atol=1e-5,
                  hint="the package must run every shape the program accepts, called with keywords")
    C.check_close(_logits(got.get("after", {}), "the loaded package after training the model"), ref["want"][0],
                  name="the loaded package after three optimizer steps on the model", rtol=1e-4, atol=1e-5,
                  hint="a package holds its own copy of the weights: return the package, not the program")


#: Why each reference solution is right: one line shown under the worked solution in a student's feedback once the
#: instructor releases solutions (grade-class --solutions), never before.


WHY['package_for_serving'] = "aoti_compile_and_package compiles the program and writes it, with its own copy of the weights, to the file at path, replacing what was there; aoti_load_package loads that file, so the returned package depends on neither the program nor the model. The contract comes from the program itself: the input_ids placeholder's fake tensor has symbolic sizes whose ranges range_constraints holds, the output node's fake tensor gives the logits' width, and aot_inductor.metadata stores the three strings in the package."
