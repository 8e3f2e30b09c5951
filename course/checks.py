"""Checks used by the visible and hidden tests, with messages that teach.

Student code runs in the same interpreter before the tests do, so these
checks do not trust the kernel:

* every torch and builtin function they use is bound here, when this module
  is first imported (the locked setup cell, before any student code);
* they check exact types (``type(x) is torch.Tensor``) before values, so a
  subclass with a lying ``__torch_function__``, ``__eq__`` or ``__bool__`` is
  rejected, and they never call a student object's ``__eq__`` or ``__bool__``;
* before each check they look for tampering: if ``torch.allclose``,
  ``torch.equal``, ``torch.testing.assert_close``, ``torch.Tensor.__eq__``,
  ``builtins.isinstance`` (and a few more) or the functions of this module
  were replaced, the check fails and says what was replaced.

Every check raises :class:`CheckFailed` (an ``AssertionError``) with a
message saying what was expected, what came back, and the likely cause.
"""
from __future__ import annotations

import builtins
import importlib.machinery
import math
import os
import sys

import torch
import torch.testing

# --- bound once, at first import -------------------------------------------
_Tensor = torch.Tensor
_Parameter = torch.nn.Parameter
_TB = torch._C.TensorBase
_type = builtins.type
_issubclass = builtins.issubclass
_isinstance = builtins.isinstance
_len = builtins.len
_float = builtins.float
_int = builtins.int
_str = builtins.str
_repr = builtins.repr
_tuple = builtins.tuple
_list = builtins.list
_sorted = builtins.sorted
_range = builtins.range
_zip = builtins.zip
_min = builtins.min
_getattr = builtins.getattr
_callable = builtins.callable
_enumerate = builtins.enumerate
_map = builtins.map
_reversed = builtins.reversed
_isfinite = math.isfinite
_fabs = math.fabs

_t_abs = torch.abs
_t_sub = torch.sub
_t_mul = torch.mul
_t_add = torch.add
_t_gt = torch.gt
_t_sum = torch.sum
_t_all = torch.all
_t_isnan = torch.isnan
_t_isfinite = torch.isfinite
_t_logical_not = torch.logical_not
_t_logical_xor = torch.logical_xor
_t_argmax = torch.argmax
_t_flatten = torch.flatten
_t_unravel = torch.unravel_index
_t_where = torch.where
_t_zeros_like = torch.zeros_like
_t_is_complex = torch.is_complex
_no_grad = torch.no_grad

_item = _TB.item
_detach = _TB.detach
_to = _TB.to
_cpu = _TB.cpu
_size = _TB.size
_numel = _TB.numel
_tolist = _TB.tolist
_get_dtype = _TB.__dict__["dtype"].__get__
_get_device = _TB.__dict__["device"].__get__
_get_grad = _TB.__dict__["grad"].__get__
_get_requires_grad = _TB.__dict__["requires_grad"].__get__
_get_is_leaf = _TB.__dict__["is_leaf"].__get__
_get_grad_fn = _TB.__dict__["grad_fn"].__get__

# Tensor subclasses made by trusted libraries (torchvision.transforms.v2 returns
# tv_tensors.Image); any other subclass is rejected, since its
# __torch_function__ could lie. torchvision is not imported here: importing it
# costs every kernel and grader about 1.3 s of CPU (it pulls in torch._dynamo),
# and a tv_tensors object can only exist once torchvision is loaded. The
# classes are looked up at the first tensor subclass a check meets, only from a
# module whose file lies in the torchvision package found on sys.path (a module
# planted in sys.modules under that name with another file is not trusted).
# In the student's kernel that is a courtesy, not a defence (the kernel is the
# student's); the grade comes from the judge's verdicts, where no student code runs.
_find_on_path = importlib.machinery.PathFinder.find_spec  # sys.path's files, never sys.modules
_realpath, _dirname, _modules = os.path.realpath, os.path.dirname, sys.modules
_TRUSTED_SUBCLASSES: tuple[type, ...] | None = None


