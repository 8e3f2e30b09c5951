"""Hidden tests of Chapter 5 (its first notebook), judged outside the student's kernel (instructor side: never released).

Each grade cell of 05_engineering_traps.ipynb has one probe here (it runs with
the notebook's names, in the student's sandbox and in the reference worker)
and one verdict (it runs in the judge, on the plain data both sent back).
``got`` is the student's data, ``ref`` the reference solution's; every
expectation that does not come from the student's code is read from ``ref``.
Probes build their inputs from the seed before the first call into student
code; multi-rank probes use ``P.launch`` (forkserver on Linux, spawn elsewhere; the
student's function travels to the ranks by value, with cloudpickle), with the
smallest sizes that still show the mistake.
"""
import torch

from course import checks as C
from course.data import fingerprint
from course.grading.judge import Judge, visible

judge = Judge()


# --- helpers shipped with every probe (they run in the notebook's namespace) -------------------------

@judge.shared
def _j5_tmpdir():
    import tempfile
    from pathlib import Path as _P
    return _P(tempfile.mkdtemp(prefix="ch5-judge-"))


@judge.shared
def _j5_decode_all(samples):
    """Reference RGB decodes of every file, by torchvision (read from ``ref`` in the verdicts)."""
    return [D.read_tv(p) for p, _ in samples]


@judge.shared
def _j5_items(ds):
    """Every (image, label) of a dataset, plus the labels' type names."""
    out = []
    for i in range(len(ds)):
        img, lab = ds[i]
        out.append((img, lab, type(lab).__name__))
    return out


@judge.shared
def _j5_modes(model):
    return [(name, m.training) for name, m in model.named_modules()]


# --- verdict-side helpers ------------------------------------------------------------------------------

COLOUR_HINT = ("every image must come out as (3, H, W) uint8 RGB: a grayscale JPEG holds 1 channel and a CMYK "
               "JPEG 4, so ask the decoder for RGB (ImageReadMode.RGB, or PIL's .convert('RGB'))")


def check_images(items, refs, label, hint=None):
    """Each returned image is (3, H, W) uint8, is one of the folder's images, and matches its reference decode."""
    C.check_type(items, list, f"the items of the dataset {label}")
    C.check_equal(len(items), len(refs), f"len(dataset) {label}", hint="one sample per JPEG file")
    h, w = refs[0].shape[1:]
    for i, (img, _, _) in enumerate(items):
        C.check_tensor(img, f"ds[{i}][0] {label}", dtype=torch.uint8, hint=hint or COLOUR_HINT)
        C.check_tensor(img, f"ds[{i}][0] {label}", shape=(3, h, w), hint=hint or COLOUR_HINT)
        k = fingerprint(img)
        C.check_true(0 <= k < len(refs), f"ds[{i}][0] {label} is not one of the images in the folder",
                     hint="decode the file at this index; do not transform the pixels")
        C.check_close(img, refs[k], f"pixels of ds[{i}][0] {label}", atol=12, rtol=0,
                      hint="decode the file in __getitem__, in RGB mode")


# --- Exercise 5.1 · JpegFolderDataset -------------------------------------------------------------------
# clause -> test
#   self.classes: sorted names of the subfolders of root .............. test_jpeg_dataset_labels
#   anything in root that is not a folder is skipped (README.txt,
#     .DS_Store, a stray .jpg): neither class nor sample .............. test_jpeg_dataset_labels (+ pixels,
#                                                                        epoch, pickle: stray files everywhere)
#   label = index of the image's folder in classes, a Python int ...... test_jpeg_dataset_labels
#   __init__ stores only paths and labels (no images, no bytes) ....... test_jpeg_dataset_pickle_small
#   ... and the size does not grow (also after a pass over every item) test_jpeg_dataset_pickle_small
#   __getitem__ decodes lazily: uint8 (3, H, W) RGB ................... test_jpeg_dataset_pixels
#   ... whatever the colour mode: RGB, grayscale, CMYK ................ test_jpeg_dataset_pixels
#   every image exactly once (through a 2-worker DataLoader) .......... test_jpeg_dataset_epoch

@judge.probe("test_jpeg_dataset_pixels")
def probe_jpeg_pixels(seed):
    import shutil
    root = _j5_tmpdir()
    try:
        h, w = 14 + seed % 7, 18 + seed % 5
        _, samples = D.make_test_folder(root / "a", n_classes=3, per_class=3, size=(h, w), seed=11 + seed % 97,
                                        modes={1: "L", 4: "CMYK", 6: "L", 8: "CMYK"}, stray=("notes.txt",))
        _, samples_b = D.make_test_folder(root / "b", n_classes=2, per_class=2, size=(w, h), seed=12 + seed % 89,
                                          modes={0: "CMYK", 3: "L"})
        refs = {"visible": _j5_decode_all(EX51_SAMPLES), "a": _j5_decode_all(samples), "b": _j5_decode_all(samples_b)}
        got = {"visible": _j5_items(JpegFolderDataset(EX51_ROOT)), "a": _j5_items(JpegFolderDataset(root / "a")),
               "b": _j5_items(JpegFolderDataset(str(root / "b")))}
        return {"refs": refs, "got": got}
    finally:
        shutil.rmtree(root, ignore_errors=True)


@probe_jpeg_pixels.verdict
def _(got, ref):
    with visible():
        check_images(got["got"]["visible"], ref["refs"]["visible"], "(visible folder, one grayscale file)")
    check_images(got["got"]["a"], ref["refs"]["a"], "(a folder with grayscale and CMYK JPEGs)")
    check_images(got["got"]["b"], ref["refs"]["b"], "(a folder given as a str path, CMYK and grayscale)")


@judge.probe("test_jpeg_dataset_labels")
def probe_jpeg_labels(seed):
    import shutil
    root = _j5_tmpdir()
    try:
        classes, samples = D.make_test_folder(root, n_classes=4, per_class=2, size=(16, 20), seed=12 + seed % 97,
                                              modes={2: "L"}, stray=(".DS_Store", "README.md", "cover.jpg"))
        expected = {"classes": classes, "labels": [lab for _, lab in samples],
                    "visible_classes": list(EX51_CLASSES), "visible_labels": [lab for _, lab in EX51_SAMPLES]}
        ds_v = JpegFolderDataset(EX51_ROOT)
        ds = JpegFolderDataset(root)
        got = {"visible_classes": list(ds_v.classes), "visible": _j5_items(ds_v),
               "classes": list(ds.classes), "items": _j5_items(ds)}
        return {"expected": expected, "got": got}
    finally:
        shutil.rmtree(root, ignore_errors=True)


def check_labels(items, labels, label, check_len=True):
    if check_len:
        C.check_equal(len(items), len(labels), f"len(dataset) {label}", hint="one sample per JPEG file")
    for i, (img, lab, type_name) in enumerate(items):
        C.check_true(type_name == "int", f"label of ds[{i}] {label} is a {type_name}, expected a Python int",
                     hint="use the index in self.classes (enumerate gives ints)")
        k = fingerprint(img) if isinstance(img, torch.Tensor) else -1
        C.check_true(0 <= k < len(labels), f"ds[{i}][0] {label} is not one of the images in the folder")
        C.check_equal(lab, labels[k], f"label of ds[{i}] {label}",
                      hint="label = index of the image's folder in sorted(class names)")


