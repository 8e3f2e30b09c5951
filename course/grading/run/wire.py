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

Nor can it make the judge allocate more than it was sent. Before loading,
:func:`loads` checks the file's size against the per-probe cap and reads the
zip archive's directory (``torch.save``'s format): every entry stored, not
compressed, and their sizes within the cap. After loading, and before
anything touches the values, :func:`validate` walks the result without
recursion: nesting depth, number of items (every visit counts, so shared
references cannot multiply), string and bytes lengths, and every tensor's
dtype, layout, contiguity, offset and storage size against its element count,
so a tiny storage viewed as a huge tensor with zero strides is refused. Past
a cap, the probe fails with the reason.
"""
from __future__ import annotations

import io
import os
import random
import traceback
from pathlib import Path
from typing import Any

from course.grading.config import Limits

MAX_RESULT_BYTES = Limits.probe_result_bytes  # the default per probe; a course sets its own in GradingLimits
MAX_DEPTH = 40
MAX_ITEMS = 200_000
MAX_STRING = 1 << 20  # characters (or bytes) of one string in a result
ERROR_CHARS = 300  # an exception text from the student's code, as the judge keeps it
WHERE_CHARS = 600  # the student's frames that raised it
_TAG = "__judge__"
_DTYPES = None  # the tensor dtypes a result may hold (filled on first use: needs torch)
_NUMPY_KINDS = "biufc"


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
                return Opaque(str(obj[2])[:100], str(obj[3])[:400])
            if kind == "complex" and len(obj) == 4:
                return complex(obj[2], obj[3])
            if kind in ("set", "frozenset") and len(obj) == 3:
                items = [decode(x) for x in obj[2]]
                try:
                    return set(items) if kind == "set" else frozenset(items)
                except TypeError:
                    return Opaque(kind, repr(items)[:300])
            if kind == "ndarray" and len(obj) == 4:
                import torch
                dtype = _numpy_dtype(obj[2])
                if type(obj[3]) is torch.Tensor and dtype is not None and dtype.itemsize <= obj[3].element_size():
                    return obj[3].numpy().astype(dtype, copy=False)
                return Opaque("numpy.ndarray", f"an array of dtype {str(obj[2])[:40]!r} that was not sent as numbers")
            if kind == "npscalar" and len(obj) == 4:
                dtype = _numpy_dtype(obj[2])
                try:
                    return dtype.type(obj[3]) if dtype is not None else Opaque("numpy scalar", repr(obj[3])[:300])
                except (TypeError, ValueError, OverflowError):
                    return Opaque("numpy scalar", repr(obj[3])[:300])
        return tuple(decode(x) for x in obj)
    return obj


def dumps(result: dict) -> bytes:
    """Serialise a probe result record with ``torch.save`` (worker side)."""
    import torch

    buf = io.BytesIO()
    torch.save(result, buf)
    return buf.getvalue()


def _numpy_dtype(name):
    """A NumPy dtype named by the result, if it is a plain number type (never a string or object dtype)."""
    import numpy as np

    try:
        dtype = np.dtype(str(name)[:20])
    except (TypeError, ValueError):
        return None
    return dtype if dtype.kind in _NUMPY_KINDS and dtype.itemsize <= 16 else None


def _allowed_dtypes() -> set:
    global _DTYPES
    if _DTYPES is None:
        import torch
        _DTYPES = {torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64, torch.uint16,
                   torch.uint32, torch.uint64, torch.float16, torch.bfloat16, torch.float32, torch.float64,
                   torch.complex64, torch.complex128}
    return _DTYPES


def check_archive(data: bytes, cap: int) -> None:
    """Refuse a ``torch.save`` file whose entries are compressed or add up to more than ``cap`` bytes."""
    import zipfile

    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            infos = zf.infolist()
    except (zipfile.BadZipFile, OSError, ValueError):
        raise ValueError("the probe's result is not in torch.save's format") from None
    if len(infos) > 4 * MAX_ITEMS // 100:
        raise ValueError(f"the probe's result holds {len(infos)} records, too many to read")
    total = 0
    for info in infos:
        if info.compress_type != zipfile.ZIP_STORED or info.file_size != info.compress_size:
            raise ValueError("the probe's result holds a compressed record (torch.save never writes one)")
        total += info.file_size
    if total > cap:
        raise ValueError(f"the probe's result unpacks to {total / 2**20:.0f} MiB, more than the "
                         f"{cap / 2**20:.0f} MiB allowed")


def validate(obj: Any, cap: int = MAX_RESULT_BYTES) -> None:
    """Walk a loaded result without recursion; raise ``ValueError`` if it could make the judge allocate more
    than it was sent (see the module docstring)."""
    import torch

    dtypes = _allowed_dtypes()
    items = 0
    tensor_bytes = 0
    todo = [(obj, 0)]
    while todo:
        x, depth = todo.pop()
        items += 1
        if items > MAX_ITEMS:
            raise ValueError(f"the probe's result has more than {MAX_ITEMS} items")
        if depth > MAX_DEPTH + 4:  # the record, the encoder's own cut-off and its tag
            raise ValueError(f"the probe's result is nested more than {MAX_DEPTH} levels deep")
        t = type(x)
        if x is None or t in (bool, int, float, complex, torch.dtype, torch.device):
            if t is int and abs(x).bit_length() > 4096:
                raise ValueError("the probe's result holds an integer with more than 4096 bits")
            continue
        if t in (str, bytes):
            if len(x) > MAX_STRING:
                raise ValueError(f"the probe's result holds a string of {len(x)} characters "
                                 f"(at most {MAX_STRING})")
            continue
        if t is torch.Size:
            if len(x) > 64:
                raise ValueError("the probe's result holds a torch.Size of more than 64 dimensions")
            continue
        if t is torch.Tensor:
            if x.layout != torch.strided or x.device.type != "cpu" or x.dtype not in dtypes or x.is_quantized:
                raise ValueError(f"the probe's result holds a tensor of an unexpected kind ({x.dtype}, {x.layout})")
            nbytes = x.numel() * x.element_size()
            if (x.storage_offset() != 0 or not x.is_contiguous()
                    or x.untyped_storage().nbytes() != nbytes):
                raise ValueError("the probe's result holds a tensor whose shape does not match its data "
                                 "(a view of a smaller storage)")
            tensor_bytes += nbytes
            if tensor_bytes > cap:
                raise ValueError(f"the probe's result holds more than {cap / 2**20:.0f} MiB of tensors")
            continue
        if t in (list, tuple):
            todo.extend((v, depth + 1) for v in x)
            continue
        if t is dict:
            for k, v in x.items():
                todo.append((k, depth + 1))
                todo.append((v, depth + 1))
            continue
        raise ValueError(f"the probe's result holds an object of type {t.__name__}, which is not plain data")


def loads(data: bytes, cap: int = MAX_RESULT_BYTES) -> dict:
    """Load a probe result record with ``weights_only=True``, check it, and decode it (judge side).

    Raises ``ValueError`` if it is too large, not loadable, not a record, or not plain data of its size.
    """
    import torch

    if len(data) > cap:
        raise ValueError(f"the probe's result is {len(data) / 2**20:.0f} MiB, more than the "
                         f"{cap / 2**20:.0f} MiB allowed")
    check_archive(data, cap)
    try:
        raw = torch.load(io.BytesIO(data), weights_only=True, map_location="cpu", mmap=False)
    except Exception as err:  # noqa: BLE001 - any malformed file
        raise ValueError(f"the probe's result could not be read safely ({type(err).__name__})") from None
    if type(raw) is not dict or "ok" not in raw or type(raw["ok"]) is not bool:
        raise ValueError("the probe's result is not a result record")
    validate(raw, cap)
    out = {"ok": raw["ok"]}
    for key, limit in (("error", ERROR_CHARS), ("where", WHERE_CHARS)):
        if type(raw.get(key)) is str:
            from course.grading.text import printable
            out[key] = printable(raw[key], limit)
    if "value" in raw:
        out["value"] = decode(raw["value"])
    if type(raw.get("nonce")) is int:
        out["nonce"] = raw["nonce"]
    exc = raw.get("exc")
    if type(exc) is dict:
        frames = exc.get("frames") if type(exc.get("frames")) is list else []
        out["exc"] = {
            "type": exc["type"][:100] if type(exc.get("type")) is str else "",
            "message": exc["message"][:ERROR_CHARS] if type(exc.get("message")) is str else "",
            "frames": [[f[0], f[1][:100], f[2][:300]] for f in frames[-8:]
                       if type(f) in (list, tuple) and len(f) == 3 and type(f[0]) is int
                       and type(f[1]) is str and type(f[2]) is str]}
    if not out["ok"]:
        # Written by the student's process: by default nothing of it is shown but a vetted type name and
        # PyTorch's fixed texts; the worker, which holds the notebook, adds the student's own lines.
        out["error"], out["where"] = failure_text(out, set(), "")
    return out


def read_result(path: Path, cap: int = MAX_RESULT_BYTES, keep_bytes: bool = False):
    """Read a probe's result file (judge side); raise ``ValueError`` if missing or unsafe. Never follows a link.

    Returns the decoded record, or ``(record, the file's bytes)`` with ``keep_bytes``.
    """
    path = Path(path)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        raise ValueError("the probe wrote no result") from None
    except OSError:
        raise ValueError("the probe's result is not a plain file") from None
    try:
        import stat
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise ValueError("the probe's result is not a plain file")
        if st.st_size > cap:
            raise ValueError(f"the probe's result is {st.st_size / 2**20:.0f} MiB, more than the "
                             f"{cap / 2**20:.0f} MiB allowed")
        with os.fdopen(os.dup(fd), "rb") as fh:
            data = fh.read(cap + 1)
    finally:
        os.close(fd)
    rec = loads(data, cap)
    return (rec, data) if keep_bytes else rec


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


def _student_exception(err: BaseException) -> dict:
    """The exception as structured data (type name, message, the student's frames): the judge rebuilds what the
    student sees from it, keeping only what it can vouch for (:func:`failure_text`)."""
    try:
        frames = [[int(f.lineno or 0), str(f.name), (f.line or "").strip()]
                  for f in traceback.extract_tb(err.__traceback__)
                  if not f.filename.endswith(("wire.py", "<probe>"))][-8:]
    except BaseException:  # noqa: BLE001 - a hostile traceback
        frames = []
    try:
        text = str(err)[:ERROR_CHARS]
    except BaseException:  # noqa: BLE001 - a hostile __str__
        text = ""
    return {"type": type(err).__name__[:100], "message": text, "frames": frames}


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
        try:
            text = str(err)
        except BaseException:  # noqa: BLE001 - a hostile __str__
            text = ""
        record = {"ok": False, "error": f"{kind}: {text}"[:ERROR_CHARS] if text else kind,
                  "where": _student_frames(err.__traceback__)[:WHERE_CHARS], "nonce": nonce,
                  "exc": _student_exception(err)}
    return record


# --- judge side: what a student sees of an exception raised during a hidden test ---------------------------

# Fixed texts of PyTorch's own errors that say what went wrong without quoting any input (shown as they are
# when an exception's message starts with one).
KNOWN_MESSAGES = (
    "element 0 of tensors does not require grad and does not have a grad_fn",
    "Trying to backward through the graph a second time",
    "a leaf Variable that requires grad is being used in an in-place operation.",
    "one of the variables needed for gradient computation has been modified by an inplace operation",
    "grad can be implicitly created only for scalar outputs",
    "Can't call numpy() on Tensor that requires grad.",
    "Expected all tensors to be on the same device",
    "mat1 and mat2 shapes cannot be multiplied",
    "The size of tensor a",
    "Tensors must have same number of dimensions",
    "expected scalar type",
    "Found dtype",
)
HIDDEN_MESSAGE = ("its message is not shown: while the hidden tests run, the grader shows only your own code's "
                  "lines; run your function on a similar input in your notebook to see it")


def notebook_text(nb) -> tuple[set[str], str]:
    """The stripped non-empty lines of a notebook's code cells, and all of its code as one text (judge side)."""
    code = "\n".join(c.get("source", "") if isinstance(c.get("source", ""), str) else "".join(c.get("source"))
                     for c in nb.get("cells", []) if isinstance(c, dict) and c.get("cell_type") == "code")
    return {line.strip() for line in code.splitlines() if line.strip()}, code


def _exception_type(name: str, code: str) -> str:
    import builtins
    import re as _re

    if not _re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]{0,59}", name or ""):
        return "an exception"
    known = getattr(builtins, name, None)
    if isinstance(known, type) and issubclass(known, BaseException):
        return name
    try:
        import torch
        t = getattr(torch, name, None)
        if isinstance(t, type) and issubclass(t, BaseException):
            return name
    except ImportError:  # pragma: no cover
        pass
    if _re.search(rf"\bclass\s+{name}\b", code):
        return name
    return "an exception"


def raw_failure_text(rec: dict) -> tuple[str, str]:
    """``(error, where)`` as the process that raised wrote them (printable, capped): for trusted runs only (the
    reference, the sweep), where the instructor needs the whole message; never for a student's run."""
    from course.grading.text import printable

    exc = rec.get("exc") if type(rec.get("exc")) is dict else {}
    kind, message = exc.get("type") or "an exception", exc.get("message") or ""
    where = "\n".join(f"line {n}, in {name}: {line}" for n, name, line in exc.get("frames", [])[-3:])
    return (printable(f"{kind}: {message}" if message else kind, ERROR_CHARS),
            printable(where, WHERE_CHARS))


def failure_text(rec: dict, lines: set[str], code: str) -> tuple[str, str]:
    """What the student sees of an exception their code raised during a hidden test: ``(error, where)``.

    Judge side. The record comes from the student's process, where code can read the probe that calls it and
    write anything into an exception (its message, its type's name, the lines a traceback shows). So only
    what the judge can vouch for is kept: the exception's type if it is a builtin or PyTorch exception or a
    class the notebook defines; its message only if the notebook holds it verbatim (the student's own
    ``raise ValueError("...")``) or it starts with one of PyTorch's fixed texts; and the frames whose line is
    a line of the student's notebook, in a function the notebook names.
    """
    import re as _re

    exc = rec.get("exc") if type(rec.get("exc")) is dict else {}
    kind = _exception_type(exc.get("type", ""), code)
    message = (exc.get("message") or "").strip()
    if not message:
        error = kind
    elif message in code and len(message) <= ERROR_CHARS:
        error = f"{kind}: {message}"
    else:
        known = next((k for k in KNOWN_MESSAGES if message.startswith(k)), None)
        error = f"{kind}: {known} ..." if known else f"{kind} ({HIDDEN_MESSAGE})"
    shown = []
    for lineno, name, line in exc.get("frames", [])[-8:]:
        if not line or line not in lines:
            continue
        if name != "<module>" and not (_re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]{0,59}", name)
                                       and _re.search(rf"\b{name}\b", code)):
            continue
        shown.append(f"your notebook, line {lineno if 0 < lineno < 100_000 else '?'}, in {name}: {line}")
    return error, "\n".join(shown[-3:])[:WHERE_CHARS]


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
