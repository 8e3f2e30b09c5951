"""JPEG folders, datasets and DataLoader timing for chapter 5 (everything module-level, so picklable).

The datasets here are defined in a module on purpose: under the ``spawn``
start method (the default on macOS and Windows) each DataLoader worker gets
the dataset by pickling, and pickle stores classes and functions by
reference (``module.qualname``). A class or lambda defined in a notebook
cannot be found by the worker; one defined here can.
"""
from __future__ import annotations

import gc
import os
import pickle
import random
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset

__all__ = ["make_jpeg_folder", "make_test_folder", "fingerprint", "BusyDataset", "DecodeDataset", "DecodedListDataset",
           "WorkerProbeDataset", "to_float01", "pickled_size", "measure_throughput", "read_tv", "read_pil",
           "smaps_rollup", "private_dirty", "touch", "MemoryProbeDataset", "worker_memory", "shm_usage",
           "StreamDataset", "CountingDataset", "MemmapRows", "write_memmap", "OwnRngDataset", "reseed_own_rng",
           "stop_workers"]


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
                     texture: float = 40.0, modes: dict[int, str] | None = None) -> list[tuple[str, int]]:
    """Write ``per_class`` JPEGs of ``size`` (height, width) into ``root/<class>/``.

    Returns ``[(path, label), ...]`` sorted by (class name, file name), with
    ``label`` the index of the class in ``sorted(classes)`` (the
    ``ImageFolder`` convention). ``levels`` (one per image, in that order)
    sets each image's mean brightness (0-255); by default it is random.
    ``modes`` maps an image's index (in that order) to the PIL colour mode it
    is saved in: ``"RGB"`` (the default), ``"L"`` (grayscale: one channel in
    the file) or ``"CMYK"`` (four channels in the file).
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
            mode = (modes or {}).get(k, "RGB")
            if mode not in ("RGB", "L", "CMYK"):
                raise ValueError(f"mode must be 'RGB', 'L' or 'CMYK', got {mode!r}")
            Image.fromarray(arr, "RGB").convert(mode).save(path, quality=quality)
            out.append((str(path), label))
            k += 1
    return out


#: mean brightness of image k in :func:`make_test_folder` is LEVEL0 + LEVEL_STEP * k
LEVEL0, LEVEL_STEP = 40.0, 8.0


def make_test_folder(root: str | os.PathLike, n_classes: int = 3, per_class: int = 4,
                     size: tuple[int, int] = (20, 28), seed: int = 0,
                     modes: dict[int, str] | None = None,
                     stray: tuple[str, ...] = ()) -> tuple[list[str], list[tuple[str, int]]]:
    """Write a folder for testing label order: class names whose directory-listing order is not sorted.

    Image k (in sorted (class, file) order) has mean brightness
    ``LEVEL0 + LEVEL_STEP * k``, so :func:`fingerprint` recovers ``k`` from
    the pixels whatever the layout (CHW or HWC) or the number of channels.
    ``modes`` (image index -> ``"RGB"``, ``"L"`` or ``"CMYK"``) saves some
    images in another colour mode (see :func:`make_jpeg_folder`). ``stray`` names files written directly
    into ``root`` (a ``README.txt``, a ``.DS_Store``, even a ``.jpg``): files that are not class folders, so
    neither classes nor samples. Returns ``(classes, samples)``:
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
        # Create in a random order (tmpfs lists the newest first, ext4 in hash order); keep the names only
        # if listing them is not sorted.
        for name in rng.sample(names, len(names)):
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
                               quality=95, levels=levels, texture=10.0, modes=modes)
    for name in stray:
        (root / name).write_bytes(b"not a class folder\n")
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
    """Decode lazily: holds only the file paths and the labels; each item is ``(image tensor, label)``.

    ``decoder`` is ``"pil"`` (PIL + ``ToTensor``, float32 in [0, 1]) or
    ``"torchvision"`` (``decode_jpeg(read_file(...))``, uint8). ``transform``
    is applied to the image; it must be picklable for ``spawn`` workers.
    """

    def __init__(self, samples: list[tuple[str, int]], decoder: str = "torchvision",
                 transform: Callable | None = None) -> None:
        if decoder not in ("pil", "torchvision"):
            raise ValueError(f"decoder must be 'pil' or 'torchvision', got {decoder!r}")
        self.paths = [path for path, _ in samples]
        self.labels = [label for _, label in samples]
        self.decoder = decoder
        self.transform = transform

    def __len__(self) -> int:
        return len(self.paths)

    def __getitem__(self, i: int) -> tuple[torch.Tensor, int]:
        read = read_pil if self.decoder == "pil" else read_tv
        img = read(self.paths[i])
        if self.transform is not None:
            img = self.transform(img)
        return img, self.labels[i]


