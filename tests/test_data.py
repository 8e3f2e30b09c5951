"""Tests for course.data: JPEG folders, datasets, pickled sizes and throughput timing."""
from __future__ import annotations

import json
import os
import pickle
import shutil
import subprocess
import tempfile
import time

import pytest
import torch
from torch.utils.data import DataLoader
from pathlib import Path

from course import data as D


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    root = tmp_path_factory.mktemp("jpegs")
    return root, D.make_jpeg_folder(root, classes=("dog", "cat"), per_class=3, size=(20, 24), seed=0)


def test_make_jpeg_folder_layout_and_labels(folder):
    root, samples = folder
    assert sorted(os.listdir(root)) == ["cat", "dog"]
    assert len(samples) == 6
    # labels follow sorted class names; samples are sorted by (class, file)
    assert [label for _, label in samples] == [0, 0, 0, 1, 1, 1]
    assert all(os.path.basename(os.path.dirname(p)) == ("cat" if lab == 0 else "dog") for p, lab in samples)
    assert samples == sorted(samples)


def test_read_tv_and_read_pil_agree(folder):
    _, samples = folder
    a = D.read_tv(samples[0][0])
    b = D.read_pil(samples[0][0])
    assert a.dtype == torch.uint8 and a.shape == (3, 20, 24)
    assert b.dtype == torch.float32 and b.shape == (3, 20, 24)
    assert (a.float() / 255 - b).abs().max().item() < 0.05
    assert torch.equal(D.to_float01(a.clone()), a.float() / 255)


def test_make_test_folder_unsorted_listing_and_fingerprints(tmp_path):
    classes, samples = D.make_test_folder(tmp_path, n_classes=3, per_class=2, size=(10, 14), seed=3)
    assert classes == sorted(classes)
    listed = [n for n in os.listdir(tmp_path) if n in classes]
    assert listed != classes  # the point of the helper
    assert [D.fingerprint(D.read_tv(p)) for p, _ in samples] == list(range(6))
    # the fingerprint is layout-invariant
    img = D.read_tv(samples[4][0])
    assert D.fingerprint(img.permute(1, 2, 0)) == 4
    assert [lab for _, lab in samples] == [0, 0, 1, 1, 2, 2]


def test_decode_dataset_modes_and_validation(folder):
    _, samples = folder
    tv = D.DecodeDataset(samples, decoder="torchvision")
    pil = D.DecodeDataset(samples, decoder="pil")
    img, label = tv[3]
    assert img.dtype == torch.uint8 and label == 1 and len(tv) == 6
    assert pil[3][0].dtype == torch.float32
    assert D.DecodeDataset(samples, transform=D.to_float01)[0][0].dtype == torch.float32
    with pytest.raises(ValueError):
        D.DecodeDataset(samples, decoder="cv2")


def test_pickled_size_lazy_vs_decoded(folder):
    _, samples = folder
    lazy, eager = D.DecodeDataset(samples), D.DecodedListDataset(samples)
    assert D.pickled_size(lazy) == len(pickle.dumps(lazy, protocol=pickle.HIGHEST_PROTOCOL))
    assert D.pickled_size(eager) > D.pickled_size(lazy) + 6 * 3 * 20 * 24
    assert torch.equal(eager[2][0], lazy[2][0]) and eager[2][1] == lazy[2][1] and len(eager) == 6


def test_worker_probe_dataset_main_and_workers():
    main = D.WorkerProbeDataset(2)[0]
    assert main["worker_id"] is None and main["pid"] == os.getpid()
    rows = list(DataLoader(D.WorkerProbeDataset(4), batch_size=None, num_workers=2))
    assert {r["worker_id"] for r in rows} == {0, 1}
    assert os.getpid() not in {r["pid"] for r in rows}
    assert all(r["torch_threads"] == 1 for r in rows)
    assert len({r["torch_seed"] for r in rows}) == 2


def test_busy_dataset_takes_its_time():
    ds = D.BusyDataset(n=3, ms=5.0)
    assert len(ds) == 3 and ds[1] == (1, os.getpid())
    rate = D.measure_throughput(ds, num_workers=0, batch_size=1, epochs=1)
    assert 0 < rate < 1000 / 5.0 * 1.05


