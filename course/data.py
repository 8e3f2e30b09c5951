"""JPEG folders, datasets and DataLoader timing for chapter 5 (everything module-level, so picklable).

The datasets here are defined in a module on purpose: under the ``spawn``
start method (the default on macOS and Windows) each DataLoader worker gets
the dataset by pickling, and pickle stores classes and functions by
reference (``module.qualname``). A class or lambda defined in a notebook
cannot be found by the worker; one defined here can.
"""
from __future__ import annotations

import os
import pickle
import random
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset

__all__ = ["make_jpeg_folder", "make_test_folder", "fingerprint", "BusyDataset", "DecodeDataset", "DecodedListDataset", "WorkerProbeDataset",
           "to_float01", "pickled_size", "measure_throughput", "read_tv", "read_pil"]


def _smooth_image(rng: np.random.Generator, h: int, w: int, level: float, texture: float) -> np.ndarray:
    """Return an (h, w, 3) uint8 image: a smooth random pattern of mean about ``level``."""
    coarse = rng.standard_normal((3, 4, 4))
    ys = np.linspace(0, 3, h)
    xs = np.linspace(0, 3, w)
    y0 = np.clip(ys.astype(int), 0, 2)
    x0 = np.clip(xs.astype(int), 0, 2)
    fy = (ys - y0)[:, None]
    fx = (xs - x0)[None, :]
    planes = []
    for c in range(3):
        g = coarse[c]
        top = g[y0][:, x0] * (1 - fx) + g[y0][:, x0 + 1] * fx
        bot = g[y0 + 1][:, x0] * (1 - fx) + g[y0 + 1][:, x0 + 1] * fx
        plane = top * (1 - fy) + bot * fy
        planes.append(plane - plane.mean())
    img = level + texture * np.stack(planes, axis=-1)
    return np.clip(np.rint(img), 0, 255).astype(np.uint8)


def make_jpeg_folder(root: str | os.PathLike, classes: tuple[str, ...] = ("cat", "dog", "bird"),
                     per_class: int = 16, size: tuple[int, int] = (48, 64), seed: int = 0,
                     quality: int = 90, levels: list[float] | None = None,
                     texture: float = 40.0) -> list[tuple[str, int]]:
    """Write ``per_class`` RGB JPEGs of ``size`` (height, width) into ``root/<class>/``.

    Returns ``[(path, label), ...]`` sorted by (class name, file name), with
    ``label`` the index of the class in ``sorted(classes)`` (the
    ``ImageFolder`` convention). ``levels`` (one per image, in that order)
    sets each image's mean brightness (0-255); by default it is random.
    """
    from PIL import Image

    root = Path(root)
    rng = np.random.default_rng(seed)
    names = sorted(classes)
    out = []
    k = 0
    h, w = size
    for label, name in enumerate(names):
        folder = root / name
        folder.mkdir(parents=True, exist_ok=True)
        for i in range(per_class):
            level = levels[k] if levels is not None else float(rng.uniform(70, 180))
            arr = _smooth_image(rng, h, w, level, texture)
            path = folder / f"img_{i:04d}.jpg"
            Image.fromarray(arr, "RGB").save(path, quality=quality)
            out.append((str(path), label))
            k += 1
    return out


#: mean brightness of image k in :func:`make_test_folder` is LEVEL0 + LEVEL_STEP * k
LEVEL0, LEVEL_STEP = 40.0, 8.0


def make_test_folder(root: str | os.PathLike, n_classes: int = 3, per_class: int = 4,
                     size: tuple[int, int] = (20, 28), seed: int = 0) -> tuple[list[str], list[tuple[str, int]]]:
    """Write a folder for testing label order: class names whose directory-listing order is not sorted.

    Image k (in sorted (class, file) order) has mean brightness
    ``LEVEL0 + LEVEL_STEP * k``, so :func:`fingerprint` recovers ``k`` from
    the pixels whatever the layout (CHW or HWC). Returns ``(classes, samples)``:
    the sorted class names and ``[(path, label), ...]`` in that order. (On a
    file system that always lists names sorted, such as HFS+, the listing order
    cannot differ; the folder is written anyway.)
    """
    rng = random.Random(seed)
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    for attempt in range(50):
        names = ["".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(5)) for _ in range(n_classes)]
        if len(set(names)) < n_classes:
            continue
        # Create in reverse-sorted order; keep the names only if listing them is not sorted.
        for name in sorted(names, reverse=True):
            (root / name).mkdir()
        listed = [n for n in os.listdir(root) if n in names]
        if listed != sorted(names):
            break
        if attempt < 49:
            for name in names:
                (root / name).rmdir()
    # (after 50 tries, on a file system that always lists in sorted order, the last names are kept)
    n = n_classes * per_class
    levels = [LEVEL0 + LEVEL_STEP * k for k in range(n)]
    samples = make_jpeg_folder(root, tuple(names), per_class=per_class, size=size, seed=seed,
                               quality=95, levels=levels, texture=10.0)
    return sorted(names), samples


def fingerprint(img: torch.Tensor) -> int:
    """Return the index k of an image from :func:`make_test_folder`, read from its mean brightness."""
    return int(round((float(img.double().mean()) - LEVEL0) / LEVEL_STEP))


