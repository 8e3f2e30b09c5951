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


# Each exercise's probes and verdicts, and WHY (why its reference is right), are in
# exercises/<grade id>/judge.py, beside its mutants and alternatives; course.grading.judge.verdicts.load runs
# them after this file, in the notebook's order, in this module's namespace.
WHY = {}