def test_measure_throughput_counts_images_and_stops_workers(folder):
    _, samples = folder
    import multiprocessing as mp
    ds = D.DecodeDataset(samples, transform=D.to_float01)
    before = set(mp.active_children())   # other tests' children on this worker are not this test's business
    for workers, persistent in ((0, True), (1, True), (2, False)):
        rate = D.measure_throughput(ds, num_workers=workers, persistent_workers=persistent, batch_size=4, epochs=2)
        assert rate > 0
    assert [p for p in mp.active_children() if p.is_alive() and p not in before] == []


def test_make_test_folder_colour_modes(tmp_path):
    from PIL import Image

    _, samples = D.make_test_folder(tmp_path, n_classes=2, per_class=2, size=(10, 12), seed=4, modes={1: "L", 2: "CMYK"})
    assert [Image.open(p).mode for p, _ in samples] == ["RGB", "L", "CMYK", "RGB"]
    # read_tv asks for RGB: every file comes back as (3, H, W), and the fingerprint survives the colour mode
    assert all(tuple(D.read_tv(p).shape) == (3, 10, 12) for p, _ in samples)
    assert [D.fingerprint(D.read_tv(p)) for p, _ in samples] == [0, 1, 2, 3]
    with pytest.raises(ValueError):
        D.make_jpeg_folder(tmp_path / "bad", classes=("a",), per_class=1, modes={0: "P"})


def test_smaps_private_dirty_and_touch():
    import numpy as np
    from PIL import Image

    mem = D.smaps_rollup()
    assert {"Rss", "Private_Dirty"} <= set(mem) and all(isinstance(v, int) for v in mem.values())
    assert D.private_dirty() > 0
    # A sleeping child's memory stays still between two reads (this process's own can move:
    # the pytest process has other threads allocating), so the two reads agree exactly.
    child = subprocess.Popen(["sleep", "60"])
    try:
        settled, last = time.monotonic() + 30, None  # until it sleeps: a loaded machine may still be starting it
        while (now := D.private_dirty(child.pid)) != last and time.monotonic() < settled:
            last = now
            time.sleep(0.2)
        assert D.private_dirty(child.pid) == D.smaps_rollup(child.pid)["Private_Dirty"] > 0
    finally:
        child.kill()
        child.wait()
    t = torch.full((3 * 4096,), 2, dtype=torch.uint8)
    assert D.touch(t) == 6  # one byte per 4 KiB page
    assert D.touch(np.full(2 * 4096, 3, dtype=np.uint8)) == 6
    assert D.touch(bytes([1]) * 8192) == 2
    assert D.touch([t, (b"\x05",), {"k": np.zeros(0, np.uint8)}]) == 6 + 5
    assert D.touch(Image.new("L", (64, 64), 7)) == 7  # 4096 pixels: one sampled
    assert D.touch(object()) == 0


def test_memory_probe_dataset_reports_this_process():
    import gc

    r = D.MemoryProbeDataset([b"ab"])[0]
    assert r["pid"] == os.getpid() and r["items"] == 1 and r["private_dirty"] > 0 and r["rss"] >= r["private_dirty"]
    # the collector paused for the touch only; one-sided, as below (another thread may free pages meanwhile)
    assert r["copied_by_reading"] < 2**20 and gc.isenabled()
    gc.disable()
    try:
        D.MemoryProbeDataset([b"ab"])[0]
        assert not gc.isenabled()  # and left as the caller had it
    finally:
        gc.enable()
    assert len(D.MemoryProbeDataset([])) == 1
    assert "copied_by_collection" not in r
    gc.collect()  # the garbage this process already holds, freed before the probe's own collection
    r = D.MemoryProbeDataset([b"ab"], collect=True)[0]
    # In this process nothing is shared, so the collection copies nothing. It may free objects, and the allocator may
    # give their pages back: stop 47's CI measured -7.6 MiB here (an xdist worker holds much garbage), so the bound
    # is one-sided: a collection here adds no private pages.
    assert r["copied_by_collection"] < 2**20 and gc.isenabled()