def _trusted_subclasses() -> tuple[type, ...]:
    global _TRUSTED_SUBCLASSES
    if _TRUSTED_SUBCLASSES is None:
        trusted: tuple[type, ...] = ()
        try:
            tv = _modules.get("torchvision.tv_tensors")
            spec = _find_on_path("torchvision") if tv is not None else None
            if spec is not None and spec.origin:
                home = _dirname(_realpath(spec.origin)) + os.sep
                if _realpath(getattr(tv, "__file__", "") or "").startswith(home):
                    trusted = (tv.Image, tv.Video, tv.Mask)
        except Exception:  # noqa: BLE001 - torchvision broken: trust nothing extra
            trusted = ()
        if trusted or "torchvision.tv_tensors" in _modules:  # not loaded yet: look again at the next subclass
            _TRUSTED_SUBCLASSES = trusted
        return trusted
    return _TRUSTED_SUBCLASSES

_float64 = torch.float64
_bool_dtype = torch.bool
_float_dtypes = (torch.float16, torch.bfloat16, torch.float32, torch.float64)

# What a student might replace to make a wrong answer pass.
_WATCHED = {
    "torch.allclose": (torch, "allclose", torch.allclose),
    "torch.equal": (torch, "equal", torch.equal),
    "torch.isclose": (torch, "isclose", torch.isclose),
    "torch.eq": (torch, "eq", torch.eq),
    "torch.testing.assert_close": (torch.testing, "assert_close", torch.testing.assert_close),
    "torch.Tensor.__eq__": (torch.Tensor, "__eq__", torch.Tensor.__eq__),
    "torch.Tensor.__bool__": (torch.Tensor, "__bool__", torch.Tensor.__bool__),
    "builtins.isinstance": (builtins, "isinstance", builtins.isinstance),
    "builtins.issubclass": (builtins, "issubclass", builtins.issubclass),
    "builtins.type": (builtins, "type", builtins.type),
    "builtins.float": (builtins, "float", builtins.float),
    "builtins.len": (builtins, "len", builtins.len),
}

# torch.testing-like default tolerances: (rtol, atol)
_TOLERANCES = {
    torch.float16: (1e-3, 1e-5),
    torch.bfloat16: (1.6e-2, 1e-5),
    torch.float32: (1.3e-6, 1e-5),
    torch.float64: (1e-7, 1e-7),
}


class CheckFailed(AssertionError):
    """A check did not pass; the message says what was expected and what came back."""


def _fail(message: str, hint: str | None = None) -> None:
    if hint:
        message = f"{message}\n  Hint: {hint}"
    raise CheckFailed(message)


def tampering() -> list[str]:
    """Return the names of watched functions that were replaced since import (empty if none)."""
    replaced = []
    for name, (owner, attr, original) in _WATCHED.items():
        if _getattr(owner, attr, None) is not original:
            replaced.append(name)
    module = sys.modules.get(__name__)
    for attr, original in _OWN.items():
        if module is None or _getattr(module, attr, None) is not original:
            replaced.append(f"course.checks.{attr}")
    return replaced


def watch(owner: object, attr: str, label: str | None = None) -> None:
    """Also watch ``owner.attr`` for replacement (call it in a locked setup cell, before student code).

    A chapter whose tests rely on, say, ``torch._dynamo.explain`` watches it
    so that a student cannot replace it. A name already watched keeps its
    first original: watching again after a replacement cannot launder it.
    """
    label = label or f"{_getattr(owner, '__name__', _type_name(owner))}.{attr}"
    if label not in _WATCHED:
        _WATCHED[label] = (owner, attr, _getattr(owner, attr))


def check_untampered() -> None:
    """Fail if any watched function was replaced (see :func:`tampering`)."""
    replaced = tampering()
    if replaced:
        _fail("tampering detected: " + ", ".join(replaced) + " was replaced in this kernel. "
              "The grader does not use those functions, and a notebook that replaces "
              "them does not get the points for this test.")


def _type_name(obj: object) -> str:
    t = _type(obj)
    mod = _getattr(t, "__module__", "")
    qual = _getattr(t, "__qualname__", _getattr(t, "__name__", "?"))
    return qual if mod in ("builtins", "", None) else f"{mod}.{qual}"


def _a(type_name: str) -> str:
    """'a torch.Size', 'an int': the same wording for every type mismatch."""
    return f"{'an' if type_name[:1].lower() in 'aeiou' else 'a'} {type_name}"