@probe_jpeg_labels.verdict
def _(got, ref):
    exp = ref["expected"]
    g = got["got"]
    with visible():
        C.check_equal(g["visible_classes"], exp["visible_classes"], "dataset.classes (visible folder)",
                      hint="sort the folder names: os.listdir / Path.iterdir return them in file-system order")
        check_labels(g["visible"], exp["visible_labels"], "(visible folder)", check_len=False)
    C.check_equal(g["classes"], exp["classes"], "dataset.classes (4 class folders; .DS_Store, README.md and "
                  "cover.jpg directly in the root)",
                  hint="sorted names of the entries that are folders (Path.is_dir()): a file in the root is not a class")
    check_labels(g["items"], exp["labels"], "(4 classes, stray files in the root)")


@judge.probe("test_jpeg_dataset_epoch")
def probe_jpeg_epoch(seed):
    import shutil
    root = _j5_tmpdir()
    try:
        _, samples = D.make_test_folder(root, n_classes=2, per_class=5, size=(12, 16), seed=13 + seed % 97,
                                        modes={3: "L"}, stray=("labels.csv",))
        n = len(samples)
        visible_imgs = [img for img, _ in DataLoader(JpegFolderDataset(EX51_ROOT), batch_size=None, shuffle=True,
                                                     **EPOCH_LOADER_KW)]
        gen = torch.Generator().manual_seed(seed)
        imgs = [img for img, _ in DataLoader(JpegFolderDataset(root), batch_size=None, shuffle=True, generator=gen,
                                             **EPOCH_LOADER_KW)]
        return {"n_visible": len(EX51_SAMPLES), "n": n, "visible": visible_imgs, "hidden": imgs}
    finally:
        shutil.rmtree(root, ignore_errors=True)


@probe_jpeg_epoch.verdict
def _(got, ref):
    for key, n, label in (("visible", ref["n_visible"], "visible folder"), ("hidden", ref["n"], "10 images")):
        with visible() if key == "visible" else __import__("contextlib").nullcontext():
            seen = [fingerprint(t) if isinstance(t, torch.Tensor) else -1 for t in got[key]]
            C.check_equal(sorted(seen), list(range(n)), f"images seen in one shuffled 2-worker epoch ({label}, by index)",
                          hint="each file must be one sample: no duplicates, none missing")


@judge.probe("test_jpeg_dataset_pickle_small")
def probe_jpeg_pickle(seed):
    import pickle as _pickle
    import shutil
    root = _j5_tmpdir()
    try:
        for tag, hw in (("s", (8, 12)), ("b", (120, 160))):
            D.make_test_folder(root / tag, n_classes=2, per_class=4, size=hw, seed=14 + seed % 97,
                               stray=("README.txt",))
        datasets = {"visible": JpegFolderDataset(EX51_ROOT), "s": JpegFolderDataset(root / "s"),
                    "b": JpegFolderDataset(root / "b")}
        sizes = {k: len(_pickle.dumps(ds)) for k, ds in datasets.items()}
        # after one pass over every item: a dataset that keeps what it decoded grows here
        for i in range(len(datasets["b"])):
            datasets["b"][i]
        sizes["b after a pass"] = len(_pickle.dumps(datasets["b"]))
        # what the pickled copy still holds (a worker gets this copy): its length and its last item's label
        copies = {k: _pickle.loads(_pickle.dumps(ds)) for k, ds in datasets.items()}
        return {"sizes": sizes, "n_visible": len(EX51_SAMPLES),
                "lengths": {k: len(c) for k, c in copies.items()},
                "last_labels": {k: int(c[len(c) - 1][1]) if len(c) else None for k, c in copies.items()}}
    finally:
        shutil.rmtree(root, ignore_errors=True)


@probe_jpeg_pickle.verdict
def _(got, ref):
    s = got["sizes"]
    for k in ("visible", "s", "b"):
        C.check_true(type(s.get(k)) is int, f"pickled size {k}: {C.describe(s.get(k))}")
    with visible():
        C.check_true(s["visible"] < 300 * ref["n_visible"] + 4000,
                     f"the pickled dataset is {s['visible']} bytes for {ref['n_visible']} images: too big for paths only",
                     hint="store paths and labels; decode in __getitem__")
    C.check_true(s["b"] - s["s"] < 1000,
                 f"pickled size grows with the image size: {s['s']} bytes for 8x12 images, {s['b']} bytes for 120x160",
                 hint="decoded images (or file bytes) are stored in the dataset; keep only paths and labels")
    C.check_true(s["b"] < 300 * 8 + 4000, f"the pickled dataset is {s['b']} bytes for 8 images",
                 hint="store paths and labels only")
    after = s.get("b after a pass")
    C.check_true(type(after) is int and after - s["b"] < 1000,
                 f"after reading every item once, the pickled dataset grew from {s['b']} to {C.describe(after)} bytes",
                 hint="__getitem__ decodes and returns; it keeps nothing (a worker would pickle the cache)")
    for k in ("visible", "s", "b"):
        C.check_equal(got["lengths"][k], ref["lengths"][k], f"len() of the dataset after pickle.loads(pickle.dumps(...)) "
                      f"({k})", hint="a worker gets this copy: it must still list every image")
        C.check_equal(got["last_labels"][k], ref["last_labels"][k], f"label of the last item of the unpickled copy ({k})")


# --- Exercise 5.2a · train_and_record (a hook that leaks) -------------------------------------------------
# clause -> test
#   zero_grad, forward, CE, backward, step per batch ..................... test_record_values (parameters;
#                                                                           the models hold stale gradients)
#   record layer's output in every forward, before its step, via a hook,
#     layer nested inside the model ...................................... test_record_values (residual block,
#                                                                            conv features (N, C, L))
#   (losses as Python floats, activations concatenated along dim 0) ..... test_record_values
#   activations without autograd history ................................. test_record_no_graph
#   no graph outlives its step (5 vs 40 batches), none after return ..... test_record_no_graph
#   hook gone after return and after an exception; exception reaches
#     the caller; other hooks on layer kept ............................. test_record_hooks
#   (every cell also checks the returned values against the reference)

# --- Exercise 5.2b · evaluate ---------------------------------------------------------------------------------
# clause -> test
#   mean CE per target value: sum of reduction="sum" / sum of y.numel(),
#     batches of different sizes; (N,) and (N, d1, ...) targets; float test_evaluate_value
#   in evaluation mode (Dropout off, BN running stats, not updated) ..... test_evaluate_value, test_evaluate_modes
#   no autograd graph; no .grad touched ................................. test_evaluate_no_graph
#   every submodule's mode restored, mixed modes, even if the loop raises test_evaluate_modes

@judge.shared
def _j5_record_models(seed):
    """(label, model, layer, batches, optimizer kwargs) for Exercise 5.2a: layers nested in blocks, float64."""
    import torch.nn as _nn

    class Residual(_nn.Module):
        def __init__(self):
            super().__init__()
            self.inp = _nn.Linear(6, 8)
            self.block = _nn.Sequential(_nn.Linear(8, 8), _nn.ReLU(), _nn.Linear(8, 8))
            self.head = _nn.Linear(8, 3)

        def forward(self, x):
            h = torch.tanh(self.inp(x))
            return self.head(h + self.block(h))

    class ConvNet(_nn.Module):
        def __init__(self):
            super().__init__()
            self.features = _nn.Sequential(_nn.Conv1d(2, 4, 3, padding=1), _nn.Tanh())
            self.head = _nn.Linear(4, 3)

        def forward(self, x):
            return self.head(self.features(x).mean(-1))

    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed % 100000 + 71)
    res = Residual().double()
    conv = ConvNet().double()
    res_batches = [(torch.randn(n, 6, generator=g, dtype=torch.float64), torch.randint(0, 3, (n,), generator=g))
                   for n in (5, 5, 2)]
    conv_batches = [(torch.randn(n, 2, 7, generator=g, dtype=torch.float64), torch.randint(0, 3, (n,), generator=g))
                    for n in (3, 4)]
    return [("a ReLU inside a residual block, momentum 0.9", res, res.block[1], res_batches,
             {"lr": 0.1, "momentum": 0.9}),
            ("a Tanh inside a conv feature block (N, C, L outputs)", conv, conv.features[1], conv_batches,
             {"lr": 0.2})]