_FORK_MEMORY = """
import json, sys
import numpy as np
from course import data as D

strings = [f"/some/path/img_{i:08d}.jpg" for i in range(400_000)]  # 10.3 MiB as one NumPy array
arrow_file = sys.argv[1] + "/paths.arrow"
D.write_arrow_strings(arrow_file, strings)
mem = D.worker_memory({"none": [], "list": strings, "array": [np.array(strings, dtype="S")],
                       "arrow": [D.open_arrow_column(arrow_file)]}, context="fork")
print(json.dumps(mem))
"""


_FORK_COLLECTION = """
import gc, json
from course import data as D

records = [{"path": f"img_{i:08d}.jpg", "label": i % 1000} for i in range(250_000)]  # containers the collector scans
mem = D.worker_memory({"as is": []}, context="fork", collect=True)
gc.freeze()
try:
    mem.update(D.worker_memory({"frozen": []}, context="fork", collect=True))
finally:
    gc.unfreeze()
print(json.dumps(mem))
"""


def test_a_collection_in_a_fork_worker_copies_the_parent_s_containers_unless_frozen():
    import multiprocessing as mp
    import sys

    if "fork" not in mp.get_all_start_methods() or not Path("/proc/self/smaps_rollup").exists():
        pytest.skip("needs fork and /proc/self/smaps_rollup")
    run = subprocess.run([sys.executable, "-c", _FORK_COLLECTION], capture_output=True, text=True, timeout=300,
                         cwd=Path(D.__file__).resolve().parents[1])
    assert run.returncode == 0, run.stderr[-3000:]
    mem = json.loads(run.stdout.strip().splitlines()[-1])
    # 250,000 dicts of about 180 bytes: one full collection in a worker that read nothing copies their pages
    assert mem["as is"]["copied_by_collection"] > 16 * 2**20, mem
    assert mem["frozen"]["copied_by_collection"] < 4 * 2**20, mem  # gc.freeze() in the parent: none scanned
    assert mem["as is"]["copied_by_reading"] < 2**20 and mem["frozen"]["copied_by_reading"] < 2**20


def _filesystem(path: Path) -> str:
    """The type of the file system that holds ``path`` (from /proc/mounts: the longest mount point above it)."""
    best, kind = "", ""
    for line in Path("/proc/mounts").read_text().splitlines():
        parts = line.split()
        point = parts[1].encode().decode("unicode_escape")
        if (str(path) == point or str(path).startswith(point.rstrip("/") + "/")) and len(point) > len(best):
            best, kind = point, parts[2]
    return kind


def test_worker_memory_fork_copies_python_objects_not_arrays(tmp_path):
    import multiprocessing as mp
    import sys

    if "fork" not in mp.get_all_start_methods() or not Path("/proc/self/smaps_rollup").exists():
        pytest.skip("needs fork and /proc/self/smaps_rollup")
    # In a fresh process: a page a forked worker shares with its parent counts as the worker's own (Private_Dirty)
    # once the parent writes it and so takes a copy of its own. An xdist worker's parent writes its heap from
    # other threads, so there a worker reading nothing new came out several MiB "copied" (stop 37: the Arrow map
    # 5.2 MiB; stop 42's CI: the array 5.9 MiB; this stop: the Arrow map 2.6 MiB with the collector paused).
    # An independent review reproduced it: a parent thread writing its heap gave the Arrow worker 0.7 to 8.8 MiB.
    run = subprocess.run([sys.executable, "-c", _FORK_MEMORY, str(tmp_path)], capture_output=True, text=True,
                         timeout=300, cwd=Path(D.__file__).resolve().parents[1])
    assert run.returncode == 0, run.stderr[-3000:]
    mem = json.loads(run.stdout.strip().splitlines()[-1])
    copied = {name: r["copied_by_reading"] for name, r in mem.items()}
    assert len({r["pid"] for r in mem.values()}) == 4
    assert copied["list"] > 16 * 2**20  # refcount writes copied the pages
    # ... when the worker read them, not when it started: before reading, the list's worker held no more than the
    # workers whose payload holds no Python object per item (each worker's own start-up writes a few MiB)
    start = {name: r["private_dirty_at_start"] for name, r in mem.items()}
    assert start["list"] < max(start["none"], start["array"], start["arrow"]) + 4 * 2**20, start
    # a copy of the array would be 10 MiB or more
    assert copied["none"] < 2**20 and copied["array"] < 2**20, copied
    arrow_size = (tmp_path / "paths.arrow").stat().st_size
    assert arrow_size > 8 * 2**20 and mem["arrow"]["checksum"] != 0
    if _filesystem(tmp_path) == "tmpfs":
        # a tmpfs file's pages are always dirty: mapped by one process only, they count as its Private_Dirty
        assert copied["arrow"] < copied["list"] / 2
    else:
        # the map's pages are the file's (written back by write_arrow_strings), shared through the page cache
        assert copied["arrow"] < arrow_size / 8, copied