def _type_hint(got: object, wanted: tuple) -> str | None:
    """The likely cause of the commonest type mix-ups (a tensor where a number belongs, a list for a tuple)."""
    names = {_getattr(w, "__name__", "") for w in wanted}
    if _is_tensor(got) and names & {"int", "float", "bool"}:
        return ("you returned a one-element tensor: use .item() (or count with a plain Python number); "
                "the value may well be right, the type is not")
    if _type(got) in (int, float) and "Tensor" in names:
        return "return the tensor itself, not a Python number"
    if _type(got) is list and "tuple" in names:
        return "return a tuple, e.g. (a, b), not a list"
    if _type(got) is tuple and "list" in names:
        return "return a list, not a tuple"
    if _is_tensor(got) and "Size" in names:
        return "store output.shape (a torch.Size), not the output tensor"
    return None


def _is_tensor(obj: object, allow_parameter: bool = True) -> bool:
    t = _type(obj)
    return t is _Tensor or (allow_parameter and (t is _Parameter or t in _trusted_subclasses()))


def describe(obj: object) -> str:
    """Return a short, safe description of ``obj`` (type, and shape/dtype/device for tensors)."""
    if _type(obj) is Opaque:
        return f"an object of type {obj.type_name}"
    if _is_tensor(obj):
        return (f"tensor of shape {_tuple(_size(obj))}, dtype {_get_dtype(obj)}, "
                f"device {_get_device(obj)}")
    if _type(obj) in (int, float, bool, str, type(None)):
        return f"{_type_name(obj)} {_repr(obj)}"
    return f"an object of type {_type_name(obj)}"


def check_type(obj: object, cls: type | tuple, name: str = "result", hint: str | None = None) -> None:
    """Fail unless ``type(obj)`` is ``cls`` or a subclass of it (``cls`` may be a tuple).

    Uses the real ``type()`` of the object, so a ``__class__`` property cannot spoof it.
    """
    check_untampered()
    classes = cls if _type(cls) is _tuple else (cls,)
    t = _type(obj)
    for c in classes:
        if _issubclass(t, c):
            return
    wanted = " or ".join(_getattr(c, "__qualname__", _str(c)) for c in classes)
    _fail(f"{name}: expected {_a(wanted)}, got {describe(obj)}.", hint or _type_hint(obj, classes))


def check_tensor(got: object, name: str = "result", shape: tuple | None = None,
                 dtype: torch.dtype | None = None, device: str | torch.device | None = None,
                 hint: str | None = None) -> None:
    """Fail unless ``got`` is exactly a ``torch.Tensor`` (or ``nn.Parameter``) with the given shape, dtype and device."""
    check_untampered()
    if not _is_tensor(got):
        extra = ""
        if _isinstance(got, _Tensor):
            extra = " (a subclass of Tensor is not accepted: return a plain torch.Tensor)"
        elif _type(got) in (int, float):
            extra = " (did you call .item() or float()? return the tensor itself)"
        _fail(f"{name}: expected a torch.Tensor, got {describe(got)}{extra}.", hint)
    if shape is not None:
        got_shape = _tuple(_size(got))
        want = _tuple(shape)
        if got_shape != want:
            _fail(f"{name}: expected shape {want}, got shape {got_shape}.", hint)
    if dtype is not None and _get_dtype(got) is not dtype:
        _fail(f"{name}: expected dtype {dtype}, got dtype {_get_dtype(got)}.", hint)
    if device is not None:
        want_dev = torch.device(device)
        got_dev = _get_device(got)
        if got_dev.type != want_dev.type:
            _fail(f"{name}: expected a tensor on {want_dev}, got one on {got_dev}. "
                  f"Move it with .to(device).", hint)


def _index_str(flat_index: int, shape: tuple) -> str:
    if _len(shape) == 0:
        return "()"
    idx = []
    for dim in _reversed(shape):
        idx.append(flat_index % dim)
        flat_index //= dim
    return _str(_tuple(_reversed(idx)))