@judge.probe("test_record_values")
def probe_record_values(seed):
    m = make_mlp(0)
    visible = train_and_record(m, L.make_batches(4, seed=1), torch.optim.SGD(m.parameters(), lr=0.1), m[1])
    cases = []
    for label, model, layer, batches, kw in _j5_record_models(seed):
        # gradients left from earlier work: zero_grad comes first in every step, so they never reach a step
        sum(p.sum() for p in model.parameters()).backward()
        out = train_and_record(model, batches, torch.optim.SGD(model.parameters(), **kw), layer)
        cases.append({"label": label, "out": out, "params": [p.detach().clone() for p in model.parameters()]})
    return {"visible": visible, "cases": cases}


def check_record(out, want, label, rtol=1e-9, atol=1e-12):
    C.check_type(out, (tuple, list), f"train_and_record(...) ({label})", hint="return (losses, activations)")
    C.check_equal(len(out), 2, f"len(train_and_record(...)) ({label})", hint="return (losses, activations)")
    losses, acts = out
    C.check_type(losses, list, f"losses ({label})")
    C.check_equal(len(losses), len(want[0]), f"number of losses ({label})", hint="one per batch")
    for i, (v, w) in enumerate(zip(losses, want[0])):
        C.check_true(type(v) is float, f"losses[{i}] ({label}) is {C.describe(v)}, expected a Python float",
                     hint="append loss.item()")
        C.check_float(v, w, f"losses[{i}] ({label})", rel=rtol, abs_tol=atol,
                      hint="zero_grad, forward, cross_entropy, backward, step, once per batch")
    C.check_tensor(acts, f"activations ({label})", shape=tuple(want[1].shape), dtype=want[1].dtype,
                   hint="every forward's output of `layer`, concatenated along dimension 0")
    C.check_close(acts, want[1], f"activations ({label})", rtol=rtol, atol=atol,
                  hint="record `layer`'s output in a forward hook, as computed in that batch's forward")


@probe_record_values.verdict
def _(got, ref):
    with visible():
        check_record(got["visible"], ref["visible"], "visible: make_mlp(0), the Tanh", rtol=1e-5, atol=1e-6)
    for g, r in zip(got["cases"], ref["cases"]):
        check_record(g["out"], r["out"], r["label"])
        for k, (p, q) in enumerate(zip(g["params"], r["params"])):
            C.check_close(p, q, f"parameter {k} after the epoch ({r['label']})", rtol=1e-9, atol=1e-12,
                          hint="one optimizer step per batch; the hook must not change what the model computes")


@judge.probe("test_record_no_graph")
def probe_record_no_graph(seed):
    m = make_mlp(2)
    opt = torch.optim.SGD(m.parameters(), lr=0.1)
    vis = L.run_probed(train_and_record, m, L.make_batches(5, seed=2), opt, m[1], optimizer=opt)
    runs = {}
    for nb in (5, 40):
        label, model, layer, _, kw = _j5_record_models(seed)[0]
        opt = torch.optim.SGD(model.parameters(), **kw)
        g = torch.Generator().manual_seed(seed + nb)
        batches = [(torch.randn(4, 6, generator=g, dtype=torch.float64), torch.randint(0, 3, (4,), generator=g))
                   for _ in range(nb)]
        run = L.run_probed(train_and_record, model, batches, opt, layer, optimizer=opt)
        runs[nb] = {"nodes": run["nodes"], "final": run["final_nodes"], "result": run["result"]}
    return {"visible": {"nodes": vis["nodes"], "final": vis["final_nodes"], "result": vis["result"]}, "runs": runs}


def check_no_history(out, label):
    acts = out[1] if isinstance(out, (tuple, list)) and len(out) == 2 else None
    C.check_tensor(acts, f"activations ({label})", hint="return (losses, activations): a tensor")
    C.check_true(acts.grad_fn is None and not acts.requires_grad, f"the activations ({label}) carry autograd history",
                 hint="store output.detach() in the hook")


@probe_record_no_graph.verdict
def _(got, ref):
    with visible():
        check_record(got["visible"]["result"], ref["visible"]["result"], "visible: make_mlp(2)", rtol=1e-5, atol=1e-6)
        C.check_equal(got["visible"]["final"], 0, "graph nodes still reachable after train_and_record returned")
        check_no_history(got["visible"]["result"], "visible")
    for nb in (5, 40):
        g, r = got["runs"][nb], ref["runs"][nb]
        check_record(g["result"], r["result"], f"{nb} batches")
        check_no_history(g["result"], f"{nb} batches")
        C.check_equal(len(g["nodes"]), len(r["nodes"]), f"optimizer steps for {nb} batches")
        C.check_equal(g["final"], 0, f"graph nodes reachable after train_and_record returned ({nb} batches)",
                      hint="neither the losses nor the recorded outputs may hold a graph")
        C.check_true(max(g["nodes"]) == min(g["nodes"]),
                     f"the graph alive at each optimizer step changes ({nb} batches): {g['nodes'][:8]} ...",
                     hint="a stored hook output keeps the graph before the layer: store output.detach()")
    p5, p40 = max(got["runs"][5]["nodes"]), max(got["runs"][40]["nodes"])
    C.check_true(p40 <= p5, f"the live graph grows with the number of batches: {p5} nodes for 5, {p40} for 40",
                 hint="something keeps a tensor with history from every step (a hook output, a loss)")


@judge.probe("test_record_hooks")
def probe_record_hooks(seed):
    def hook_ids(mod):
        return list(mod._forward_hooks)

    out = {}
    m = make_mlp(3)
    seen = []
    theirs = m[1].register_forward_hook(lambda mod, inp, o: seen.append(1))
    before = hook_ids(m[1])
    train_and_record(m, L.make_batches(2, seed=3), torch.optim.SGD(m.parameters(), lr=0.1), m[1])
    out["visible_after"] = hook_ids(m[1]) == before
    try:
        train_and_record(m, FailingLoader(L.make_batches(2, seed=4)), torch.optim.SGD(m.parameters(), lr=0.1), m[1])
        out["visible_raised"] = None
    except RuntimeError as err:
        out["visible_raised"] = str(err)
    out["visible_after_raise"] = hook_ids(m[1]) == before
    out["visible_seen"] = len(seen)
    theirs.remove()
    label, model, layer, batches, kw = _j5_record_models(seed)[1]
    mine = []
    theirs = layer.register_forward_hook(lambda mod, inp, o: mine.append(o.shape[0]))
    pre = layer.register_forward_pre_hook(lambda mod, inp: None)
    before = (hook_ids(layer), list(layer._forward_pre_hooks))
    first = train_and_record(model, batches, torch.optim.SGD(model.parameters(), **kw), layer)
    out["after"] = (hook_ids(layer), list(layer._forward_pre_hooks)) == before
    second = train_and_record(model, batches, torch.optim.SGD(model.parameters(), **kw), layer)
    out["second_rows"] = tuple(second[1].shape) if isinstance(second, (tuple, list)) and len(second) == 2 \
        and isinstance(second[1], torch.Tensor) else None
    out["first"] = first
    n_before = len(mine)
    model(batches[0][0])   # a forward after the call: only the other hook may see it
    out["theirs_after_call"] = len(mine) - n_before
    try:
        train_and_record(model, FailingLoader(batches[:1]), torch.optim.SGD(model.parameters(), **kw), layer)
        out["raised"] = None
    except RuntimeError as err:
        out["raised"] = str(err)
    out["after_raise"] = (hook_ids(layer), list(layer._forward_pre_hooks)) == before
    theirs.remove()
    pre.remove()
    return out


