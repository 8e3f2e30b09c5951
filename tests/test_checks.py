"""course.checks: right answers pass, wrong ones fail with teaching messages, tampering does not help."""
import builtins

import pytest
import torch
import torch.testing

import course.checks as C
from course.checks import CheckFailed


def fails(fn, *args, match=None, **kwargs):
    with pytest.raises(CheckFailed) as info:
        fn(*args, **kwargs)
    if match:
        assert match in str(info.value), str(info.value)
    return str(info.value)


# ------------------------------------------------------------ plain behaviour
def test_check_close_passes_and_reports_differences():
    x = torch.linspace(0, 1, 5)
    C.check_close(x.clone(), x)
    C.check_close(x + 1e-7, x)
    msg = fails(C.check_close, x + torch.tensor([0, 0, 0.5, 0, 0]), x, name="y")
    assert "1 of 5" in msg and "index (2,)" in msg and "expected 0.5" in msg
    assert "shape" in fails(C.check_close, x[:4], x)
    assert "reshape" in fails(C.check_close, x.reshape(5, 1), x)
    assert "dtype" in fails(C.check_close, x.double(), x)
    C.check_close(x.double(), x, check_dtype=False)
    assert "zero" in fails(C.check_close, torch.zeros(5), x + 1)
    assert "NaN or infinite" in fails(C.check_close, torch.tensor([1.0, float("nan")]), torch.ones(2))
    C.check_close(torch.tensor([float("nan"), 1.0]), torch.tensor([float("nan"), 1.0]), equal_nan=True)
    C.check_close(torch.tensor([float("inf")]), torch.tensor([float("inf")]))
    assert "infinite" in fails(C.check_close, torch.tensor([float("inf")]), torch.tensor([1.0]))
    C.check_close(torch.zeros(0), torch.zeros(0))
    C.check_close(torch.tensor([1, 2]), torch.tensor([1, 2]))
    fails(C.check_close, torch.tensor([1, 3]), torch.tensor([1, 2]))
    C.check_close(torch.tensor(1.0, requires_grad=True) * 1, torch.tensor(1.0))
    with pytest.raises(TypeError):
        C.check_close(torch.ones(1), [1.0])
    with pytest.raises(ValueError):
        C.check_close(torch.ones(1), torch.tensor([float("nan")]))


def test_check_close_tolerances_follow_dtype():
    e = torch.ones(3, dtype=torch.float16)
    C.check_close(e + 5e-4, e)
    fails(C.check_close, e + 1e-2, e)
    C.check_close(torch.ones(3) + 0.05, torch.ones(3), atol=0.1)


def test_check_tensor():
    C.check_tensor(torch.zeros(2, 3), shape=(2, 3), dtype=torch.float32, device="cpu")
    C.check_tensor(torch.nn.Parameter(torch.zeros(1)))
    assert ".item()" in fails(C.check_tensor, 3.0)
    assert "shape" in fails(C.check_tensor, torch.zeros(2), shape=(3,))
    assert "dtype" in fails(C.check_tensor, torch.zeros(2), dtype=torch.int64)
    assert "meta" in fails(C.check_tensor, torch.zeros(2), device="meta")


def test_trusted_torchvision_subclass_is_accepted():
    from torchvision import tv_tensors
    img = tv_tensors.Image(torch.zeros(3, 4, 4))
    C.check_tensor(img, shape=(3, 4, 4))
    C.check_close(img, torch.zeros(3, 4, 4))


