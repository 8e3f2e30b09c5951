"""What crosses from the student's kernel to the judge: plain data only, in a form that cannot run code.

Worker side (inside the sandbox, in the student's kernel): :func:`run_probe`
executes one probe function in the notebook's namespace, turns its return
value into plain data with :func:`encode`, and writes it with ``torch.save``.

Judge side: :func:`read_result` loads that file with
``torch.load(weights_only=True)``, which only rebuilds tensors and builtin
containers (no classes, no code; it is the loader PyTorch recommends for
untrusted checkpoints), after checking its size, and :func:`decode` turns
the few tagged forms back into Python values.

Plain data: ``None``, ``bool``, ``int``, ``float``, ``complex``, ``str``,
``bytes``, ``torch.Tensor`` (detached copies; subclasses become plain tensors),
``torch.Size``, ``torch.dtype``, ``torch.device``, NumPy arrays and scalars,
and ``list``/``tuple``/``dict``/``set`` of those. Anything else (a module, a
function, a subclass of ``int``...) arrives as :class:`course.checks.Opaque`,
which keeps only its type name and a short ``repr``, so a check can say what
came back.

An attack in the worker can make this file fail to load, or fill it with
wrong data. It cannot make the judge run code, and it never sees what the
judge compares with.
"""
from __future__ import annotations

import io
import os
import random
import traceback
from pathlib import Path
from typing import Any

MAX_RESULT_BYTES = 512 * 2 ** 20
MAX_DEPTH = 40
MAX_ITEMS = 200_000
_TAG = "__judge__"


class _Budget:
    def __init__(self) -> None:
        self.items = 0


def _opaque(obj: Any, why: str = "") -> tuple:
    t = type(obj)
    name = f"{getattr(t, '__module__', '?')}.{getattr(t, '__qualname__', '?')}"
    try:
        text = repr(obj)
    except BaseException:  # noqa: BLE001 - a student's __repr__ may raise anything
        text = "<repr failed>"
    return (_TAG, "opaque", name.removeprefix("builtins."), text[:300] + (f" ({why})" if why else ""))


def encode(obj: Any, _depth: int = 0, _budget: _Budget | None = None) -> Any:
    """Return ``obj`` as plain data that ``torch.load(weights_only=True)`` can read (see the module docstring)."""
    import torch

    budget = _budget or _Budget()
    budget.items += 1
    if budget.items > MAX_ITEMS or _depth > MAX_DEPTH:
        return _opaque(obj, "too large or too deeply nested to send")
    t = type(obj)
    if obj is None or t in (bool, int, float, str, bytes):
        return obj
    if t is complex:
        return (_TAG, "complex", obj.real, obj.imag)
    if isinstance(obj, torch.Tensor):
        try:
            with torch.no_grad():
                plain = obj.detach()
                if type(plain) is not torch.Tensor:
                    plain = plain.as_subclass(torch.Tensor)
                if plain.layout != torch.strided or plain.is_meta or plain.device.type not in ("cpu", "cuda"):
                    return _opaque(obj, f"layout {plain.layout}, device {plain.device}")
                return plain.clone().contiguous()
        except BaseException:  # noqa: BLE001
            return _opaque(obj, "a tensor that could not be copied")
    if t is torch.Size:
        return torch.Size([int(d) for d in obj])
    if t in (torch.dtype, torch.device):
        return obj
    if t in (list, tuple):
        items = [encode(x, _depth + 1, budget) for x in obj]
        return items if t is list else tuple(items)
    if t is dict:
        out = {}
        for k, v in obj.items():
            if type(k) not in (str, int, bool, float) and k is not None:
                k = repr(_opaque(k))
            out[k] = encode(v, _depth + 1, budget)
        return out
    if t in (set, frozenset):
        return (_TAG, t.__name__, [encode(x, _depth + 1, budget) for x in obj])
    try:
        import numpy as np
    except ImportError:  # pragma: no cover
        np = None
    if np is not None:
        if t is np.ndarray:
            if obj.dtype.kind in "biufc" and obj.dtype.itemsize <= 16:
                return (_TAG, "ndarray", str(obj.dtype), torch.from_numpy(np.ascontiguousarray(obj).copy())
                        if obj.dtype.kind != "c" else _opaque(obj, "complex array"))
            return _opaque(obj, f"ndarray of dtype {obj.dtype}")
        if isinstance(obj, np.generic) and t.__module__ == "numpy":
            return (_TAG, "npscalar", str(obj.dtype), obj.item())
    return _opaque(obj)


def decode(obj: Any) -> Any:
    """Turn the tagged forms made by :func:`encode` back into values (judge side)."""
    from course.checks import Opaque

    t = type(obj)
    if t is list:
        return [decode(x) for x in obj]
    if t is dict:
        return {k: decode(v) for k, v in obj.items()}
    if t is tuple:
        if len(obj) >= 2 and obj[0] == _TAG and type(obj[1]) is str:
            kind = obj[1]
            if kind == "opaque" and len(obj) == 4:
                return Opaque(str(obj[2]), str(obj[3]))
            if kind == "complex" and len(obj) == 4:
                return complex(obj[2], obj[3])
            if kind in ("set", "frozenset") and len(obj) == 3:
                items = [decode(x) for x in obj[2]]
                try:
                    return set(items) if kind == "set" else frozenset(items)
                except TypeError:
                    return Opaque(kind, repr(items)[:300])
            if kind == "ndarray" and len(obj) == 4:
                import numpy as np
                import torch
                if type(obj[3]) is torch.Tensor:
                    return obj[3].numpy().astype(np.dtype(obj[2]), copy=False)
                return decode(obj[3])
            if kind == "npscalar" and len(obj) == 4:
                import numpy as np
                try:
                    return np.dtype(obj[2]).type(obj[3])
                except (TypeError, ValueError):
                    return Opaque("numpy scalar", repr(obj[3]))
        return tuple(decode(x) for x in obj)
    return obj