@probe_record_hooks.verdict
def _(got, ref):
    with visible():
        C.check_true(got["visible_after"] is True, "the layer's forward hooks changed after train_and_record returned",
                     hint="remove the handle register_forward_hook gave you, and only that one")
        C.check_equal(got["visible_raised"], ref["visible_raised"], "the exception the loop raised, as the caller sees it",
                      hint="let the exception propagate (try/finally, no except)")
        C.check_true(got["visible_after_raise"] is True, "the layer's forward hooks changed after an exception",
                     hint="remove your hook in a finally: block")
        C.check_equal(got["visible_seen"], ref["visible_seen"], "forwards seen by the other hook")
    check_record(got["first"], ref["first"], "a conv model whose layer has other hooks")
    C.check_true(got["after"] is True, "after train_and_record returned, the layer's forward (pre-)hooks are not "
                 "the ones it had before", hint="remove exactly your own handle; leave other hooks alone")
    C.check_equal(got["second_rows"], ref["second_rows"], "shape of the activations of a second call",
                  hint="a hook left from the first call would record twice per forward")
    C.check_equal(got["theirs_after_call"], ref["theirs_after_call"],
                  "forwards the other hook saw after train_and_record returned",
                  hint="other hooks on the layer must keep working")
    C.check_equal(got["raised"], ref["raised"], "the exception the loop raised (conv model), as the caller sees it")
    C.check_true(got["after_raise"] is True, "after an exception in the loop, the layer's hooks are not the ones it had",
                 hint="remove your hook in a finally: block")


@judge.probe("test_evaluate_value")
def probe_eval_value(seed):
    m = make_net(0)
    visible_value = evaluate(m, L.make_batches(3, seed=4))
    g = torch.Generator().manual_seed(seed)
    batches = [(torch.randn(bs, 6, generator=g, dtype=torch.float64), torch.randint(0, 3, (bs,), generator=g))
               for bs in (7, 7, 3)]
    m = make_net(9, torch.float64, p=0.9)
    rm_before = (m[1].running_mean.clone(), m[1].running_var.clone(), int(m[1].num_batches_tracked))
    first = evaluate(m, batches)
    second = evaluate(m, batches)
    loader = DataLoader(TensorDataset(torch.cat([x for x, _ in batches]), torch.cat([y for _, y in batches])),
                        batch_size=5)
    m2 = make_net(10, torch.float64, p=0.5)
    via_loader = evaluate(m2, loader)
    _g = torch.Generator().manual_seed(8)
    tag_batches = [(torch.randn(n, 6, 5, generator=_g), torch.randint(0, 3, (n, 5), generator=_g)) for n in (4, 2)]
    visible_tagger = evaluate(make_tagger(1), tag_batches)
    tagger_batches = [(torch.randn(n, 6, length, generator=g, dtype=torch.float64),
                       torch.randint(0, 3, (n, length), generator=g)) for n, length in ((3, 4), (5, 2), (1, 6))]
    tagger = evaluate(make_tagger(11, torch.float64, p=0.7), tagger_batches)
    torch.manual_seed(seed % 10000 + 5)
    seg = nn.Sequential(nn.Conv2d(2, 4, 1), nn.BatchNorm2d(4), nn.Dropout(0.5), nn.Conv2d(4, 3, 1)).double().train()
    seg_batches = [(torch.randn(n, 2, 3, 2, generator=g, dtype=torch.float64),
                    torch.randint(0, 3, (n, 3, 2), generator=g)) for n in (2, 3)]
    segment = evaluate(seg, seg_batches)
    return {"visible": visible_value, "first": first, "second": second, "rm_before": rm_before,
            "rm_after": (m[1].running_mean.clone(), m[1].running_var.clone(), int(m[1].num_batches_tracked)),
            "loader": via_loader, "visible_tagger": visible_tagger, "tagger": tagger, "segment": segment}


@probe_eval_value.verdict
def _(got, ref):
    hint = "model.eval() for the loop (Dropout off, BatchNorm on its running statistics); sum over samples / count"
    with visible():
        C.check_float(got["visible"], ref["visible"], "evaluate(make_net(0), batches)", rel=1e-5, abs_tol=1e-6, hint=hint)
    C.check_float(got["first"], ref["first"], "evaluate(...) on float64 batches of 7, 7 and 3 rows", rel=1e-9,
                  abs_tol=1e-12, hint="mean over samples, not the mean of batch means (the last batch is smaller); "
                                      "and in eval mode")
    C.check_float(got["second"], ref["second"], "a second evaluate(...) of the same model", rel=1e-9, abs_tol=1e-12,
                  hint="the same model on the same data must give the same value: no Dropout, no BatchNorm update")
    for k, name in enumerate(("running_mean", "running_var")):
        C.check_close(got["rm_after"][k], ref["rm_before"][k], f"BatchNorm {name} after evaluate",
                      hint="a training-mode forward updates BatchNorm's running statistics: use model.eval()")
    C.check_equal(got["rm_after"][2], ref["rm_before"][2], "BatchNorm num_batches_tracked after evaluate",
                  hint="model.eval() before the loop")
    C.check_float(got["loader"], ref["loader"], "evaluate(...) over a DataLoader with batch_size=5", rel=1e-9,
                  abs_tol=1e-12, hint=hint)
    per_position = "divide by the number of target values (the sum of y.numel()), not by the number of rows"
    with visible():
        C.check_float(got["visible_tagger"], ref["visible_tagger"], "evaluate(make_tagger(1), batches with (N, 5) "
                      "targets)", rel=1e-5, abs_tol=1e-6, hint=per_position)
    C.check_float(got["tagger"], ref["tagger"], "evaluate(...) of a float64 tagger, (N, L) targets, batches of 3, 5 and 1 "
                  "sequences of lengths 4, 2 and 6",
                  rel=1e-9, abs_tol=1e-12, hint=per_position)
    C.check_float(got["segment"], ref["segment"], "evaluate(...) of a segmentation model, (N, 3, 2) targets",
                  rel=1e-9, abs_tol=1e-12, hint=per_position)


