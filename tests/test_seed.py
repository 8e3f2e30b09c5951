import random

import numpy as np
import torch

from course.seed import seed_everything


def draw():
    return random.random(), float(np.random.rand()), float(torch.rand(()))


def test_same_seed_same_numbers():
    assert seed_everything(7) == 7
    a = draw()
    seed_everything(7)
    assert draw() == a
    seed_everything(8)
    assert draw() != a


def test_deterministic_mode_is_opt_in_and_reversible():
    seed_everything(0, deterministic=True)
    assert torch.are_deterministic_algorithms_enabled()
    assert torch.backends.cudnn.deterministic
    seed_everything(0)
    assert not torch.are_deterministic_algorithms_enabled()
