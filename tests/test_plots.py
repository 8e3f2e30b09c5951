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


def test_bar_chart_long_labels_do_not_overlap():
    labels = ["timm create_model", "transformers from config", "Lightning Trainer.fit", "plain loop",
              "state_dict round trip", "bf16 autocast step"]
    fig = plots.bar_chart(labels, [1.0, 2.0, 3.0, 0.5, 0.2, 0.9], ylabel="s")
    assert plots.label_overlaps(fig) == 0
    short = plots.bar_chart(["a", "b", "c"], [1, 2, 3], ylabel="s")
    assert plots.label_overlaps(short) == 0


def test_live_view_updates_one_output_in_place(monkeypatch):
    import ipywidgets as widgets
    import matplotlib.pyplot as plt
    import IPython.display as disp

    shown, updates = [], []

    class Handle:
        def update(self, obj):
            updates.append(obj)

    def fake_display(*objs, display_id=None, **kw):
        shown.extend(objs)
        return Handle() if display_id else None

    monkeypatch.setattr(disp, "display", fake_display)
    calls = []

    def render(n):
        calls.append(n)
        fig, ax = plt.subplots()
        ax.plot(range(n))
        return fig

    slider = widgets.IntSlider(value=3, min=1, max=9)
    plots.live_view(render, {"n": slider})
    assert calls == [3] and type(shown[-1]).__name__ == "Image"
    slider.value = 5
    assert calls == [3, 5] and len(updates) == 1 and type(updates[0]).__name__ == "Image"
    text = plots.live_view(lambda n: f"n = {n}", {"n": widgets.IntSlider(value=2)})
    assert "n = 2" in shown[-1].data


def test_storage_cells_follow_the_strides_as_the_addresses_do():
    base = torch.arange(12.0).reshape(3, 4)
    for t in (base, base.t(), base[1:, 1:3], base[:, ::2], base[0].expand(3, 4)):
        start = t.untyped_storage().data_ptr()
        for pos, idxs in plots.storage_cells(t).items():
            assert all((t[idx].data_ptr() - start) // t.element_size() == pos for idx in idxs)
    assert plots.storage_cells(base[1:, 1:3]) == {5: [(0, 0)], 6: [(0, 1)], 9: [(1, 0)], 10: [(1, 1)]}
    assert plots.storage_cells(base[0].expand(2, 4))[0] == [(0, 0), (1, 0)]


def test_storage_picture_draws_one_row_per_tensor_with_labelled_cells_and_strides():
    import pytest

    base = torch.arange(12.0).reshape(3, 4)
    fig = plots.storage_picture({"base": base, "base.t()": base.t(), "expanded": base[0].expand(3, 4)})
    assert len(fig.axes) == 3
    texts = [t.get_text() for t in fig.axes[1].texts]
    assert "1,0" in texts and "stride[-1] = 4" in texts and "stride[0] = 1" in texts
    assert "base.t(): shape (4, 3), stride (1, 4)" in fig.axes[1].get_title(loc="left")
    assert any("stride[0] = 0" in t.get_text() for t in fig.axes[2].texts)
    with pytest.raises(ValueError):
        plots.storage_picture({"too big to draw": torch.zeros(100)})


def test_compile_timeline_puts_one_marker_per_compile_on_its_row():
    events = [{"call": 0, "compile_id": "0/0", "reason": "first call", "dynamic": False},
              {"call": 0, "compile_id": "1/0", "reason": "first call", "dynamic": False},
              {"call": 2, "compile_id": "0/1", "reason": "0/0: size mismatch at index 0", "dynamic": True}]
    fig = plots.compile_timeline(events, n_calls=4)
    ax = fig.axes[0]
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels == ["calls", "compile 0/0", "compile 0/1", "compile 1/0"]
    calls, *markers = ax.collections
    assert len(calls.get_offsets()) == 4 and len(markers) == 3
    assert [tuple(m.get_offsets()[0]) for m in markers] == [(0, 1), (0, 3), (2, 2)]
    assert markers[2].get_facecolors().size == 0 or markers[2].get_facecolors()[0][3] == 0   # hollow: dynamic
    assert [t.get_text() for t in ax.texts] == ["first call", "first call", "0/0: size mismatch at index 0"]


def test_block_kinds_match_a_tile_by_tile_reading_on_ragged_masks():
    """block_kinds counts each tile in one tensor operation: the same kinds as reading every tile in turn, for
    random and causal masks whose last row and column of tiles are smaller than the block, and none at all."""
    def by_tile(allowed, block):
        rows, cols = -(-allowed.shape[0] // block), -(-allowed.shape[1] // block)
        return torch.tensor([[2 if t.all() else 1 if t.any() else 0
                              for t in (allowed[i * block:(i + 1) * block, j * block:(j + 1) * block]
                                        for j in range(cols))] for i in range(rows)], dtype=torch.int64)

    g = torch.Generator().manual_seed(0)
    for q, k, block, p in ((7, 11, 3, 0.5), (33, 20, 8, 0.97), (5, 5, 8, 0.2), (16, 40, 4, 0.0), (9, 9, 1, 0.6)):
        for mask in (torch.rand(q, k, generator=g) < p, torch.ones(q, k, dtype=torch.bool).tril()):
            kinds = plots.block_kinds(mask, block)
            assert kinds.dtype == torch.int64 and torch.equal(kinds, by_tile(mask, block)), (q, k, block)
    assert plots.block_kinds(torch.zeros(0, 3, dtype=torch.bool), 2).shape == (0, 2)


def test_block_kinds_agree_with_flex_attention_s_block_mask():
    """A tile is skipped (0), partial (1) or full (2); FlexAttention's BlockMask keeps the same summary, as counts
    of partial (kv_num_blocks) and full (full_kv_num_blocks) tiles per query row."""
    import pytest
    from torch.nn.attention.flex_attention import create_block_mask, create_mask

    def window(b, h, q, k):
        return (q >= k) & (q - k < 20)

    for n, block in ((96, 32), (100, 32)):     # a last tile smaller than the block, too
        dense = create_mask(window, None, None, n, n, device="cpu")[0, 0]
        kinds = plots.block_kinds(dense, block)
        if n % block == 0:
            bm = create_block_mask(window, None, None, n, n, device="cpu", BLOCK_SIZE=block)
            assert kinds.eq(1).sum(1).tolist() == bm.kv_num_blocks[0, 0].tolist()
            assert kinds.eq(2).sum(1).tolist() == bm.full_kv_num_blocks[0, 0].tolist()
        assert kinds.shape == (-(-n // block),) * 2
        assert kinds[0, 0] == 1 and kinds[0, -1] == 0 and kinds[-1, 0] == 0
    assert plots.block_kinds(torch.ones(4, 4, dtype=torch.bool), 2).eq(2).all()
    with pytest.raises(ValueError):
        plots.block_kinds(torch.ones(4, 4), 2)
    fig = plots.block_mask_picture({"causal": torch.ones(8, 8, dtype=torch.bool).tril(),
                                    "all": torch.ones(8, 8, dtype=torch.bool)}, block=4)
    assert [ax.get_title() for ax in fig.axes] == ["causal\n25% of tiles skipped", "all\n0% of tiles skipped"]