@judge.probe("test_evaluate_no_graph")
def probe_eval_no_graph(seed):
    m = make_mlp(0)
    visible_saved = L.run_probed(evaluate, m, L.make_batches(5, seed=5), model=m)["saved_packed"]
    rows = []
    for nb in (2, 20):
        m = make_mlp(10 + nb)
        run = L.run_probed(evaluate, m, L.make_batches(nb, seed=60 + nb + seed % 100), model=m)
        rows.append({"nb": nb, "saved": run["saved_packed"], "final": run["final_nodes"],
                     "grads_none": all(p.grad is None for p in m.parameters()), "value": run["result"]})
    m = make_net(4)
    g = torch.Generator().manual_seed(seed)
    stale = [torch.randn(p.shape, generator=g) for p in m.parameters()]
    for p, s in zip(m.parameters(), stale):
        p.grad = s.clone()
    run = L.run_probed(evaluate, m, L.make_batches(3, seed=seed % 100), model=m)
    return {"visible": visible_saved, "rows": rows, "bn_saved": run["saved_packed"], "stale": stale,
            "grads_after": [None if p.grad is None else p.grad.clone() for p in m.parameters()]}


@probe_eval_no_graph.verdict
def _(got, ref):
    with visible():
        C.check_equal(got["visible"], 0, "tensors saved for backward during evaluate",
                      hint="wrap the loop in `with torch.no_grad():` (or torch.inference_mode())")
    for row, want in zip(got["rows"], ref["rows"]):
        C.check_float(row["value"], want["value"], f"evaluate(...) of an MLP over {row['nb']} batches", rel=1e-5,
                      abs_tol=1e-6, hint="the mean cross-entropy per target value, in eval mode")
        C.check_equal(row["saved"], 0, f"tensors saved for backward during evaluate ({row['nb']} batches)",
                      hint="no graph at all: torch.no_grad() around the whole loop")
        C.check_equal(row["final"], 0, f"graph nodes reachable after evaluate returned ({row['nb']} batches)")
        C.check_true(row["grads_none"] is True, f"evaluate set .grad on the parameters ({row['nb']} batches)",
                     hint="evaluate must not call backward")
    C.check_equal(got["bn_saved"], 0, "tensors saved for backward while evaluating a model with BatchNorm and Dropout")
    for k, (g, s) in enumerate(zip(got["grads_after"], ref["stale"])):
        C.check_true(g is not None, f"evaluate cleared the gradient of parameter {k}",
                     hint="evaluate must leave .grad alone (no zero_grad, no backward)")
        C.check_close(g, s, f"gradient of parameter {k} after evaluate", hint="evaluate must leave .grad alone")


@judge.probe("test_evaluate_modes")
def probe_eval_modes(seed):
    cases = {}
    for key, mode in (("train", True), ("eval", False)):
        m = make_net(1).train(mode)
        before = _j5_modes(m)
        evaluate(m, L.make_batches(2, seed=6))
        cases[key] = {"before": before, "after": _j5_modes(m)}
    m = make_net(2 + seed % 50)
    m[1].eval()  # a frozen BatchNorm inside a model that is training
    before = _j5_modes(m)
    seen = []
    hooks = [mod.register_forward_pre_hook(lambda mod, inp: seen.append(mod.training)) for mod in m.modules()]
    try:
        evaluate(m, L.make_batches(3, seed=7))
    finally:
        for h in hooks:
            h.remove()
    cases["mixed"] = {"before": before, "after": _j5_modes(m), "during": sorted(set(seen))}

    def broken_loader():
        for i, batch in enumerate(L.make_batches(4, seed=8)):
            if i == 2:
                raise ValueError("the loader broke")
            yield batch

    m = make_net(3)
    m[3].eval()
    before = _j5_modes(m)
    try:
        evaluate(m, broken_loader())
        raised = None
    except ValueError as err:
        raised = str(err)
    cases["raising"] = {"before": before, "after": _j5_modes(m), "raised": raised}
    return cases


@probe_eval_modes.verdict
def _(got, ref):
    for key, label in (("train", "a model in train mode"), ("eval", "a model in eval mode")):
        with visible():
            C.check_equal(sorted({t for _, t in got[key]["after"]}), sorted({t for _, t in ref[key]["before"]}),
                          f"the modules' training flags after evaluate on {label}",
                          hint="remember the mode before model.eval(), and restore it before returning")
    C.check_equal(got["mixed"]["during"], [False], "the modules' training flags seen by forward during evaluate",
                  hint="every module in eval() during the loop: model.eval()")
    C.check_equal(got["mixed"]["after"], ref["mixed"]["before"],
                  "every module's training flag after evaluate, for a training model with a frozen BatchNorm in eval()",
                  hint="model.train() after the loop puts the frozen BatchNorm into training mode: "
                       "restore each module's own flag")
    C.check_equal(got["raising"]["raised"], ref["raising"]["raised"],
                  "the exception raised by evaluate when the loader raises",
                  hint="let the loader's exception reach the caller (do not swallow it)")
    C.check_equal(got["raising"]["after"], ref["raising"]["before"],
                  "every module's training flag after evaluate, when the loader raised mid-way",
                  hint="restore the modes in a finally: block")


# --- Exercise 5.2c · tbptt_train --------------------------------------------------------------------------
# clause -> test
#   state: a tensor (TinyRNN) or a tuple (TinyLSTM) .................... all three (LSTM cases)
#   chunks of chunk_len, last shorter, chunk_len >= T ................... test_tbptt_losses
#   start from state if given, else init_state ......................... test_tbptt_state
#   zero_grad, mean of step MSEs, backward, step, loss.item() ........... test_tbptt_losses
#   gradients within a chunk, not across (every tensor detached) ........ test_tbptt_losses, test_tbptt_graph_constant
#   no gradient into the state passed in ................................ test_tbptt_state
#   returns (losses, final state detached, same structure) .............. test_tbptt_state
#   continuation: two calls == one call ................................. test_tbptt_state
#   sequence not modified ............................................... test_tbptt_state

@judge.probe("test_tbptt_losses")
def probe_tbptt_losses(seed):
    torch.manual_seed(0)
    rnn = L.TinyRNN(n_in=3, n_hidden=8)
    vis = tbptt_train(rnn, torch.randn(11, 2, 3), 4, torch.optim.SGD(rnn.parameters(), lr=0.0))
    specs = [("TinyRNN", 20, 6, "sgd"), ("TinyRNN", 9, 3, "sgd"), ("TinyRNN", 5, 8, "sgd"),
             ("TinyLSTM", 17, 5, "sgd"), ("TinyLSTM", 12, 4, "adam")]
    cases = []
    for j, (kind, T, cl, opt_name) in enumerate(specs):
        torch.manual_seed(seed % 10000 + 57 + j)
        model = getattr(L, kind)(n_in=3, n_hidden=6).double()
        seq = torch.randn(T + 1, 2, 3, dtype=torch.float64)
        opt = (torch.optim.SGD(model.parameters(), lr=0.3) if opt_name == "sgd"
               else torch.optim.Adam(model.parameters(), lr=1e-2))
        out = tbptt_train(model, seq, cl, opt)
        cases.append({"label": f"{kind}, T = {T}, chunk_len = {cl}",
                      "losses": out[0] if isinstance(out, tuple) and len(out) == 2 else out})
    return {"visible": vis[0] if isinstance(vis, tuple) and len(vis) == 2 else vis, "cases": cases}


def check_chunk_losses(g, r, label, rel, abs_tol=1e-12):
    C.check_type(g, list, f"losses ({label})", hint="return (losses, state), losses a list of floats")
    C.check_equal(len(g), len(r), f"number of chunks ({label})",
                  hint="range(0, T, chunk_len): the last chunk may be shorter, and chunk_len >= T is one chunk")
    for i, (v, w) in enumerate(zip(g, r)):
        C.check_float(v, w, f"loss of chunk {i} ({label})", rel=rel, abs_tol=abs_tol,
                      hint="detach the state once per chunk (every tensor of it), not at every step; "
                           "chunk loss = mean of the step MSEs")


