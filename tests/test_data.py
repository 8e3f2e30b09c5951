"""Tests for course.data: JPEG folders, datasets, pickled sizes and throughput timing."""
from __future__ import annotations

import os
import pickle

import pytest
import torch
from torch.utils.data import DataLoader

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
    ds = D.DecodeDataset(samples, transform=D.to_float01)
    for workers, persistent in ((0, True), (1, True), (2, False)):
        rate = D.measure_throughput(ds, num_workers=workers, persistent_workers=persistent, batch_size=4, epochs=2)
        assert rate > 0
    import multiprocessing as mp
    assert [p for p in mp.active_children() if p.is_alive()] == []