def check_close(got: object, expected: torch.Tensor, name: str = "result",
                rtol: float | None = None, atol: float | None = None,
                check_dtype: bool = True, equal_nan: bool = False,
                hint: str | None = None, show: bool = False) -> None:
    """Fail unless tensor ``got`` matches ``expected`` in type, shape, dtype, device and values.

    Values must satisfy ``|got - expected| <= atol + rtol * |expected|``, with
    torch.testing's defaults for the dtype when ``rtol``/``atol`` are not
    given (exact for integer and bool tensors). ``show=True`` draws "target
    vs yours" when the values differ (1-D and 2-D tensors, outside grading).
    """
    check_untampered()
    if not _is_tensor(expected):
        raise TypeError("check_close: `expected` must be a torch.Tensor (a bug in the test)")
    check_tensor(got, name, hint=hint)
    got_shape, exp_shape = _tuple(_size(got)), _tuple(_size(expected))
    if got_shape != exp_shape:
        broadcast = ""
        if _numel(got) == _numel(expected):
            broadcast = " The number of elements matches: a reshape, transpose or missing squeeze?"
        _fail(f"{name}: expected shape {exp_shape}, got shape {got_shape}.{broadcast}", hint)
    if check_dtype and _get_dtype(got) is not _get_dtype(expected):
        _fail(f"{name}: expected dtype {_get_dtype(expected)}, got dtype {_get_dtype(got)}.", hint)
    if _get_device(got).type != _get_device(expected).type:
        _fail(f"{name}: expected a tensor on {_get_device(expected)}, got one on {_get_device(got)}.", hint)
    exp_dtype = _get_dtype(expected)
    d_rtol, d_atol = _TOLERANCES.get(exp_dtype, (0.0, 0.0))
    rtol = d_rtol if rtol is None else _float(rtol)
    atol = d_atol if atol is None else _float(atol)
    with _no_grad():
        g = _to(_cpu(_detach(got)), _float64)
        e = _to(_cpu(_detach(expected)), _float64)
        if _numel(e) == 0:
            return
        g_nan, e_nan = _t_isnan(g), _t_isnan(e)
        if _item(_t_sum(e_nan)) > 0 and not equal_nan:
            raise ValueError("check_close: expected contains NaN; pass equal_nan=True (a bug in the test)")
        if _item(_t_sum(_t_logical_xor(g_nan, e_nan))) > 0:
            if _item(_t_sum(e_nan)) == 0:
                n_bad = _item(_t_sum(_t_logical_not(_t_isfinite(g))))
                _fail(f"{name}: {n_bad} value(s) are NaN or infinite, but every expected value is finite. "
                      f"Look for a division by zero, log of 0, sqrt of a negative number, or an overflow.", hint)
            _fail(f"{name}: NaN in different places than expected.", hint)
        g = _t_where(g_nan, _t_zeros_like(g), g)
        e = _t_where(e_nan, _t_zeros_like(e), e)
        g_inf = _t_logical_not(_t_isfinite(g))
        e_inf = _t_logical_not(_t_isfinite(e))
        if _item(_t_sum(_t_logical_xor(g_inf, e_inf))) > 0:
            _fail(f"{name}: infinite values where finite ones were expected (or the other way round).", hint)
        diff = _t_abs(_t_sub(g, e))
        diff = _t_where(e_inf, _t_zeros_like(diff), diff)
        tol = _t_add(_t_mul(_t_abs(e), rtol), atol)
        bad = _t_gt(diff, tol)
        n_bad = _int(_item(_t_sum(bad)))
        if n_bad == 0:
            return
        flat = _int(_item(_t_argmax(_t_flatten(diff))))
        worst = _float(_item(_t_flatten(diff)[flat]))
        g_val = _float(_item(_t_flatten(g)[flat]))
        e_val = _float(_item(_t_flatten(e)[flat]))
        total = _int(_numel(e))
    msg = (f"{name}: values differ in {n_bad} of {total} entries.\n"
           f"  Largest difference {worst:.4g} at index {_index_str(flat, exp_shape)}: "
           f"expected {e_val:.6g}, got {g_val:.6g} (tolerance atol={atol:g}, rtol={rtol:g}).")
    if n_bad == total and _item(_t_sum(_t_abs(g))) == 0:
        msg += "\n  Every value you returned is zero."
    if show:
        _maybe_show(expected, got, name)
    _fail(msg, hint)