@probe_tbptt_losses.verdict
def _(got, ref):
    with visible():
        check_chunk_losses(got["visible"], ref["visible"], "visible: TinyRNN, T = 10, chunk_len = 4, lr = 0", 1e-5, 1e-7)
    for g, r in zip(got["cases"], ref["cases"]):
        check_chunk_losses(g["losses"], r["losses"], r["label"], 1e-8)


@judge.probe("test_tbptt_graph_constant")
def probe_tbptt_graph(seed):
    torch.manual_seed(1)
    rnn = L.TinyRNN(n_in=3, n_hidden=8)
    opt = torch.optim.SGD(rnn.parameters(), lr=0.1)
    visible_nodes = L.run_probed(tbptt_train, rnn, torch.randn(17, 2, 3), 4, opt, optimizer=opt)["nodes"]
    rows = []
    for j, (kind, T, cl) in enumerate((("TinyLSTM", 30, 5), ("TinyRNN", 23, 5), ("TinyLSTM", 14, 3))):
        torch.manual_seed(seed % 10000 + 59 + j)
        model = getattr(L, kind)(n_in=2, n_hidden=5)
        opt = torch.optim.SGD(model.parameters(), lr=0.05)
        seq = torch.randn(T + 1, 3, 2)
        rows.append({"label": f"{kind}, T = {T}, chunk_len = {cl}", "full_chunks": T // cl,
                     "nodes": L.run_probed(tbptt_train, model, seq, cl, opt, optimizer=opt)["nodes"]})
    return {"visible": visible_nodes, "rows": rows}


def check_constant(nodes, n_steps, full, label):
    C.check_equal(len(nodes), n_steps, f"optimizer steps ({label})", hint="one optimizer.step() per chunk")
    head = nodes[:full]
    C.check_true(max(head) == min(head),
                 f"graph nodes alive at each optimizer step change from chunk to chunk ({label}): {nodes}",
                 hint="detach the whole state between chunks (an LSTM carries h and c) so each chunk's graph starts fresh")


@probe_tbptt_graph.verdict
def _(got, ref):
    with visible():
        check_constant(got["visible"], len(ref["visible"]), len(ref["visible"]), "visible: TinyRNN, T = 16, chunk_len = 4")
    for g, r in zip(got["rows"], ref["rows"]):
        check_constant(g["nodes"], len(r["nodes"]), r["full_chunks"], r["label"])


@judge.probe("test_tbptt_state")
def probe_tbptt_state(seed):
    def describe_state(s):
        if isinstance(s, torch.Tensor):
            return {"kind": "tensor", "tensors": [s.detach().clone()], "grad_fn": [s.grad_fn is not None]}
        if isinstance(s, tuple):
            return {"kind": f"tuple of {len(s)}", "tensors": [t.detach().clone() if isinstance(t, torch.Tensor) else None
                                                              for t in s],
                    "grad_fn": [getattr(t, "grad_fn", None) is not None for t in s]}
        return {"kind": type(s).__name__, "tensors": [], "grad_fn": []}

    def call(model, seq, cl, state=None):
        opt = torch.optim.SGD(model.parameters(), lr=0.0)
        out = tbptt_train(model, seq, cl, opt) if state is None else tbptt_train(model, seq, cl, opt, state=state)
        if not (isinstance(out, tuple) and len(out) == 2):
            return {"losses": None, "state": describe_state(None)}
        return {"losses": out[0], "state": describe_state(out[1]), "raw": out[1]}

    torch.manual_seed(2)
    rnn = L.TinyRNN(n_in=3, n_hidden=8)
    vis = call(rnn, torch.randn(13, 2, 3), 5)
    vis.pop("raw", None)
    torch.manual_seed(seed % 10000 + 61)
    lstm = L.TinyLSTM(n_in=3, n_hidden=6).double()
    seq = torch.randn(19, 2, 3, dtype=torch.float64)   # T = 18
    seq_copy = seq.clone()
    g = torch.Generator().manual_seed(seed)
    h0 = (torch.randn(2, 6, generator=g, dtype=torch.float64), torch.randn(2, 6, generator=g, dtype=torch.float64))
    h0_leaf = (h0[0].clone().requires_grad_(True), h0[1].clone().requires_grad_(True))
    whole = call(lstm, seq, 4)
    first = call(lstm, seq[:9], 4)                       # a = 8, a multiple of chunk_len
    second = call(lstm, seq[8:], 4, state=first.pop("raw", None))
    given = call(lstm, seq, 4, state=h0_leaf)
    for d in (whole, given, second):
        d.pop("raw", None)
    return {"visible": vis, "whole": whole, "first": first, "second": second, "given": given,
            "seq_changed": not torch.equal(seq, seq_copy),
            "h0_grads": [t.grad is not None and bool(t.grad.abs().sum() > 0) for t in h0_leaf]}


def check_state(g, r, label, rtol=1e-6, atol=1e-8):
    C.check_true(g["losses"] is not None, f"tbptt_train(...) ({label}) did not return a (losses, state) pair",
                 hint="return losses, state")
    C.check_equal(g["state"]["kind"], r["state"]["kind"], f"structure of the returned state ({label})",
                  hint="return the state as the model gives it: a tensor for TinyRNN, a tuple (h, c) for TinyLSTM")
    for k, (has_fn, t, want) in enumerate(zip(g["state"]["grad_fn"], g["state"]["tensors"], r["state"]["tensors"])):
        C.check_true(has_fn is False, f"tensor {k} of the returned state still has a grad_fn ({label})",
                     hint="detach the state you return: it would keep the last chunk's graph alive")
        C.check_close(t, want, f"tensor {k} of the returned state ({label})", rtol=rtol, atol=atol,
                      hint="the state after the last step of the last chunk")


@probe_tbptt_state.verdict
def _(got, ref):
    with visible():
        check_state(got["visible"], ref["visible"], "visible: TinyRNN, lr = 0", rtol=1e-5, atol=1e-6)
    check_state(got["whole"], ref["whole"], "TinyLSTM, T = 18, chunk_len = 4")
    check_state(got["first"], ref["first"], "TinyLSTM, first 8 steps")
    check_state(got["second"], ref["second"], "TinyLSTM, steps 8 to 18, continuing from the first call's state")
    both = (got["first"]["losses"] or []) + (got["second"]["losses"] or [])
    C.check_equal(len(both), len(ref["whole"]["losses"]), "number of chunks over the two calls")
    for i, (v, w) in enumerate(zip(both, ref["whole"]["losses"])):
        C.check_float(v, w, f"loss of chunk {i}, over two calls that pass the state on", rel=1e-8, abs_tol=1e-12,
                      hint="start from the `state` argument when it is given (instead of init_state)")
    check_state(got["given"], ref["given"], "TinyLSTM started from a given random state")
    for i, (v, w) in enumerate(zip(got["given"]["losses"] or [], ref["given"]["losses"])):
        C.check_float(v, w, f"loss of chunk {i}, starting from a given state", rel=1e-8, abs_tol=1e-12,
                      hint="start from the `state` argument when it is given")
    C.check_equal(got["h0_grads"], [False, False], "gradient reached the state passed in (h0, c0 have a .grad)",
                  hint="detach the incoming state too: gradients stay inside each chunk")
    C.check_equal(got["seq_changed"], False, "sequence modified by tbptt_train", hint="do not write into `sequence`")


