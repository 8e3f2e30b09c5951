"""course.grading.run.wire: what crosses from a student's kernel to the judge is plain data that cannot run code."""
import io
import os
import pickle
import shlex

import numpy as np
import pytest
import torch

from course.checks import Opaque, describe
from course.grading.run import wire


def roundtrip(value):
    return wire.loads(wire.dumps({"ok": True, "value": wire.encode(value), "nonce": 3}))


def test_plain_values_survive_with_their_types():
    value = {"t": torch.arange(6.).reshape(2, 3), "i": 3, "f": 2.5, "b": True, "s": "x", "n": None,
             "tup": (1, [2, 3]), "size": torch.Size([2, 3]), "dtype": torch.float16, "dev": torch.device("cpu"),
             "c": 1 + 2j, "set": {1, 2}, "by": b"ab", 7: "int key"}
    got = roundtrip(value)
    assert got["ok"] is True and got["nonce"] == 3
    v = got["value"]
    assert type(v["t"]) is torch.Tensor and torch.equal(v["t"], value["t"])
    assert type(v["i"]) is int and type(v["f"]) is float and v["b"] is True and v["n"] is None
    assert type(v["tup"]) is tuple and type(v["tup"][1]) is list
    assert type(v["size"]) is torch.Size and v["size"] == (2, 3)
    assert v["dtype"] is torch.float16 and v["dev"] == torch.device("cpu")
    assert v["c"] == 1 + 2j and v["set"] == {1, 2} and v["by"] == b"ab" and v[7] == "int key"


def test_tensors_are_detached_copies_and_subclasses_become_plain():
    x = torch.ones(3, requires_grad=True)
    y = torch.nn.Parameter(torch.ones(2))
    got = roundtrip({"g": x * 2, "p": y, "view": torch.arange(10.)[::2]})["value"]
    assert type(got["g"]) is torch.Tensor and not got["g"].requires_grad and got["g"].grad_fn is None
    assert type(got["p"]) is torch.Tensor
    assert got["view"].tolist() == [0., 2., 4., 6., 8.]


def test_numpy_round_trips_as_numpy():
    got = roundtrip({"a": np.arange(4, dtype=np.int16), "s": np.float32(1.5)})["value"]
    assert type(got["a"]) is np.ndarray and got["a"].dtype == np.int16 and got["a"].tolist() == [0, 1, 2, 3]
    assert type(got["s"]) is np.float32 and got["s"] == 1.5


class Sneaky(int):
    def __eq__(self, other):
        return True


def test_everything_else_becomes_opaque():
    got = roundtrip({"m": torch.nn.Linear(2, 2), "f": len, "sub": Sneaky(3)})["value"]
    for key in ("m", "f", "sub"):
        assert type(got[key]) is Opaque
    assert "Linear" in got["m"].type_name and "Sneaky" in got["sub"].type_name
    assert describe(got["m"]).startswith("an object of type torch.nn")


def test_deep_or_huge_structures_are_cut():
    deep = []
    cur = deep
    for _ in range(100):
        cur.append([])
        cur = cur[0]
    got = roundtrip(deep)["value"]
    depth = 0
    while type(got) is list and got:
        got = got[0]
        depth += 1
    assert depth <= wire.MAX_DEPTH + 1 and type(got) is Opaque


class Exploit:
    def __init__(self, marker):
        self.marker = str(marker)

    def __reduce__(self):
        return (os.system, (f"touch {shlex.quote(self.marker)}",))


def test_a_pickle_that_runs_code_is_refused(tmp_path):
    marker = tmp_path / "pwned"  # a name of this test's own: a fixed one in /tmp could be planted by anyone
    path = tmp_path / "r.pt"
    torch.save({"ok": True, "value": Exploit(marker)}, path)
    with pytest.raises(ValueError, match="could not be read safely"):
        wire.read_result(path)
    raw = pickle.dumps({"ok": True, "value": Exploit(marker)})
    with pytest.raises(ValueError):
        wire.loads(raw)
    assert not marker.exists()


def test_malformed_records_are_refused(tmp_path):
    with pytest.raises(ValueError, match="no result"):
        wire.read_result(tmp_path / "missing.pt")
    buf = io.BytesIO()
    torch.save([1, 2], buf)
    with pytest.raises(ValueError, match="not a result record"):
        wire.loads(buf.getvalue())
    with pytest.raises(ValueError, match="more than"):
        wire.loads(b"x" * (wire.MAX_RESULT_BYTES + 1))


def test_run_probe_outside_ipython_records_errors(tmp_path):
    out = tmp_path / "r.pt"
    wire.run_probe("def p(seed):\n    return {'seed': seed, 'x': torch.zeros(2)}\n", "p", 5, str(out), nonce=9)
    rec = wire.read_result(out)
    assert rec["ok"] is False and "NameError" in rec["error"]  # the notebook's namespace has no torch here
    wire.run_probe("import torch\ndef p(seed):\n    return {'seed': seed, 'r': torch.rand(1)}\n", "p", 5, str(out), nonce=9)
    rec = wire.read_result(out)
    assert rec["ok"] and rec["value"]["seed"] == 5 and rec["nonce"] == 9
    torch.manual_seed(5)
    assert torch.equal(rec["value"]["r"], torch.rand(1)), "the probe runs right after seeding with its seed"
    wire.run_probe("def p(seed):\n    raise SystemExit(3)\n", "p", 1, str(out))
    assert "SystemExit" in wire.read_result(out)["error"]