def _maybe_show(expected: torch.Tensor, got: torch.Tensor, name: str) -> None:
    """Draw target vs yours (Tensor-Puzzles style); silently skipped under grading."""
    if os.environ.get("NBGRADER_EXECUTION"):
        return
    try:
        from course import plots
        plots.mismatch(expected, got, title=name)
    except Exception:  # a drawing problem must never hide the real failure
        pass


def check_equal(got: object, expected: object, name: str = "result", hint: str | None = None) -> None:
    """Fail unless plain Python data ``got`` equals ``expected``, exact types included.

    Works on ``None``, ``bool``, ``int``, ``float`` (exactly), ``str``,
    ``torch.Size``, ``torch.dtype`` and nested ``list``/``tuple``/``dict``/``set``
    of them. ``1`` and ``True`` are different; a ``list`` is not a ``tuple``.
    Never calls a method of a student object.
    """
    check_untampered()
    _equal(got, expected, name, hint)


_PLAIN = (type(None), bool, int, float, str, bytes, torch.dtype, torch.device)


def _equal(got: object, expected: object, path: str, hint: str | None) -> None:
    tg, te = _type(got), _type(expected)
    if tg is not te:
        _fail(f"{path}: expected {_a(_type_name(expected))} ({_repr(expected)[:80]}), got {describe(got)}.",
              hint or _type_hint(got, (te,)))
    if te in _PLAIN:
        if got != expected:  # both exact builtin/torch types: their __eq__ is trusted
            _fail(f"{path}: expected {_repr(expected)}, got {_repr(got)}.", hint)
        return
    if te is torch.Size:
        if _tuple(got) != _tuple(expected):
            _fail(f"{path}: expected {_repr(expected)}, got {_repr(got)}.", hint)
        return
    if te in (list, tuple):
        if _len(got) != _len(expected):
            _fail(f"{path}: expected {_len(expected)} items, got {_len(got)}: {_repr(got)[:300]}", hint)
        for i, (g, e) in _enumerate(_zip(got, expected)):
            _equal(g, e, f"{path}[{i}]", hint)
        return
    if te is dict:
        gk = [k for k in got.keys()]
        ek = [k for k in expected.keys()]
        for k in gk:
            if _type(k) not in _PLAIN:
                _fail(f"{path}: unexpected key of type {_type_name(k)}.", hint)
        missing = [k for k in ek if k not in got]
        extra = [k for k in gk if k not in expected]
        if missing or extra:
            _fail(f"{path}: keys differ. Missing: {missing}; unexpected: {extra}.", hint)
        for k in ek:
            _equal(got[k], expected[k], f"{path}[{k!r}]", hint)
        return
    if te in (set, frozenset):
        for k in got:
            if _type(k) not in _PLAIN:
                _fail(f"{path}: unexpected item of type {_type_name(k)}.", hint)
        if got != expected:
            _fail(f"{path}: expected {_sorted(_map(_repr, expected))}, got {_sorted(_map(_repr, got))}; "
                  f"missing {_sorted(_map(_repr, expected - got))}, unexpected {_sorted(_map(_repr, got - expected))}.", hint)
        return
    raise TypeError(f"check_equal cannot compare {te!r} (a bug in the test)")


def check_float(got: object, expected: float, name: str = "result", rel: float = 1e-6,
                abs_tol: float = 1e-8, hint: str | None = None) -> None:
    """Fail unless ``got`` is a Python ``float`` within ``abs_tol + rel * |expected|`` of ``expected``."""
    check_untampered()
    if _type(got) is not float:
        extra = ""
        if _is_tensor(got):
            extra = " Call .item() to turn a one-element tensor into a Python float (and drop its graph)."
        _fail(f"{name}: expected a Python float, got {describe(got)}.{extra}", hint)
    expected = _float(expected)
    if not _isfinite(got):
        _fail(f"{name}: got {got!r}, expected the finite value {expected:.6g}.", hint)
    if _fabs(got - expected) > abs_tol + rel * _fabs(expected):
        _fail(f"{name}: expected {expected:.6g}, got {got:.6g} (difference {_fabs(got - expected):.3g}).", hint)


