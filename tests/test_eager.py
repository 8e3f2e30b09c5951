import matplotlib

matplotlib.use("Agg")
import numpy as np  # noqa: E402
import torch  # noqa: E402
from PIL import Image  # noqa: E402

from course import eager  # noqa: E402


def test_time_call_measures_seconds():
    import time
    t = eager.time_call(lambda: time.sleep(0.002), repeats=3, warmup=1)
    assert 0.0015 < t < 0.05


def test_overhead_curve_shape_and_fraction():
    rows = eager.overhead_curve([1, 100_000], repeats=5)
    assert [r["numel"] for r in rows] == [1, 100_000]
    for r in rows:
        assert r["seconds"] > 0 and 0 < r["overhead_fraction"] <= 1.0
        assert r["overhead_s"] == rows[0]["overhead_s"]
    assert rows[1]["seconds"] > rows[0]["overhead_s"], "a 100k-element add costs more than a 1-element one"
    fig = eager.plot_overhead(rows)
    assert len(fig.axes) == 2


def test_sample_image_and_three_kinds():
    arr = eager.sample_image(20, 30, seed=3)
    assert arr.shape == (20, 30, 3) and arr.dtype == np.uint8
    assert np.array_equal(arr, eager.sample_image(20, 30, seed=3))
    assert not np.array_equal(arr, eager.sample_image(20, 30, seed=4))
    pil, npy, t = eager.as_three_kinds(arr)
    assert isinstance(pil, Image.Image) and pil.size == (30, 20)
    assert t.shape == (3, 20, 30) and t.dtype == torch.uint8
    assert torch.equal(t.permute(1, 2, 0), torch.from_numpy(npy))
    fig = eager.show_images([pil, npy, t, t.float()], ["a", "b", "c", "d"], rows=2)
    assert len(fig.axes) == 4