# --- Exercise 5.3 · train_mixed (GradScaler with accumulation and clipping) --------------------------------
# clause -> test
#   groups of accum_steps, in order; last group shorter; accum_steps=1;
#     accum_steps >= len(micro_batches): one group ..................... test_mixed_values (+ calls: sizes 3,3,1 / 2 / 1)
#   F.cross_entropy(model(x), y); micro-batches of different sizes ...... test_mixed_values
#   backward of scaled loss / actual group size (the group mean) ......... test_mixed_values (last group of 1,
#                                                                           one group of 4 uneven micro-batches)
#   one unscale_, one step, one update per group, none per micro-batch . test_mixed_calls (a spy on the real
#                                                                           GradScaler and optimizer; order too);
#                                                                           test_mixed_values (a scale that doubles
#                                                                           at every update: a per-micro-batch
#                                                                           update mixes scales)
#   clip the total 2-norm of the unscaled grads to max_norm as
#     clip_grad_norm_ does; inf clips nothing ............................ test_mixed_clip (binding 0.1 and 0.3;
#                                                                           1e3 never reached: a clip of scaled
#                                                                           gradients still bites; 0.15 on groups of
#                                                                           3: the bound is on the group's mean
#                                                                           gradient); values use inf
#   a group with inf/NaN gradients changes no parameter, the scale backs
#     off, training goes on ............................................... test_mixed_overflow (first, middle
#                                                                           and single-micro-batch groups; SGD with
#                                                                           momentum, Adam; growing scale)
#   gradients cleared after every group, clear at return ................ test_mixed_calls (grads_clear),
#                                                                           test_mixed_values (stale grads would
#                                                                           add into the next group)
#   one Python float per group: mean of unscaled micro-batch losses ..... test_mixed_values, test_mixed_overflow
#   no autocast inside (float64 models checked against the float64
#     reference at rtol 1e-9) ............................................. every cell; test_mixed_calls (a pre-hook
#                                                                           on the model sees no autocast region)
# Expected values are the reference solution's, run on the same float64 inputs with a real GradScaler("cpu"): the
# scale is a power of two, so scaling and unscaling are exact and the reference equals plain float64 training.

@judge.shared
def _j5_mixed_run(seed, spec, spy=False):
    """Build one case from its spec, run train_mixed on it; plain data back (losses, parameters, calls, scale)."""
    name, kind, d, rows, accum, opt_kind, lr, max_norm, scaler_kw, poison = spec
    g = torch.Generator().manual_seed(seed)
    micro = [(torch.randn(n, d, generator=g, dtype=torch.float64), torch.randint(0, 3, (n,), generator=g))
             for n in rows]
    torch.manual_seed(seed + 1)
    if kind == "linear":
        model = nn.Linear(d, 3).double()
    else:
        model = nn.Sequential(nn.Linear(d, 8), nn.Tanh(), nn.Linear(8, 3)).double()
    if poison is not None:   # entries +-1e307 and the least likely class: scaled by >= 2**6 the gradient is inf
        bad_x = 1e307 * torch.sign(torch.randn(rows[poison], d, generator=g, dtype=torch.float64))
        with torch.no_grad():
            micro[poison] = (bad_x, model(bad_x).argmin(dim=1))
    if opt_kind == "adam":
        optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    else:
        optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9 if opt_kind == "sgd_momentum" else 0.0)
    scaler = torch.amp.GradScaler("cpu", **scaler_kw)
    log = []
    autocast_seen = []     # whether an autocast region was active while the model ran: the caller decides precision
    model.register_forward_pre_hook(lambda module, args: autocast_seen.append(
        torch.is_autocast_enabled("cpu") or torch.is_autocast_enabled("cuda")))
    if spy:
        class _Spy:
            def __init__(self, inner, tag):
                self._inner, self._tag = inner, tag

            def __getattr__(self, attr_name):
                attr = getattr(self._inner, attr_name)
                if attr_name not in ("scale", "unscale_", "step", "update", "zero_grad"):
                    return attr

                def call(*args, **kwargs):
                    log.append(f"{self._tag}.{attr_name}")
                    return attr(*[a._inner if isinstance(a, _Spy) else a for a in args], **kwargs)
                return call
        scaler_arg, opt_arg = _Spy(scaler, "scaler"), _Spy(optimizer, "optimizer")
    else:
        scaler_arg, opt_arg = scaler, optimizer
    losses = train_mixed(model, micro, opt_arg, scaler_arg, accum, max_norm)
    if isinstance(losses, (list, tuple)):
        losses = [v.detach() if torch.is_tensor(v) else v for v in losses]
    else:
        losses = repr(type(losses).__name__)
    sizes = [len(rows[i:i + accum]) for i in range(0, len(rows), accum)]
    return {"name": name, "losses": losses, "params": [p.detach().clone() for p in model.parameters()],
            "log": log, "scale": float(scaler.get_scale()), "sizes": sizes,
            "grads_clear": all(p.grad is None or not bool(p.grad.any()) for p in model.parameters()),
            "autocast": any(autocast_seen)}


@judge.shared
def _j5_mixed_cases(which):
    """The hidden cases of one grade cell: (name, model, d, rows per micro-batch, accum_steps, optimizer, lr,
    max_norm, GradScaler kwargs, index of an overflowing micro-batch or None)."""
    inf = float("inf")
    fast = {"init_scale": 2.0 ** 8, "growth_interval": 1}
    return {
        "values": [
            ("7 micro-batches, accum_steps=3 (last group of 1), SGD momentum 0.9, the scale doubling at every update",
             "linear", 5, [4] * 7, 3, "sgd_momentum", 0.3, inf, fast, None),
            ("an MLP, 3 micro-batches, accum_steps=1, Adam", "mlp", 5, [4, 4, 4], 1, "adam", 0.05, inf, {}, None),
            ("an MLP, micro-batches of 2, 5, 3 and 4 rows, accum_steps=6 (one group)", "mlp", 4, [2, 5, 3, 4], 6,
             "sgd", 0.5, inf, {}, None),
            ("5 micro-batches of 2 rows, accum_steps=2", "linear", 3, [2] * 5, 2, "sgd", 0.4, inf, {}, None)],
        "clip": [
            ("an MLP, 4 micro-batches, accum_steps=1, max_norm=0.1, SGD momentum 0.9", "mlp", 5, [3] * 4, 1,
             "sgd_momentum", 0.2, 0.1, {}, None),
            ("micro-batches of 2, 6 and 4 rows, accum_steps=1, max_norm=0.3, init_scale=2**12", "linear", 6, [2, 6, 4],
             1, "sgd", 0.5, 0.3, {"init_scale": 2.0 ** 12}, None),
            ("3 micro-batches, accum_steps=1, max_norm=1000 (never reached)", "linear", 4, [3] * 3, 1, "sgd", 0.5,
             1000.0, {}, None),
            ("an MLP, 6 micro-batches, accum_steps=3, max_norm=0.15 (the bound is on the group's mean gradient)",
             "mlp", 5, [3] * 6, 3, "sgd", 0.3, 0.15, {}, None)],
        "calls": [
            ("7 micro-batches, accum_steps=3", "linear", 5, [3] * 7, 3, "sgd", 0.3, inf, {}, None),
            ("an MLP, 2 micro-batches, accum_steps=4 (one group)", "mlp", 4, [3, 3], 4, "sgd_momentum", 0.2, 1.0, {},
             None),
            ("3 micro-batches, accum_steps=1, Adam", "linear", 4, [2, 3, 4], 1, "adam", 0.05, inf, {}, None)],
        "overflow": [
            ("6 micro-batches, accum_steps=2, micro-batch 0 overflows, SGD momentum 0.9", "linear", 5, [3] * 6, 2,
             "sgd_momentum", 0.3, inf, {}, 0),
            ("7 micro-batches, accum_steps=3, micro-batch 4 overflows (middle group), Adam, the scale doubling at "
             "every update", "linear", 6, [3] * 7, 3, "adam", 0.05, inf, fast, 4),
            ("3 micro-batches, accum_steps=1, micro-batch 1 overflows, max_norm=0.5", "linear", 4, [4] * 3, 1, "sgd",
             0.5, 0.5, {}, 1)],
    }[which]