def dumps(result: dict) -> bytes:
    """Serialise a probe result record with ``torch.save`` (worker side)."""
    import torch

    buf = io.BytesIO()
    torch.save(result, buf)
    return buf.getvalue()


def loads(data: bytes) -> dict:
    """Load a probe result record with ``weights_only=True`` and decode it (judge side).

    Raises ``ValueError`` if it is too large, not loadable, or not a record.
    """
    import torch

    if len(data) > MAX_RESULT_BYTES:
        raise ValueError(f"the probe's result is {len(data) / 2**20:.0f} MiB, more than the "
                         f"{MAX_RESULT_BYTES / 2**20:.0f} MiB allowed")
    try:
        raw = torch.load(io.BytesIO(data), weights_only=True, map_location="cpu")
    except Exception as err:  # noqa: BLE001 - any malformed file
        raise ValueError(f"the probe's result could not be read safely ({type(err).__name__})") from None
    if type(raw) is not dict or "ok" not in raw or type(raw["ok"]) is not bool:
        raise ValueError("the probe's result is not a result record")
    out = {"ok": raw["ok"]}
    for key in ("error", "where"):
        if type(raw.get(key)) is str:
            out[key] = raw[key][:4000]
    if "value" in raw:
        out["value"] = decode(raw["value"])
    if type(raw.get("nonce")) is int:
        out["nonce"] = raw["nonce"]
    return out


def read_result(path: Path) -> dict:
    """Read a probe's result file (judge side); raise ``ValueError`` if missing or unsafe."""
    path = Path(path)
    if not path.is_file():
        raise ValueError("the probe wrote no result")
    size = path.stat().st_size
    if size > MAX_RESULT_BYTES:
        raise ValueError(f"the probe's result is {size / 2**20:.0f} MiB, more than allowed")
    return loads(path.read_bytes())


def seed_all(seed: int) -> None:
    """Seed ``random``, NumPy and torch (both sides do this before each probe)."""
    import torch

    random.seed(seed)
    torch.manual_seed(seed)
    try:
        import numpy as np
        np.random.seed(seed % 2 ** 32)
    except ImportError:  # pragma: no cover
        pass


def _student_frames(tb) -> str:
    """The last few frames of a traceback that are not this module: where in the student's code it failed."""
    frames = [f for f in traceback.extract_tb(tb) if not f.filename.endswith(("wire.py", "<probe>"))]
    lines = []
    for f in frames[-3:]:
        where = "your notebook" if "ipykernel" in f.filename or f.filename.startswith("<") else Path(f.filename).name
        lines.append(f"{where}, line {f.lineno}, in {f.name}: {(f.line or '').strip()}")
    return "\n".join(lines)


def probe_record(source: str, name: str, seed: int, nonce: int = 0, namespace: dict | None = None) -> dict:
    """Run probe ``name`` (defined by ``source``) on a shallow copy of ``namespace`` (default: the notebook's);
    return its result record (plain data, not yet serialised).

    Exceptions, ``SystemExit`` and interrupts become an error record; the judge decides what they cost.
    """
    record: dict[str, Any]
    if namespace is None:
        try:
            from IPython import get_ipython
            shell = get_ipython()
            namespace = shell.user_ns if shell is not None else {}
        except Exception:  # noqa: BLE001
            namespace = {}
    namespace = dict(namespace)
    namespace["__name__"] = "__probe__"
    try:
        exec(compile(source, "<probe>", "exec"), namespace)  # noqa: S102 - the judge's own probe code
        fn = namespace[name]
        seed_all(seed)
        value = fn(seed)
        record = {"ok": True, "value": encode(value), "nonce": nonce}
    except (Exception, SystemExit, KeyboardInterrupt) as err:  # noqa: BLE001
        kind = "interrupted (the test took too long)" if type(err) is KeyboardInterrupt else type(err).__name__
        text = str(err)
        record = {"ok": False, "error": f"{kind}: {text}"[:2000] if text else kind,
                  "where": _student_frames(err.__traceback__)[:2000], "nonce": nonce}
    return record


def run_probe(source: str, name: str, seed: int, out_path: str, nonce: int = 0) -> None:
    """Worker side: run probe ``name`` (defined by ``source``) in the notebook's namespace; write its result.

    The probe runs on a shallow copy of the user namespace, so it cannot
    clobber the notebook's names.
    """
    data = dumps(probe_record(source, name, seed, nonce))
    tmp = out_path + ".part"
    with open(tmp, "wb") as fh:
        fh.write(data)
    os.replace(tmp, out_path)