def test_checks_trusts_torchvision_without_importing_it_and_not_a_planted_module():
    """Importing course.checks leaves torchvision unloaded (about 1.3 s of CPU per kernel and grader); a module
    planted in sys.modules as torchvision.tv_tensors, from another file, is not trusted; the real one, loaded
    later, is. course.progress does not import course.checks back (no cycle)."""
    import subprocess
    import sys
    code = r"""
import sys, types, torch
import course.progress
assert "course.checks" not in sys.modules, "course.progress imported course.checks"
from course import checks as C
assert "torchvision" not in sys.modules, "course.checks imported torchvision"
fake = types.ModuleType("torchvision.tv_tensors")
fake.__file__ = "/tmp/planted/tv_tensors/__init__.py"
class Image(torch.Tensor):
    pass
fake.Image = fake.Video = fake.Mask = Image
sys.modules["torchvision.tv_tensors"] = fake
assert not C._is_tensor(torch.zeros(2).as_subclass(Image)), "a planted tv_tensors class was trusted"
del sys.modules["torchvision.tv_tensors"]
from torchvision import tv_tensors
# once a check has met an untrusted tv_tensors module, that kernel trusts no subclass at all (kept, not re-read)
assert not C._is_tensor(tv_tensors.Image(torch.zeros(3, 2, 2)))
C._TRUSTED_SUBCLASSES = None  # a fresh kernel: the real module is trusted
assert C._is_tensor(tv_tensors.Image(torch.zeros(3, 2, 2)))
print("ok")
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr[-2000:]


def test_check_equal_exact_types():
    C.check_equal({"a": [1, (2.0, "x")], "b": None}, {"a": [1, (2.0, "x")], "b": None})
    C.check_equal(torch.Size([2, 3]), torch.Size([2, 3]))
    C.check_equal({1, 2}, {2, 1})
    assert "bool" in fails(C.check_equal, True, 1)
    assert "tuple" in fails(C.check_equal, [1], (1,))
    assert "Missing" in fails(C.check_equal, {"a": 1}, {"a": 1, "b": 2})
    assert "[1]" in fails(C.check_equal, [1, 2], [1, 3])
    assert "items" in fails(C.check_equal, [1], [1, 2])
    assert "missing" in fails(C.check_equal, {1}, {1, 2})
    fails(C.check_equal, torch.Size([2]), torch.Size([3]))
    with pytest.raises(TypeError):
        C.check_equal(object(), object())


def test_check_float_true_type_grad_raises():
    C.check_float(1.0 + 1e-9, 1.0)
    assert ".item()" in fails(C.check_float, torch.tensor(1.0), 1.0)
    fails(C.check_float, 1, 1.0)
    fails(C.check_float, float("nan"), 1.0)
    fails(C.check_float, 1.1, 1.0)
    C.check_true(True, "never")
    assert "nope" in fails(C.check_true, 1, "nope")
    fails(C.check_true, torch.tensor(True), "a tensor is not True")
    C.check_type(torch.nn.Linear(1, 1), torch.nn.Module)
    C.check_type(3, (str, int))
    assert "Module" in fails(C.check_type, 3, torch.nn.Module)
    assert "raised" not in str(C.check_raises(lambda: 1 / 0, ZeroDivisionError))
    fails(C.check_raises, lambda: None, ValueError, match="returned normally")
    fails(C.check_raises, lambda: 1 / 0, ValueError, match="got ZeroDivisionError")
    def raise_abc():
        raise ValueError("abc")
    C.check_raises(raise_abc, ValueError, match="ab")
    with pytest.raises(CheckFailed, match="does not mention"):
        C.check_raises(raise_abc, ValueError, match="xyz")
    with pytest.raises(TypeError):
        C.check_raises(3, ValueError)


def test_check_grad_explains_none():
    w = torch.ones(2, requires_grad=True)
    (w * 3).sum().backward()
    C.check_grad(w, "w", expected=torch.full((2,), 3.0))
    assert "requires_grad is False" in fails(C.check_grad, torch.ones(2), "p")
    nonleaf = torch.ones(2, requires_grad=True) * 2
    assert "retain_grad" in fails(C.check_grad, nonleaf, "h")
    assert "detach" in fails(C.check_grad, torch.ones(2, requires_grad=True), "q")
    fails(C.check_grad, w, "w", expected=torch.zeros(2))


def test_check_no_grad_fn_and_to_float():
    C.check_no_grad_fn(torch.ones(2))
    assert "grad_fn" in fails(C.check_no_grad_fn, torch.ones(2, requires_grad=True) * 2)
    assert C.to_float(torch.tensor(2.5)) == 2.5
    with pytest.raises(CheckFailed):
        C.to_float(2.5)


def test_mismatch_picture_is_optional_and_safe(monkeypatch):
    import matplotlib
    matplotlib.use("Agg")
    drawn = []
    monkeypatch.setattr("course.plots.mismatch", lambda e, g, title: drawn.append(title))
    fails(C.check_close, torch.zeros(3), torch.ones(3), name="z", show=True)
    assert drawn == ["z"]
    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")
    fails(C.check_close, torch.zeros(3), torch.ones(3), name="z", show=True)
    assert drawn == ["z"], "no pictures while grading"


# ------------------------------------------------------------ tampering
class Liar(torch.Tensor):
    def __eq__(self, other):
        return True

    def __bool__(self):
        return True


def test_tensor_subclass_and_class_spoofing_are_rejected():
    liar = torch.zeros(3).as_subclass(Liar)
    assert "subclass" in fails(C.check_close, liar, torch.ones(3))

    class Spoof:
        @property
        def __class__(self):
            return torch.Tensor
    spoof = Spoof()
    assert isinstance(spoof, torch.Tensor), "the spoof fools isinstance..."
    fails(C.check_tensor, spoof)           # ...but not the checks
    fails(C.check_type, spoof, torch.Tensor)


@pytest.mark.parametrize("target", [
    (torch, "allclose", lambda *a, **k: True),
    (torch, "equal", lambda *a, **k: True),
    (torch.testing, "assert_close", lambda *a, **k: None),
    (torch.Tensor, "__eq__", lambda self, other: torch.ones((), dtype=torch.bool)),
    # A blanket `lambda o, c: True` would break pytest's own logging; lie only about Liar.
    (builtins, "isinstance", lambda o, c, _real=builtins.isinstance: type(o) is Liar or _real(o, c)),
])
def test_monkeypatching_does_not_make_wrong_answers_pass(monkeypatch, target):
    owner, name, fake = target
    monkeypatch.setattr(owner, name, fake)
    assert C.tampering(), "the replacement is detected"
    msg = fails(C.check_close, torch.zeros(3), torch.ones(3))
    assert "tampering detected" in msg and name in msg
    fails(C.check_true, True, "even a passing check refuses to run")
    monkeypatch.undo()
    assert C.tampering() == []
    C.check_close(torch.ones(3), torch.ones(3))


def test_replacing_a_check_is_detected(monkeypatch):
    monkeypatch.setattr(C, "check_close", lambda *a, **k: None)
    assert "course.checks.check_close" in C.tampering()
    fails(C.check_true, True, "x")


def test_watch_adds_names_and_cannot_be_laundered(monkeypatch):
    import types
    mod = types.SimpleNamespace(explain=lambda: "real")
    C.watch(mod, "explain", "fake_module.explain")
    try:
        assert "fake_module.explain" not in C.tampering()
        monkeypatch.setattr(mod, "explain", lambda: "fake")
        C.watch(mod, "explain", "fake_module.explain")   # re-watching must not accept the fake
        assert "fake_module.explain" in C.tampering()
        fails(C.check_true, True, "x")
    finally:
        C._WATCHED.pop("fake_module.explain", None)


def test_type_mismatches_read_the_same_and_name_the_likely_cause():
    for call in (lambda: C.check_equal(torch.tensor(7), 7, "steps"), lambda: C.check_type(torch.tensor(7), int, "steps")):
        with pytest.raises(C.CheckFailed) as err:
            call()
        text = str(err.value)
        assert "steps: expected an int" in text and ".item()" in text and "the type is not" in text
    with pytest.raises(C.CheckFailed, match=r"(?s)expected a torch.Size .* store output.shape"):
        C.check_equal(torch.ones(2), torch.Size([2]), "shape")
    with pytest.raises(C.CheckFailed, match="return a tuple"):
        C.check_equal([1, 2], (1, 2), "pair")
    with pytest.raises(C.CheckFailed, match="an object of type mod.Thing"):
        C.check_tensor(C.Opaque("mod.Thing", "<thing>"), "out")