def test_shm_usage():
    used, total = D.shm_usage()
    assert 0 <= used <= total
    assert D.shm_usage("/no/such/folder") == (0, 0)


def test_stream_dataset_duplicates_unless_sharded():
    assert list(D.StreamDataset(3)) == [0, 1, 2]
    dup = sorted(int(v) for v in DataLoader(D.StreamDataset(4), batch_size=None, num_workers=2))
    one = sorted(int(v) for v in DataLoader(D.StreamDataset(4, shard=True), batch_size=None, num_workers=2))
    assert dup == [0, 0, 1, 1, 2, 2, 3, 3] and one == [0, 1, 2, 3]


def test_counting_dataset_counts_in_workers():
    import multiprocessing as mp

    ctx = mp.get_context("fork" if "fork" in mp.get_all_start_methods() else "spawn")
    counter = ctx.Value("i", 0)
    ds = D.CountingDataset(6, counter)
    assert len(ds) == 6 and ds[2] == 2 and counter.value == 1
    assert sorted(int(v) for v in DataLoader(ds, batch_size=None, num_workers=1, multiprocessing_context=ctx)) == list(range(6))
    assert counter.value == 7


def test_memmap_rows_pickle_only_the_path(tmp_path):
    path = tmp_path / "rows.u8"
    assert D.write_memmap(path, 5, 300, seed=1) == (5, 300)
    assert path.stat().st_size == 1500
    ds = D.MemmapRows(path, (5, 300))
    row = ds[3]
    assert row.dtype == torch.uint8 and tuple(row.shape) == (300,) and len(ds) == 5
    clone = pickle.loads(pickle.dumps(ds))  # the open map is not pickled
    assert clone._opened is None and torch.equal(clone[3], row) and D.pickled_size(ds) < 300
    got = sorted((int(r[0]), int(r[1])) for r in DataLoader(ds, batch_size=None, num_workers=1))
    assert got == sorted((int(ds[i][0]), int(ds[i][1])) for i in range(5))


def test_arrow_column_maps_lazily_and_pickles_as_its_path(tmp_path):
    strings = ["a", "", "héllo wörld", "x" * 5000] * 3
    path = tmp_path / "s.arrow"
    assert D.write_arrow_strings(path, strings, column="text") == path.stat().st_size > 5000
    col = D.open_arrow_column(path, "text")
    assert col.to_pylist() == strings
    ds = D.ArrowColumn(path, "text")
    assert ds._opened is None and len(ds) == 12 and ds[2] == "héllo wörld" and ds._opened is not None
    clone = pickle.loads(pickle.dumps(ds))      # the open map is not pickled
    assert clone._opened is None and clone[3] == "x" * 5000 and D.pickled_size(ds) < 300
    got = list(DataLoader(ds, batch_size=None, num_workers=1, multiprocessing_context="spawn"))
    assert got == strings
    assert D.touch([col]) > 0 and D.touch(col) == D.touch([col])
    with pytest.raises(KeyError):
        D.open_arrow_column(path, "path")


def test_noisy_rows_own_rng_is_a_function_of_the_sample():
    a, b = D.NoisyRows(10, own_rng=True, seed=3), D.NoisyRows(10, own_rng=True, seed=3)
    assert torch.equal(a[4], b[4]) and torch.equal(a[4], a[4]) and a[4].floor().eq(4).all()
    assert not torch.equal(a[4], D.NoisyRows(10, own_rng=True, seed=4)[4])
    b.set_epoch(1)
    assert not torch.equal(a[4], b[4])
    plain = D.NoisyRows(10)
    assert not torch.equal(plain[4], plain[4]) and a[4].dtype == torch.float64 and len(plain) == 10


