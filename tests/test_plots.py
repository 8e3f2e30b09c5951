import matplotlib

matplotlib.use("Agg")
import torch  # noqa: E402

from course import plots  # noqa: E402


def test_mismatch_draws_three_panels():
    fig = plots.mismatch(torch.arange(6.0).reshape(2, 3), torch.zeros(2, 3), title="x")
    assert len(fig.axes) >= 3
    assert "target vs yours" in fig._suptitle.get_text()
    assert plots.mismatch(torch.zeros(3), torch.zeros(4)) is None
    assert plots.mismatch(torch.zeros(5), torch.ones(5)) is not None
    assert plots.mismatch(torch.zeros(2, 2, 2), torch.ones(2, 2, 2)) is not None


def test_bar_chart():
    fig = plots.bar_chart(["a", "b"], [1.0, 2.5], ylabel="images/s", title="t")
    ax = fig.axes[0]
    assert ax.get_ylabel() == "images/s" and len(ax.patches) == 2
