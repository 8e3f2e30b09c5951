"""Seeding torch, NumPy and ``random`` in one call."""
from __future__ import annotations

import os
import random

import numpy as np
import torch


def seed_everything(seed: int = 0, deterministic: bool = False) -> int:
    """Seed Python's ``random``, NumPy and torch (CPU and CUDA); return the seed.

    With ``deterministic=True`` also ask torch for deterministic algorithms
    (``torch.use_deterministic_algorithms(True, warn_only=True)``), turn off
    cuDNN autotuning and set ``CUBLAS_WORKSPACE_CONFIG`` so CUDA matmuls are
    reproducible. This is opt-in because it can be slower. Calling again with
    ``deterministic=False`` switches it back off.
    """
    seed = int(seed)
    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)  # also seeds every CUDA device
    if deterministic:
        os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
        torch.use_deterministic_algorithms(True, warn_only=True)
        torch.backends.cudnn.benchmark = False
        torch.backends.cudnn.deterministic = True
    else:
        torch.use_deterministic_algorithms(False)
        torch.backends.cudnn.deterministic = False
    return seed