# --- results crafted to make the judge allocate more than it was sent ---------------------------------

def _record(value) -> bytes:
    buf = io.BytesIO()
    torch.save({"ok": True, "value": value, "nonce": 1}, buf)
    return buf.getvalue()


def test_a_tiny_storage_viewed_as_a_huge_tensor_is_refused():
    import resource
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    data = _record(torch.zeros(1, dtype=torch.float64).expand(4 * 2 ** 30))  # 32 GiB if ever made contiguous
    assert len(data) < 4096
    with pytest.raises(ValueError, match="does not match its data"):
        wire.loads(data)
    data = _record(torch.zeros(4)[1:])  # an offset view
    with pytest.raises(ValueError, match="does not match its data"):
        wire.loads(data)
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 200 * 1024  # KiB


def test_shared_references_cannot_multiply():
    x = [0]
    for _ in range(60):
        x = [x, x]  # 2**60 items if walked as a tree
    with pytest.raises(ValueError, match="more than"):
        wire.loads(_record(x))


def test_many_views_of_one_storage_are_counted_once_each():
    big = torch.zeros(2 ** 20)
    with pytest.raises(ValueError):
        wire.loads(_record([big] * 64), cap=8 * 2 ** 20)


def test_compressed_entries_and_oversized_strings_are_refused():
    import zipfile
    data = _record(torch.zeros(10))
    src = zipfile.ZipFile(io.BytesIO(data))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for info in src.infolist():
            zf.writestr(info.filename, src.read(info.filename))
    with pytest.raises(ValueError, match="compressed"):
        wire.loads(out.getvalue())
    with pytest.raises(ValueError, match="string of"):
        wire.loads(_record("x" * (wire.MAX_STRING + 1)))


def test_numpy_dtypes_from_the_result_are_numbers_only():
    from course.checks import Opaque
    rec = wire.loads(_record(("__judge__", "ndarray", "U100000000", torch.zeros(2))))
    assert type(rec["value"]) is Opaque
    rec = wire.loads(_record(("__judge__", "npscalar", "S99999999", 3)))
    assert type(rec["value"]) is Opaque
    rec = wire.loads(_record(("__judge__", "ndarray", "float32", torch.arange(3.0))))
    assert rec["value"].tolist() == [0.0, 1.0, 2.0]


def test_error_texts_are_capped_and_printable():
    buf = io.BytesIO()
    torch.save({"ok": False, "error": "\x1b]0;pwned\x07" + "E" * 5000, "where": "W" * 5000}, buf)
    rec = wire.loads(buf.getvalue())
    assert "\x1b" not in rec["error"] and "\x07" not in rec["error"]
    assert len(rec["error"]) < wire.ERROR_CHARS + 80 and len(rec["where"]) < wire.WHERE_CHARS + 80


def test_result_files_that_are_links_or_pipes_are_refused(tmp_path):
    real = tmp_path / "real.pt"
    real.write_bytes(_record(1))
    os.symlink(real, tmp_path / "link.pt")
    with pytest.raises(ValueError, match="not a plain file"):
        wire.read_result(tmp_path / "link.pt")
    os.mkfifo(tmp_path / "pipe.pt")
    with pytest.raises(ValueError, match="not a plain file"):
        wire.read_result(tmp_path / "pipe.pt")
    assert wire.read_result(real)["value"] == 1


def test_saved_references_are_read_once_and_each_caller_gets_its_own_copy(tmp_path, monkeypatch):
    """One nbgrader autograde records a whole class against one references file: it is read once per process
    (not once per submission, which grew with the square of the class), and a verdict that changes a reference
    value changes nothing the next submission reads. A new file (another size or time) is read again."""
    from course.grading.judge import references

    path = tmp_path / "refs.pt"
    records = {seed: {"test_a": {"ok": True, "value": {"t": torch.arange(3.0) + seed, "n": seed}}}
               for seed in (11, 12, 13)}
    references.save(records, path)
    reads = []
    real = torch.load
    monkeypatch.setattr(torch, "load", lambda *a, **k: reads.append(1) or real(*a, **k))
    one = references.load_saved(path, 12)
    assert one["test_a"]["ok"] is True and one["test_a"]["value"]["n"] == 12
    assert torch.equal(one["test_a"]["value"]["t"], torch.tensor([12.0, 13.0, 14.0]))
    one["test_a"]["value"]["t"].add_(100)                # a verdict that changes its reference value in place
    one["test_a"]["value"]["n"] = -1
    again = references.load_saved(path, 12)
    assert torch.equal(again["test_a"]["value"]["t"], torch.tensor([12.0, 13.0, 14.0])) and again["test_a"]["value"]["n"] == 12
    assert references.load_saved(path, 99) is None
    every = references.load_saved(path)
    assert sorted(every) == [11, 12, 13] and every[13]["test_a"]["value"]["n"] == 13
    assert len(reads) == 1, f"the file was read {len(reads)} times"
    records[12]["test_a"]["value"]["n"] = 1212           # a new file in its place: read again
    references.save(records, path)
    os.utime(path, ns=(1, 1))
    assert references.load_saved(path, 12)["test_a"]["value"]["n"] == 1212 and len(reads) == 2