def check_true(condition: object, message: str, hint: str | None = None) -> None:
    """Fail with ``message`` unless ``condition`` is exactly ``True`` (a real ``bool``)."""
    check_untampered()
    if condition is not True:
        _fail(message, hint)


def check_grad(t: object, name: str = "x", expected: torch.Tensor | None = None,
               rtol: float | None = None, atol: float | None = None, hint: str | None = None) -> None:
    """Fail unless tensor ``t`` has a ``.grad`` (and, if given, one close to ``expected``).

    When ``.grad`` is ``None`` the message lists the usual causes.
    """
    check_tensor(t, name)
    grad = _get_grad(t)
    if grad is None:
        causes = []
        if not _get_requires_grad(t):
            causes.append(f"{name}.requires_grad is False: create it with requires_grad=True "
                          f"(or it was rebuilt, e.g. `p = p - lr * p.grad` makes a new tensor)")
        elif not _get_is_leaf(t):
            causes.append(f"{name} is not a leaf, so autograd does not keep its .grad: "
                          f"call {name}.retain_grad() before backward(), or use torch.autograd.grad")
        causes += ["the loss was computed from a .detach()-ed or .data copy, cutting the graph",
                    "part of the computation ran under torch.no_grad()",
                    "backward() was never called, or the gradients were cleared (set to None) afterwards"]
        _fail(f"{name}.grad is None. Likely causes:\n    - " + "\n    - ".join(causes), hint)
    if expected is not None:
        check_close(grad, expected, name=f"{name}.grad", rtol=rtol, atol=atol, hint=hint)


def check_raises(fn: object, exc_type: type | tuple, name: str = "call",
                 match: str | None = None, hint: str | None = None) -> BaseException:
    """Call ``fn()`` and fail unless it raises ``exc_type`` (whose message contains ``match``); return the exception."""
    check_untampered()
    if not _callable(fn):
        raise TypeError("check_raises needs a callable (a bug in the test)")
    try:
        fn()
    except exc_type as err:  # noqa: PERF203
        if match is not None and match not in _str(err):
            _fail(f"{name}: raised {_type(err).__name__} as expected, but its message "
                  f"{_str(err)[:200]!r} does not mention {match!r}.", hint)
        return err
    except BaseException as err:
        _fail(f"{name}: expected {_getattr(exc_type, '__name__', exc_type)}, "
              f"got {_type(err).__name__}: {_str(err)[:300]}", hint)
    _fail(f"{name}: expected {_getattr(exc_type, '__name__', exc_type)} to be raised, but the call returned normally.", hint)
    raise AssertionError("unreachable")


def check_no_grad_fn(t: object, name: str = "result", hint: str | None = None) -> None:
    """Fail unless tensor ``t`` carries no autograd history (``grad_fn is None`` and no ``requires_grad``)."""
    check_tensor(t, name)
    gf = _get_grad_fn(t)
    if gf is not None:
        _fail(f"{name} still holds an autograd graph (grad_fn={_type(gf).__name__}), which keeps every "
              f"tensor of that step alive. Use .item(), .detach() or torch.no_grad().", hint)


def to_float(t: torch.Tensor) -> float:
    """Return a one-element tensor's value as a Python float, using functions bound at import."""
    if not _is_tensor(t):
        raise CheckFailed(f"expected a one-element tensor, got {describe(t)}")
    return _float(_item(_detach(t)))


_OWN = {name: obj for name, obj in list(globals().items())
        if name.startswith("check_") or name in ("tampering", "describe", "to_float", "CheckFailed", "watch")}


class Opaque:
    """A value a probe could not send as plain data (judge side): its type's name and a short repr."""

    __slots__ = ("type_name", "text")

    def __init__(self, type_name: str, text: str) -> None:
        self.type_name = type_name
        self.text = text

    def __repr__(self) -> str:
        return f"<{self.type_name}: {self.text}>"


# In a notebook, show a failing check as the failing line plus its message (course.progress).
try:
    from course import progress as _progress

    _progress.install((CheckFailed,))
except Exception:  # noqa: BLE001 - a display nicety must never break the checks
    pass