class DecodedListDataset(Dataset):
    """Decodes every image in ``__init__`` and keeps the uint8 tensors in a Python list.

    What this costs each worker depends on the start method and on the
    container: under ``spawn`` torch's pickler moves tensor storages into
    shared memory (the worker maps them; it does not copy them), while NumPy
    arrays, PIL images, bytes and other Python objects are copied into every
    worker. See :func:`worker_memory`.
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
    """Return ``len(pickle.dumps(obj))`` in bytes (plain pickle).

    This is *not* what a ``spawn`` DataLoader worker receives: multiprocessing
    uses torch's ``ForkingPickler``, which sends a tensor's storage through
    shared memory (a handle of a few bytes), while NumPy arrays, bytes, PIL
    images and other Python objects travel whole. Measure a worker's private
    memory instead (:func:`worker_memory`).
    """
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
    stop_workers(loader)
    del loader
    return n / elapsed


def stop_workers(loader: DataLoader) -> None:
    """Stop a loader's persistent workers now, instead of whenever its iterator is garbage-collected.

    A loader with ``persistent_workers=True`` keeps its iterator (and its worker processes) alive as long as
    the loader lives. Collected later, in a process forked in the meantime (another loader's worker, or a
    rank forked from a process that held the loader), its ``__del__`` fails ("can only test a child process")
    and prints a traceback.
    Does nothing for a loader without live workers.
    """
    iterator = getattr(loader, "_iterator", None)
    if iterator is not None and hasattr(iterator, "_shutdown_workers"):
        iterator._shutdown_workers()


# --- what a worker really holds: private memory, read from /proc ----------------------------------

def smaps_rollup(pid: int | str = "self") -> dict[str, int]:
    """Return the fields of ``/proc/<pid>/smaps_rollup`` (Linux), in **bytes**.

    Keys as the kernel names them: ``Rss``, ``Pss``, ``Private_Dirty``,
    ``Private_Clean``, ``Shared_Clean``, ``Shared_Dirty``, ... Raises
    ``OSError`` where the file does not exist (not Linux, or a kernel older
    than 4.14).
    """
    out: dict[str, int] = {}
    with open(f"/proc/{pid}/smaps_rollup") as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 3 and parts[-1] == "kB":
                out[parts[0].rstrip(":")] = int(parts[1]) * 1024
    return out


def private_dirty(pid: int | str = "self") -> int:
    """Return a process's ``Private_Dirty`` memory in bytes: pages written by this process alone.

    Pages a forked child still shares with its parent, file pages from the
    page cache and shared memory do not count; a copy made for this process
    (a received pickle, a copy-on-write page touched by a refcount) does.
    """
    return smaps_rollup(pid)["Private_Dirty"]


def touch(obj: Any) -> int:
    """Read one byte of every 4 KiB page of ``obj`` (and of everything a list, tuple or dict holds).

    Handles tensors, NumPy arrays, ``bytes``/``bytearray``, PIL images and
    containers; any other object is only looked at (which, in CPython, writes
    its reference count). Returns a checksum of what was read, so nothing is
    optimised away.
    """
    if isinstance(obj, torch.Tensor):
        flat = obj.reshape(-1).view(torch.uint8) if obj.is_contiguous() else obj.reshape(-1)
        return int(flat[::4096].sum()) if flat.numel() else 0
    if isinstance(obj, np.ndarray):
        flat = np.ascontiguousarray(obj).reshape(-1).view(np.uint8)
        return int(flat[::4096].sum()) if flat.size else 0
    if isinstance(obj, (bytes, bytearray, memoryview)):
        return sum(bytes(obj[::4096]))
    if isinstance(obj, (list, tuple)):
        return sum(touch(o) for o in obj)
    if isinstance(obj, dict):
        return sum(touch(k) + touch(v) for k, v in obj.items())
    if type(obj).__module__.startswith("pyarrow") and (hasattr(obj, "buffers") or hasattr(obj, "chunks")):
        # an Arrow array (or a column of chunks): read its buffers in place, as a reader of every item does,
        # without making a Python object per item
        total = 0
        for chunk in getattr(obj, "chunks", [obj]):
            for buf in chunk.buffers():
                if buf is not None and buf.size:
                    total += int(np.frombuffer(buf, dtype=np.uint8)[::4096].sum())
        return total
    if type(obj).__module__.startswith("PIL.") and hasattr(obj, "getpixel"):
        w, h = obj.size
        step = max(1, 4096 // max(1, len(obj.getbands())))  # one pixel per page, no copy of the image
        total = 0
        for k in range(0, w * h, step):
            px = obj.getpixel((k % w, k // w))
            total += sum(px) if isinstance(px, tuple) else int(px)
        return total
    return 0


class MemoryProbeDataset(Dataset):
    """A dataset of one item that holds ``payload``; the item reports the memory of the process that made it.

    ``ds[0]`` touches every page of the payload (see :func:`touch`) and returns
    a dict: ``pid``, ``private_dirty`` and ``rss`` (bytes, from
    :func:`smaps_rollup`, after the touch), ``private_dirty_at_start`` (just
    before it), ``copied_by_reading`` (the ``Private_Dirty`` bytes the touch
    itself added), ``items``
    (``len(payload)``) and ``checksum``. Run it in one DataLoader worker to
    see what that worker holds.

    The cyclic garbage collector is paused for the touch: a collection writes
    into the header of every container object it scans, so one that happened
    to run in that window would be counted as a copy the reading made. Two
    limits: under ``spawn`` the payload was copied when the worker started, so
    ``copied_by_reading`` is about 0 there (compare ``private_dirty`` with an
    empty worker's instead); and under ``fork`` a page the parent writes during
    the touch also turns private in the worker (the parent takes the copy).

    With ``collect=True`` the item then runs one full ``gc.collect()`` and
    adds ``copied_by_collection``: the ``Private_Dirty`` bytes that collection
    added (under ``fork``, the pages of the parent's container objects it
    scanned; objects the parent put out of reach with ``gc.freeze()`` are not
    scanned). It can be negative: a collection that frees objects may give
    their pages back to the system.
    """

    def __init__(self, payload: Any, collect: bool = False) -> None:
        self.payload = payload
        self.collect = collect

    def __len__(self) -> int:
        return 1

    def __getitem__(self, i: int) -> dict[str, int]:
        collecting = gc.isenabled()
        gc.disable()
        try:
            before = smaps_rollup()["Private_Dirty"]
            checksum = touch(self.payload)
            mem = smaps_rollup()
            collected = {}
            if self.collect:
                gc.collect()
                collected["copied_by_collection"] = smaps_rollup()["Private_Dirty"] - mem["Private_Dirty"]
        finally:
            if collecting:
                gc.enable()
        return {"pid": os.getpid(), "private_dirty": mem["Private_Dirty"], "rss": mem["Rss"],
                "private_dirty_at_start": before, "copied_by_reading": mem["Private_Dirty"] - before,
                "items": len(self.payload), "checksum": checksum,
                **collected}


def worker_memory(payloads: dict[str, Any], context: str = "spawn", timeout: float = 120.0,
                  collect: bool = False) -> dict[str, dict]:
    """Start one DataLoader worker per payload (all at once), each holding ``MemoryProbeDataset(payload, collect)``.

    Returns ``{name: report}``, each report as :class:`MemoryProbeDataset`
    returns it (bytes), measured in that worker after it touched every page
    of its payload. ``context`` is the multiprocessing start method
    (``"spawn"``, ``"fork"`` or ``"forkserver"``). The workers are started
    together so that their start-up (under ``spawn``, an ``import torch``
    each) overlaps; all of them have exited when this returns.
    """
    iterators = {name: iter(DataLoader(MemoryProbeDataset(p, collect), batch_size=None, num_workers=1,
                                       multiprocessing_context=context, timeout=timeout))
                 for name, p in payloads.items()}
    try:
        return {name: dict(next(it)) for name, it in iterators.items()}
    finally:
        for it in iterators.values():
            shutdown = getattr(it, "_shutdown_workers", None)
            if shutdown is not None:
                shutdown()


def shm_usage(path: str = "/dev/shm") -> tuple[int, int]:
    """Return ``(used, total)`` bytes of the shared-memory file system at ``path`` (``(0, 0)`` if absent)."""
    import shutil

    try:
        u = shutil.disk_usage(path)
    except OSError:
        return 0, 0
    return int(u.used), int(u.total)


# --- IterableDataset, prefetching, memmap -----------------------------------------------------------

class StreamDataset(torch.utils.data.IterableDataset):
    """An ``IterableDataset`` that yields ``0, 1, ..., n - 1`` (a stand-in for reading a stream or a file).

    With ``shard=False`` every DataLoader worker runs the whole ``__iter__``,
    so each item comes out once *per worker*. With ``shard=True`` worker ``i``
    of ``k`` (from ``torch.utils.data.get_worker_info()``) yields only the
    items ``i, i + k, i + 2k, ...``.
    """

    def __init__(self, n: int, shard: bool = False) -> None:
        self.n, self.shard = n, shard

    def __iter__(self):
        info = torch.utils.data.get_worker_info()
        if self.shard and info is not None:
            return iter(range(info.id, self.n, info.num_workers))
        return iter(range(self.n))


class CountingDataset(Dataset):
    """Items ``0 .. n - 1``; every fetch adds 1 to ``counter`` (a ``multiprocessing.Value``) in whatever process runs it.

    Used to count how far DataLoader workers run ahead of the training loop
    (``prefetch_factor``). Pass a ``Value`` made from the same start-method
    context as the loader's workers.
    """

    def __init__(self, n: int, counter: Any) -> None:
        self.n, self.counter = n, counter

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i: int) -> int:
        with self.counter.get_lock():
            self.counter.value += 1
        return i


def write_memmap(path: str | os.PathLike, rows: int, cols: int, seed: int = 0) -> tuple[int, int]:
    """Write a ``(rows, cols)`` uint8 array to ``path`` as a raw ``numpy.memmap`` file; return its shape."""
    rng = np.random.default_rng(seed)
    mm = np.memmap(path, dtype=np.uint8, mode="w+", shape=(rows, cols))
    for start in range(0, rows, 1024):
        stop = min(rows, start + 1024)
        mm[start:stop] = rng.integers(0, 256, size=(stop - start, cols), dtype=np.uint8)
    mm.flush()
    del mm
    return rows, cols


class _MappedFile(Dataset):
    """A dataset over a file that each process maps for itself: it pickles as its arguments, never an open map.

    The file is opened lazily, at the first read in the process that reads (each worker opens its own map), and its
    pages come from the OS page cache, which all workers share.
    """

    def __init__(self) -> None:
        self._opened = None

    def _open(self):
        raise NotImplementedError

    def _data(self):
        if self._opened is None:
            self._opened = self._open()
        return self._opened

    def __getstate__(self) -> dict:
        return {**self.__dict__, "_opened": None}  # never pickle an open map


class MemmapRows(_MappedFile):
    """Rows of a uint8 ``numpy.memmap`` file as tensors; holds only the path and the shape.

    Each worker opens its own map: nothing is pickled but the path, and nothing is copied into a worker's private
    memory but the rows it returns.
    """

    def __init__(self, path: str | os.PathLike, shape: tuple[int, int]) -> None:
        super().__init__()
        self.path, self.shape = str(path), tuple(shape)

    def _open(self) -> np.memmap:
        return np.memmap(self.path, dtype=np.uint8, mode="r", shape=self.shape)

    def __len__(self) -> int:
        return self.shape[0]

    def __getitem__(self, i: int) -> torch.Tensor:
        return torch.from_numpy(np.array(self._data()[i]))


def write_arrow_strings(path: str | os.PathLike, strings: list[str], column: str = "path") -> int:
    """Write ``strings`` as an Arrow IPC file with one string column named ``column``; return the file's bytes.

    All the strings sit end to end in one data buffer, with one offsets buffer: no Python object per item.
    """
    import pyarrow as pa

    table = pa.table({column: pa.array(strings, type=pa.string())})
    with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_file(sink, table.schema) as writer:
        writer.write_table(table)
    # Written back now: until then its pages in the page cache are dirty, and a process that maps them counts
    # them as its own private dirty memory (as numpy.memmap's flush() does for write_memmap).
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
    return os.path.getsize(path)


def open_arrow_column(path: str | os.PathLike, column: str = "path"):
    """Memory-map the Arrow IPC file at ``path`` and return its column ``column`` (a ``pyarrow.ChunkedArray``).

    Nothing is read or copied here: the column's buffers point into the map, so its pages come from the OS
    page cache, shared by every process that maps the file, and reading them writes nothing.
    """
    import pyarrow as pa

    return pa.ipc.open_file(pa.memory_map(str(path), "r")).read_all().column(column)


class ArrowColumn(_MappedFile):
    """The items of one column of an Arrow IPC file, as Python values; holds only the path and the column name.

    The file is memory-mapped lazily, in the process that reads it (each worker maps it once), so pickling the
    dataset for a ``spawn`` worker sends about a hundred bytes, and a ``fork`` worker's reads leave its private
    memory alone (the pages are the file's, shared through the page cache).
    """

    def __init__(self, path: str | os.PathLike, column: str = "path") -> None:
        super().__init__()
        self.path, self.column = str(path), column

    def _open(self):
        return open_arrow_column(self.path, self.column)

    def __len__(self) -> int:
        return len(self._data())

    def __getitem__(self, i: int):
        return self._data()[i].as_py()


class NoisyRows(Dataset):
    """Rows ``i * ones(dim)`` plus noise, a stand-in for a random augmentation; shows what a resumed loader replays.

    With ``own_rng=False`` the noise comes from the worker's global torch generator (the usual
    ``torch.rand`` in ``__getitem__``). With ``own_rng=True`` it comes from a generator seeded by
    ``(seed, epoch, i)``: the same sample gets the same noise whichever worker draws it, and whenever.
    """

    def __init__(self, n: int, dim: int = 4, own_rng: bool = False, seed: int = 0) -> None:
        self.n, self.dim, self.own_rng, self.seed, self.epoch = n, dim, own_rng, seed, 0

    def set_epoch(self, epoch: int) -> None:
        self.epoch = epoch

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i: int) -> torch.Tensor:
        if self.own_rng:
            g = torch.Generator().manual_seed((self.seed * 1_000_003 + self.epoch) * 1_000_003 + i)
            noise = torch.rand(self.dim, generator=g, dtype=torch.float64)
        else:
            noise = torch.rand(self.dim, dtype=torch.float64)
        return torch.full((self.dim,), float(i), dtype=torch.float64) + noise


class OwnRngDataset(Dataset):
    """Items ``(index, worker id, draw)``, the draw from a NumPy ``Generator`` the dataset owns (``self.rng``).

    torch seeds ``random``, ``torch`` and NumPy's *global* RNG differently in
    each worker, but it does not know about a generator stored on the
    dataset: every worker starts with a copy of the same one, so the workers
    draw the same "random" numbers. :func:`reseed_own_rng` as
    ``worker_init_fn`` fixes that. ``worker id`` is ``-1`` in the main process.
    """

    def __init__(self, n: int = 6, seed: int = 0) -> None:
        self.n = n
        self.rng = np.random.default_rng(seed)

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i: int) -> tuple[int, int, float]:
        info = torch.utils.data.get_worker_info()
        return i, -1 if info is None else info.id, float(self.rng.random())


def reseed_own_rng(worker_id: int) -> None:
    """``worker_init_fn``: give the worker's copy of the dataset its own generator, from the worker's torch seed.

    ``get_worker_info().seed`` is ``base_seed + worker_id``, and the base seed
    comes from the loader's ``generator`` (or the global torch RNG): seeding
    that generator makes the whole run reproducible.
    """
    info = torch.utils.data.get_worker_info()
    if info is not None and hasattr(info.dataset, "rng"):
        info.dataset.rng = np.random.default_rng(info.seed % 2**32)