def test_stateful_dataloader_resumes_mid_epoch_bit_for_bit_with_spawn_workers():
    """What Chapter 5's Trap 5 cell says the tests check: with two spawn workers, a StatefulDataLoader stopped after 3
    batches and resumed from its state_dict in a new loader yields exactly the rest of the epoch (noise seeded per
    sample); the state holds a snapshot of each worker. The plain DataLoader restarts the epoch."""
    import warnings

    from torchdata.stateful_dataloader import StatefulDataLoader

    def make(cls=StatefulDataLoader):
        return cls(D.NoisyRows(24, own_rng=True), batch_size=4, shuffle=True, num_workers=2,
                   multiprocessing_context="spawn", generator=torch.Generator().manual_seed(0))

    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*set_vital.*")
        whole = list(make())
        first = make()
        it = iter(first)
        before = [next(it) for _ in range(3)]
        state = first.state_dict()
        del it
        again = make()
        again.load_state_dict(pickle.loads(pickle.dumps(state)))   # through a checkpoint file's bytes
        rest = list(again)
    assert len(whole) == 6 and len(rest) == 3
    assert all(torch.equal(x, y) for x, y in zip(before + rest, whole))
    assert sorted(torch.cat(before + rest)[:, 0].floor().long().tolist()) == list(range(24))
    assert len(state["_snapshot"]["_worker_snapshots"]) == 2
    restarted = DataLoader(D.NoisyRows(24, own_rng=True), batch_size=4, shuffle=True)
    assert not hasattr(restarted, "state_dict")     # the plain loader can only start the epoch over
    assert sorted(torch.cat(list(restarted))[:, 0].floor().long().tolist()) == list(range(24))


def test_own_rng_dataset_and_reseed():
    ds = D.OwnRngDataset(4, seed=0)
    i, w, r = ds[1]
    assert (i, w) == (1, -1) and 0 <= r < 1

    def draws(fn):
        g = torch.Generator().manual_seed(3)
        return [(int(a), int(b), float(c)) for a, b, c in
                DataLoader(D.OwnRngDataset(4), batch_size=None, num_workers=2, worker_init_fn=fn, generator=g)]

    same = draws(None)
    by_worker = {}
    for _, w, r in same:
        by_worker.setdefault(w, []).append(r)
    assert by_worker[0] == by_worker[1]  # every worker copied the same generator
    fixed = draws(D.reseed_own_rng)
    assert len({r for *_, r in fixed}) == 4 and fixed == draws(D.reseed_own_rng)
    D.reseed_own_rng(0)  # outside a worker: does nothing


def test_make_test_folder_lists_unsorted_on_tmpfs_too():
    """tmpfs (the grading sandbox's /tmp) lists the newest entry first: creating the class folders in
    reverse-sorted order would list them sorted there, and a listdir-order mutant would pass."""
    import os
    import shutil
    import tempfile
    if not os.path.isdir("/dev/shm"):
        pytest.skip("no /dev/shm")
    for seed in range(10):
        d = tempfile.mkdtemp(dir="/dev/shm")
        try:
            classes, _ = D.make_test_folder(os.path.join(d, "x"), n_classes=4, per_class=1, size=(8, 8), seed=seed)
            assert os.listdir(os.path.join(d, "x")) != classes
        finally:
            shutil.rmtree(d)


def test_make_test_folder_stray_files_in_root(tmp_path):
    classes, samples = D.make_test_folder(tmp_path, n_classes=2, per_class=2, stray=("README.txt", "cover.jpg"))
    entries = sorted(os.listdir(tmp_path))
    assert entries == sorted(classes + ["README.txt", "cover.jpg"])
    assert (tmp_path / "README.txt").is_file() and len(samples) == 4
    assert all(os.path.dirname(p) != str(tmp_path) for p, _ in samples)


def test_stop_workers_stops_persistent_workers(folder):
    loader = DataLoader(D.DecodeDataset(folder[1][:4]), batch_size=2, num_workers=1, persistent_workers=True)
    next(iter(loader))
    workers = list(loader._iterator._workers)
    assert workers and all(w.is_alive() for w in workers)
    D.stop_workers(loader)
    assert not any(w.is_alive() for w in workers)
    D.stop_workers(DataLoader(D.DecodeDataset(folder[1][:2])))  # nothing to stop: no error