def check_mixed_values(g, r, params=True):
    label = r["name"]
    C.check_type(g["losses"], list, f"train_mixed(...) ({label})", hint="return a list of Python floats")
    C.check_equal(len(g["losses"]), len(r["losses"]), f"number of group losses ({label})",
                  hint="one loss per group: the last group may be shorter than accum_steps")
    for i, (gv, rv) in enumerate(zip(g["losses"], r["losses"])):
        C.check_float(gv, rv, f"group loss {i} ({label})", rel=1e-9, abs_tol=1e-12,
                      hint="the mean of the group's unscaled micro-batch losses, as a Python float")
    if params:
        for k, (gp, rp) in enumerate(zip(g["params"], r["params"])):
            C.check_close(gp, rp, f"parameter {k} after training ({label})", rtol=1e-9, atol=1e-12,
                          hint="backpropagate scaler.scale(loss / size of the group); unscale_, step, update and "
                               "zero_grad once per group")


@judge.probe("test_mixed_values")
def probe_mixed_values(seed):
    return {"cases": [_j5_mixed_run(seed + 7 * i, spec) for i, spec in enumerate(_j5_mixed_cases("values"))]}


@probe_mixed_values.verdict
def _(got, ref):
    for g, r in zip(got["cases"], ref["cases"]):
        check_mixed_values(g, r)


@judge.probe("test_mixed_clip")
def probe_mixed_clip(seed):
    return {"cases": [_j5_mixed_run(seed + 11 * i, spec) for i, spec in enumerate(_j5_mixed_cases("clip"))]}


@probe_mixed_clip.verdict
def _(got, ref):
    for g, r in zip(got["cases"], ref["cases"]):
        for k, (gp, rp) in enumerate(zip(g["params"], r["params"])):
            C.check_close(gp, rp, f"parameter {k} after training ({r['name']})", rtol=1e-9, atol=1e-12,
                          hint="clip only once the scaler has unscaled the gradients: before, they are scale times too "
                               "large, and max_norm bounds the true gradients")


def check_mixed_calls(g, r):
    label = r["name"]
    calls = [c for c in g["log"] if c != "optimizer.zero_grad"]
    want = []
    for k in r["sizes"]:
        want += ["scaler.scale"] * k + ["scaler.unscale_", "scaler.step", "scaler.update"]
    C.check_equal(calls, want, f"calls to the scaler and the optimizer, zero_grad left out ({label})",
                  hint="scale every micro-batch's loss; then once per group unscale_, step and update, all through "
                       "the scaler (optimizer.step() directly skips its inf check)")
    # zero_grad between a group's first scale and its step would drop gradients of that group
    inside = False
    for c in g["log"]:
        if c == "scaler.scale":
            inside = True
        elif c == "scaler.step":
            inside = False
        elif c == "optimizer.zero_grad":
            C.check_true(not inside, f"optimizer.zero_grad() ran between a group's first backward and its step "
                                     f"({label})", hint="clear the gradients after the group's step, not inside it")
    C.check_true(g["grads_clear"] is True, f"gradients are not clear after train_mixed returns ({label})",
                 hint="optimizer.zero_grad() after every group's step, the last one too")
    C.check_true(g.get("autocast") is False, f"the model ran inside an autocast region that train_mixed opened ({label})",
                 hint="the caller decides the precision: train_mixed calls no autocast itself")


# The calls a correct answer makes may differ in their zero_grad calls (before a group, after it, once more at the
# end): the log is a diagnostic the verdict reads, not part of the answer's form.
@judge.probe("test_mixed_calls", free=("log",))
def probe_mixed_calls(seed):
    return {"cases": [_j5_mixed_run(seed + 13 * i, spec, spy=True) for i, spec in enumerate(_j5_mixed_cases("calls"))]}


@probe_mixed_calls.verdict
def _(got, ref):
    for g, r in zip(got["cases"], ref["cases"]):
        check_mixed_calls(g, r)


@judge.probe("test_mixed_overflow")
def probe_mixed_overflow(seed):
    return {"cases": [_j5_mixed_run(seed + 17 * i, spec) for i, spec in enumerate(_j5_mixed_cases("overflow"))]}


@probe_mixed_overflow.verdict
def _(got, ref):
    for g, r in zip(got["cases"], ref["cases"]):
        label = r["name"]
        check_mixed_values(g, r, params=False)
        for k, (gp, rp) in enumerate(zip(g["params"], r["params"])):
            C.check_close(gp, rp, f"parameter {k} after training ({label})", rtol=1e-9, atol=1e-12,
                          hint="step through the scaler, not the optimizer: it skips the step when unscale_ found inf or "
                               "NaN; calling optimizer.step() yourself writes NaN into the parameters")
        C.check_float(g["scale"], r["scale"], f"the scaler's scale after training ({label})", rel=0, abs_tol=0,
                      hint="scaler.update() once per group, also after a skipped step: it halves the scale")


#: Why each reference solution is right: one line shown under the worked solution in a student's feedback once the
#: instructor releases solutions (grade-class --solutions), never before.
WHY = {
    "jpeg_folder_dataset": "Classes are the sorted names of root's subfolders only (is_dir), so stray files are ignored and labels are stable; __init__ keeps only path strings and labels, which pickle small. decode_jpeg(..., mode=ImageReadMode.RGB) turns grayscale and CMYK files into (3, H, W) uint8 too.",
    "train_and_record": "The hook appends output.detach(), which keeps the values but not the graph, so no batch's graph outlives its step and the activations have no history. Only the handle this function registered is removed, in finally: the hook is gone after a return or an exception, other hooks stay.",
    "evaluate": "model.eval() switches Dropout and BatchNorm, torch.no_grad() stops any graph; summing with reduction=\"sum\" and dividing by the total y.numel() counts every target value once. Each module's own training flag is saved first and put back in finally, even when the loop raises.",
    "tbptt_train": "detach_state cuts the history of a tensor or of every tensor in a tuple; applying it at each chunk boundary (the incoming state included) keeps gradients inside the chunk, never in earlier chunks, with no retain_graph. The returned state is detached too, so the next call continues the stream.",
    "train_mixed": "Each micro-batch backpropagates scaler.scale(loss / group size), so .grad holds scale times the group-mean gradient; unscale_ once divides it back, so clip_grad_norm_ bounds the true gradient; scaler.step skips the optimizer when unscale_ found inf or NaN, update() changes the scale only between groups (halved after a skip), and zero_grad after every group leaves the gradients clear.",
}
