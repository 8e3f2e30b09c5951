"""Exercise 'jpeg_folder_dataset' of 05_engineering_traps: its hidden probes and verdicts (instructor side: never released).

Run by course.grading.judge.verdicts.load after ../../judge.py, in its namespace (the names defined there,
and in the exercises above this one, are in scope). Its mutants and alternatives are in the folders beside
this file.
"""

# --- this exercise's own helpers (only its probes and verdicts use them; a @judge.shared one ships with
# every probe of the chapter, as the chapter's own do) ------------------------------------------------

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


WHY['jpeg_folder_dataset'] = "Classes are the sorted names of root's subfolders only (is_dir), so stray files are ignored and labels are stable; __init__ keeps only path strings and labels, which pickle small. decode_jpeg(..., mode=ImageReadMode.RGB) turns grayscale and CMYK files into (3, H, W) uint8 too."