def read_tv(path: str) -> torch.Tensor:
    """Decode a JPEG with ``torchvision.io`` (libjpeg-turbo): a uint8 tensor of shape (3, H, W)."""
    from torchvision.io import ImageReadMode, decode_jpeg, read_file

    return decode_jpeg(read_file(path), mode=ImageReadMode.RGB)


def read_pil(path: str) -> torch.Tensor:
    """Decode a JPEG with PIL and ``ToTensor``: a float32 tensor of shape (3, H, W) in [0, 1]."""
    from PIL import Image
    from torchvision.transforms.functional import to_tensor

    with Image.open(path) as im:
        return to_tensor(im.convert("RGB"))


def to_float01(t: torch.Tensor) -> torch.Tensor:
    """Return a uint8 image as float32 in [0, 1] (a module-level transform: picklable under spawn)."""
    return t.float().div_(255)


class BusyDataset(Dataset):
    """Items that cost pure-Python CPU time (the GIL is held throughout): ``ms`` milliseconds each.

    Each item is ``(index, pid)``. In threads these would run one at a time;
    DataLoader workers are processes, each with its own interpreter and GIL.
    """

    def __init__(self, n: int = 32, ms: float = 3.0) -> None:
        self.n, self.ms = n, ms

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i: int) -> tuple[int, int]:
        end = time.perf_counter() + self.ms / 1000
        x = 0
        while time.perf_counter() < end:
            x += 1
        return i, os.getpid()


class DecodeDataset(Dataset):
    """Decode lazily: holds only ``(path, label)`` pairs; each item is ``(image tensor, label)``.

    ``decoder`` is ``"pil"`` (PIL + ``ToTensor``, float32 in [0, 1]) or
    ``"torchvision"`` (``decode_jpeg(read_file(...))``, uint8). ``transform``
    is applied to the image; it must be picklable for ``spawn`` workers.
    """

    def __init__(self, samples: list[tuple[str, int]], decoder: str = "torchvision",
                 transform: Callable | None = None) -> None:
        if decoder not in ("pil", "torchvision"):
            raise ValueError(f"decoder must be 'pil' or 'torchvision', got {decoder!r}")
        self.samples = list(samples)
        self.decoder = decoder
        self.transform = transform

    def __len__(self) -> int:
        return len(self.samples)

    def __getitem__(self, i: int) -> tuple[torch.Tensor, int]:
        path, label = self.samples[i]
        img = read_pil(path) if self.decoder == "pil" else read_tv(path)
        if self.transform is not None:
            img = self.transform(img)
        return img, label


class DecodedListDataset(Dataset):
    """The trap: decodes every image in ``__init__`` and keeps the tensors in a Python list.

    Every worker gets a copy: pickled whole under ``spawn``, and under
    ``fork`` the pages are shared only until reference counting touches them.
    """

    def __init__(self, samples: list[tuple[str, int]]) -> None:
        self.images = [read_tv(p) for p, _ in samples]
        self.labels = [label for _, label in samples]

    def __len__(self) -> int:
        return len(self.images)

    def __getitem__(self, i: int) -> tuple[torch.Tensor, int]:
        return self.images[i], self.labels[i]


class WorkerProbeDataset(Dataset):
    """Each item reports where and how it was produced: a dict of plain Python values.

    Keys: ``index``, ``pid`` (the process), ``worker_id`` (``None`` in the main
    process), ``torch_threads`` (``torch.get_num_threads()``), ``torch_seed``
    (``torch.initial_seed()``), ``random`` (``random.random()``) and ``numpy``
    (``np.random.rand()``).
    """

    def __init__(self, n: int = 4) -> None:
        self.n = n

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i: int) -> dict[str, Any]:
        info = torch.utils.data.get_worker_info()
        return {"index": i, "pid": os.getpid(), "worker_id": None if info is None else info.id,
                "torch_threads": torch.get_num_threads(), "torch_seed": torch.initial_seed(),
                "random": random.random(), "numpy": float(np.random.rand())}


def pickled_size(obj: object) -> int:
    """Return ``len(pickle.dumps(obj))`` in bytes: what a ``spawn`` worker receives."""
    return len(pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL))


def measure_throughput(dataset: Dataset, num_workers: int = 0, persistent_workers: bool = False,
                       batch_size: int = 16, epochs: int = 2, **loader_kwargs: Any) -> float:
    """Return images per second for ``epochs`` passes over ``dataset`` with one DataLoader.

    The clock includes creating the loader and starting its workers (paid
    once with ``persistent_workers=True``, once per epoch without). Workers
    are shut down before this returns.
    """
    if num_workers == 0:
        persistent_workers = False
    t0 = time.perf_counter()
    loader = DataLoader(dataset, batch_size=batch_size, num_workers=num_workers,
                        persistent_workers=persistent_workers, **loader_kwargs)
    n = 0
    for _ in range(epochs):
        for batch in loader:
            n += len(batch[0])
    elapsed = time.perf_counter() - t0
    iterator = getattr(loader, "_iterator", None)
    if iterator is not None and hasattr(iterator, "_shutdown_workers"):
        iterator._shutdown_workers()  # persistent workers: stop them now, not at garbage collection
    del loader
    return n / elapsed
