"""Device choice with a CPU fallback, and size configs that follow the device.

Every chapter must run on a laptop CPU. Cells that would like a GPU call
:func:`choose` with a small CPU config and a bigger CUDA config; under
nbgrader (``NBGRADER_EXECUTION`` is set) the smallest config is used.
"""
from __future__ import annotations

import os
from typing import Any, Iterable, TypeVar

import torch

T = TypeVar("T")

#: Environment variable that forces a device, e.g. ``COURSE_DEVICE=cpu``.
OVERRIDE_VAR = "COURSE_DEVICE"


def grading_mode() -> str | None:
    """Return nbgrader's mode (``"autograde"``, ``"validate"``, ...) or ``None`` when not grading."""
    mode = os.environ.get("NBGRADER_EXECUTION", "").strip()
    return mode or None


def pick_device(prefer: str | None = None) -> torch.device:
    """Return the device to use: ``cuda`` when available, else ``cpu``.

    Order of precedence: the ``prefer`` argument, then the ``COURSE_DEVICE``
    environment variable, then CUDA if ``torch.cuda.is_available()``, else the
    CPU. Asking for ``cuda`` on a machine without it falls back to the CPU
    (it never raises), so a notebook written for a GPU still runs on Binder.
    """
    wanted = prefer or os.environ.get(OVERRIDE_VAR, "").strip() or None
    if wanted is not None:
        dev = torch.device(wanted)
        if dev.type == "cuda" and not torch.cuda.is_available():
            return torch.device("cpu")
        return dev
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def _reason(dev: torch.device) -> str:
    if os.environ.get(OVERRIDE_VAR, "").strip():
        asked = os.environ[OVERRIDE_VAR].strip()
        if torch.device(asked).type != dev.type:
            return f"{OVERRIDE_VAR}={asked} asked for it, but it is not available"
        return f"set by {OVERRIDE_VAR}={asked}"
    if dev.type == "cuda":
        return "torch.cuda.is_available() is True"
    return "no CUDA device found (torch.cuda.is_available() is False)"


def choose(cpu: T, cuda: T | None = None, grading: T | None = None,
           device: torch.device | None = None) -> T:
    """Return the config that fits the device and mode.

    ``grading`` (default: ``cpu``) when nbgrader is executing the notebook,
    ``cuda`` (default: ``cpu``) on a CUDA device, otherwise ``cpu``. Configs
    can be anything: an int size, a dict, a model name.
    """
    if grading_mode() is not None:
        return cpu if grading is None else grading
    dev = device if device is not None else pick_device()
    if dev.type == "cuda" and cuda is not None:
        return cuda
    return cpu


def describe(config: Any = None, cpu_note: str = "small config",
             cuda_note: str = "larger config", device: torch.device | None = None) -> str:
    """Return one line saying which device and config were chosen, and why.

    Example: ``"cpu (no CUDA device found ...): small config {'n': 64}; on a
    CUDA GPU this cell uses larger config"``.
    """
    dev = device if device is not None else pick_device()
    mode = grading_mode()
    line = f"device: {dev} ({_reason(dev)})"
    if mode is not None:
        line += f"; grading mode ({mode}): smallest config"
    elif dev.type == "cuda":
        line += f"; {cuda_note}"
    else:
        line += f"; {cpu_note}; on a CUDA GPU this cell uses {cuda_note}"
    if config is not None:
        line += f" -> {config!r}"
    return line


def versions(distributions: Iterable[str]) -> str:
    """``"torchvision 0.29.1, Pillow 12.0.0"``: the installed version of each distribution (``not installed``)."""
    from importlib import metadata

    parts = []
    for name in distributions:
        try:
            parts.append(f"{name} {metadata.version(name)}")
        except metadata.PackageNotFoundError:
            parts.append(f"{name} not installed")
    return ", ".join(parts)


def report(config: Any = None, cpu_note: str = "small config",
           cuda_note: str = "larger config", libraries: Iterable[str] = ()) -> torch.device:
    """Print :func:`describe`, the torch version and each of ``libraries``' (distribution names, e.g.
    ``("torchvision", "Pillow")``: what the chapter's numbers also depend on); return the chosen device."""
    dev = pick_device()
    libraries = tuple(libraries)
    print(f"torch {torch.__version__}, {torch.get_num_threads()} CPU threads"
          + (f"; {versions(libraries)}" if libraries else ""))
    print(describe(config, cpu_note=cpu_note, cuda_note=cuda_note, device=dev))
    return dev
