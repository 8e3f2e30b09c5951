"""Exercise 'pooled_scores' of 01_dynamic_graphs: its hidden probes and verdicts (instructor side: never released).

Run by course.grading.judge.verdicts.load after ../../judge.py, in its namespace (the names defined there,
and in the exercises above this one, are in scope). Its mutants and alternatives are in the folders beside
this file.
"""

# --- Exercise 1.3 · pooled_scores ------------------------------------------------------------------
# clause -> test
#   x (B, T, D) float32/float64, lengths int64 in 1..T, w (D,) ............ test_pooled_scores_values (float32
#                                                                           and float64, B = 1, lengths 1 and T)
#   shape (B,), x's dtype, equal to pooled_scores_loop whatever the
#   padding holds, small or huge .......................................... test_pooled_scores_values (padding:
#                                                                           100 in the visible case, random
#                                                                           values, 1e8 in float32 and -1e30 in
#                                                                           float64 in the hidden ones)
#   gradients w.r.t. x and w equal the loop's, zero on the padding ......... test_pooled_scores_gradients (float64)
#   no Python loop over the samples: the same number of ops for every B ... test_pooled_scores_batched (B = 1, 5,
#                                                                           16, T = 8; counted by a dispatch mode)
#   nothing read back to Python, no op whose size depends on values ....... test_pooled_scores_batched
#                                                                           (_local_scalar_dense, nonzero,
#                                                                           masked_select, boolean-mask index,
#                                                                           index_put of a tensor of several
#                                                                           values, tolist, numpy); a number
#                                                                           written through a mask into a new
#                                                                           tensor is allowed (alternative
#                                                                           pooled_clone_masked_write)
#   a loop over T or D is not forbidden ................................... (nothing to test: the op count is
#                                                                           compared across B at one T and D)
#   B = 0 returns an empty tensor of shape (0,) in x's dtype ............... test_pooled_scores_edge_cases
#                                                                           (float32 and float64)
#   x, lengths and w left unchanged ........................................ test_pooled_scores_edge_cases
#   each call stands alone (nothing kept between calls) .................... test_pooled_scores_edge_cases (two
#                                                                           batches of one shape, other lengths)
# Every verdict also compares the scores with the reference's.

@judge.shared
def pooled_case(batch, steps, dim, dtype, seed, lengths=None, pad=None):
    """A padded batch with random lengths (or the given ones) whose padding holds random values (or ``pad``)."""
    gen = torch.Generator().manual_seed(seed)
    if lengths is None:
        lengths = torch.randint(1, steps + 1, (batch,), generator=gen)
    x, lengths, w = padded_batch(lengths, steps, dim, dtype=dtype, pad=pad, seed=seed)
    return x, lengths, w


@judge.shared
def counted_call(fn):
    """Run fn() counting the ops it dispatches; return (attempt's result, total ops, {host-sync op: count})."""
    import collections

    from torch.utils._python_dispatch import TorchDispatchMode

    counts = collections.Counter()

    class Counting(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            name = func.overloadpacket.__name__
            index = args[1] if name in ("index", "index_put", "index_put_") and len(args) > 1 else ()
            masks = [i for i in index or () if isinstance(i, torch.Tensor) and i.dtype in (torch.bool, torch.uint8)]
            if masks:
                name = name.rstrip("_") + " (boolean mask)"
                # y[mask] = number: ATen turns it into masked_fill_ (no nonzero, nothing read back) when the value
                # is one element on the CPU and the mask is the only tensor index (canDispatchToMaskedFill)
                value = args[2] if len(args) > 2 else (kwargs or {}).get("values")
                accumulate = args[3] if len(args) > 3 else (kwargs or {}).get("accumulate", False)
                if (name.startswith("index_put") and isinstance(value, torch.Tensor) and value.numel() == 1
                        and value.device.type == "cpu" and not accumulate
                        and sum(i is not None for i in index) == 1 and masks[0].device == args[0].device):
                    name = "index_put (boolean mask, one value: masked_fill_)"
            counts[name] += 1
            return func(*args, **(kwargs or {}))

    names = ("tolist", "numpy")
    own = {n: torch.Tensor.__dict__[n] for n in names if n in torch.Tensor.__dict__}
    real = {n: getattr(torch.Tensor, n) for n in names}

    def spy(n):
        def wrapper(self, *a, **k):
            counts["Tensor." + n] += 1
            return real[n](self, *a, **k)
        return wrapper
    try:
        for n in names:
            setattr(torch.Tensor, n, spy(n))
        with Counting():
            result = attempt(fn)
    finally:
        for n in names:
            if n in own:
                setattr(torch.Tensor, n, own[n])
            else:
                delattr(torch.Tensor, n)
    syncs = {k: v for k, v in counts.items()
             if k in ("_local_scalar_dense", "nonzero", "masked_select", "index (boolean mask)",
                      "index_put (boolean mask)", "Tensor.tolist", "Tensor.numpy")}
    return result, sum(counts.values()), syncs


def check_scores(result, expected, where, hint):
    out = expect_ok(result, f"pooled_scores on {where}", hint=hint)
    C.check_tensor(out, f"scores for {where}", shape=tuple(expected.shape), dtype=expected.dtype,
                   hint="one score per sample: shape (B,), in x's dtype")
    tol = 1e-4 if expected.dtype == torch.float32 else 1e-9
    C.check_close(out, expected, name=f"scores for {where}", rtol=tol, atol=tol, hint=hint)


PADDING_HINT = ("average only each sample's first lengths[i] time steps: the padding rows after them hold arbitrary "
                "values, so summing them in (or dividing by T) gives wrong scores")


@judge.probe("test_pooled_scores_values")
def probe_pooled_values(seed):
    x, lengths, w = padded_batch([5, 2, 3], 5, 4)
    out = {"visible": attempt(lambda: pooled_scores(x, lengths, w)), "cases": []}
    specs = [(1, 1, 3, torch.float32, None), (5, 7, 4, torch.float64, None), (8, 3, 6, torch.float32, None),
             (6, 9, 2, torch.float64, None), (4, 6, 3, torch.float32, 1e8), (3, 5, 4, torch.float64, -1e30)]
    for i, (b, t, d, dtype, pad) in enumerate(specs):
        if i == 2:                                       # every sample full length: no padding at all
            x, lengths, w = pooled_case(b, t, d, dtype, seed + i, lengths=torch.full((b,), t))
        else:                                            # huge padding: summing it and subtracting it again
            x, lengths, w = pooled_case(b, t, d, dtype, seed + i, pad=pad)     # loses the real values to rounding
            lengths[0] = 1                               # the shortest possible sample
            if b > 1:
                lengths[-1] = max(1, t // 2)             # and one with padding after it
        kind = "random values" if pad is None else f"{pad:g}"
        out["cases"].append({"where": f"B={b}, T={t}, D={d}, {str(dtype).replace('torch.', '')}, padding {kind}",
                             "got": attempt(lambda: pooled_scores(x, lengths, w))})
    return out


@probe_pooled_values.verdict
def _(got, ref):
    with visible():
        check_scores(got["visible"], expect_ok(ref["visible"], "reference"), "the example batch (lengths 5, 2, 3)",
                     PADDING_HINT)
    for g, r in zip(got["cases"], ref["cases"]):
        check_scores(g["got"], expect_ok(r["got"], "reference"), r["where"], PADDING_HINT)


@judge.probe("test_pooled_scores_gradients")
def probe_pooled_gradients(seed):
    def grads(x, lengths, w, weights):
        xs, ws = x.clone().requires_grad_(), w.clone().requires_grad_()

        def run():
            scores = pooled_scores(xs, lengths, ws)
            (scores * weights).sum().backward()
            return scores.detach()
        result = attempt(run)
        return {"scores": result, "x_grad": xs.grad, "w_grad": ws.grad}

    x, lengths, w = padded_batch([5, 2, 3], 5, 4, dtype=torch.float64)
    out = {"visible": grads(x, lengths, w, torch.ones(3, dtype=torch.float64)), "cases": []}
    gen = torch.Generator().manual_seed(seed)
    for i, (b, t, d) in enumerate([(4, 6, 3), (1, 4, 5), (7, 2, 4)]):
        x, lengths, w = pooled_case(b, t, d, torch.float64, seed + 20 + i)
        out["cases"].append(grads(x, lengths, w, torch.randn(b, generator=gen, dtype=torch.float64)))
    return out


def check_grads(g, r, where):
    expect_ok(g["scores"], f"pooled_scores(...) and backward() on {where}",
              hint="the scores must be computed from x and w with tensor ops, so that backward() reaches them")
    for name, hint in (("x_grad", "the gradient must reach x through your ops: no .detach(), no torch.no_grad(), no "
                                  "new tensor built from x's values; padding rows get 0"),
                       ("w_grad", "the gradient must reach w through your ops")):
        if g[name] is None:
            C.check_true(False, f"{name.replace('_', '.')} is None after backward() on {where}", hint=hint)
        C.check_close(g[name], r[name], name=f"{name.replace('_grad', '')}.grad on {where}", rtol=1e-9, atol=1e-12,
                      hint=hint)


@probe_pooled_gradients.verdict
def _(got, ref):
    with visible():
        check_grads(got["visible"], ref["visible"], "the example batch in float64")
    for k, (g, r) in enumerate(zip(got["cases"], ref["cases"])):
        check_grads(g, r, f"hidden batch {k + 1} (float64)")


@judge.probe("test_pooled_scores_batched")
def probe_pooled_batched(seed):
    x2, l2, w2 = padded_batch([3, 1], 4, 3)
    x8, l8, w8 = padded_batch([4, 1, 2, 3, 4, 4, 1, 2], 4, 3)
    vis = [counted_call(lambda: pooled_scores(x2, l2, w2)), counted_call(lambda: pooled_scores(x8, l8, w8))]
    rows = []
    for i, b in enumerate((1, 5, 16)):
        x, lengths, w = pooled_case(b, 8, 3, torch.float32, seed + 40 + i)     # T = 8: no other call uses it
        result, ops, syncs = counted_call(lambda: pooled_scores(x, lengths, w))
        rows.append({"b": b, "result": result, "ops": ops, "syncs": syncs})
    return {"visible": vis, "rows": rows}


@probe_pooled_batched.verdict
def _(got, ref):
    loop_hint = ("no Python loop over the samples: compare every time index with every length at once "
                 "(broadcasting), so that one set of ops handles the whole batch")
    sync_hint = ("read nothing back to Python (.item(), int(t), .tolist(), .numpy(), lengths.max() used as a "
                 "slice bound), do not read through a boolean mask (x[mask]) or write a tensor through one: multiply "
                 "by a 0/1 mask, or use torch.where or masked_fill, instead")
    (r2, n2, s2), (r8, n8, s8) = got["visible"]
    with visible():
        check_scores(r8, expect_ok(ref["visible"][1][0], "reference"), "a batch of 8", PADDING_HINT)
        C.check_true(n2 == n8, f"pooled_scores ran {n2} ops for a batch of 2 and {n8} for a batch of 8",
                     hint=loop_hint)
        C.check_true(not s2 and not s8, f"pooled_scores read values back to the host: {s8 or s2}", hint=sync_hint)
    check_scores(r2, expect_ok(ref["visible"][0][0], "reference"), "a batch of 2", PADDING_HINT)
    for g, r in zip(got["rows"], ref["rows"]):
        check_scores(g["result"], expect_ok(r["result"], "reference"), f"a batch of {r['b']}", PADDING_HINT)
    counts = {g["b"]: g["ops"] for g in got["rows"]}
    C.check_true(len(set(counts.values())) == 1,
                 f"ops per call by batch size: {counts}; a batched computation runs the same ops for every B",
                 hint=loop_hint)
    for g in got["rows"]:
        C.check_true(not g["syncs"], f"for a batch of {g['b']}, pooled_scores ran ops that need a value on the host: "
                     f"{g['syncs']} (one sync each on a GPU)", hint=sync_hint)


@judge.probe("test_pooled_scores_edge_cases")
def probe_pooled_edge_cases(seed):
    x, lengths, w = padded_batch([5, 2, 3], 5, 4)
    vis_scores = attempt(lambda: pooled_scores(x, lengths, w))
    empty = padded_batch([], 5, 4)
    # the inputs as they are after the call: the judge compares them with the reference's (which leaves them alone)
    vis = {"empty": attempt(lambda: pooled_scores(*empty)), "scores": vis_scores, "after": [x, lengths, w]}
    out = {"visible": vis}
    # an empty float64 batch of another shape
    e64 = padded_batch([], 3, 6, dtype=torch.float64)
    out["empty64"] = attempt(lambda: pooled_scores(*e64))
    # two batches of the same shape with other lengths, one after the other: nothing may carry over
    first = pooled_case(4, 6, 3, torch.float64, seed + 60)
    second = pooled_case(4, 6, 3, torch.float64, seed + 61, lengths=first[1] % 6 + 1)   # every length differs
    out["first"] = attempt(lambda: pooled_scores(*first))
    out["second"] = attempt(lambda: pooled_scores(*second))
    out["after"] = [*first, *second]
    return out


@probe_pooled_edge_cases.verdict
def _(got, ref):
    with visible():
        v, rv = got["visible"], ref["visible"]
        empty = expect_ok(v["empty"], "pooled_scores on an empty batch (B = 0)",
                          hint="with B = 0 the batched ops give an empty result by themselves; no special case needed")
        C.check_tensor(empty, "scores for an empty batch", shape=(0,), dtype=torch.float32)
        check_scores(v["scores"], expect_ok(rv["scores"], "reference"), "the example batch", PADDING_HINT)
        for name, g, r in zip(("x", "lengths", "w"), v["after"], rv["after"]):
            C.check_close(g, r, name=f"{name} after the call", rtol=0, atol=0, hint="do not write into x (no "
                          "in-place ops such as x.mul_ or x[...] = 0): build a new tensor")
    empty = expect_ok(got["empty64"], "pooled_scores on an empty float64 batch (B = 0)")
    C.check_tensor(empty, "scores for an empty float64 batch", shape=(0,), dtype=torch.float64)
    check_scores(got["first"], expect_ok(ref["first"], "reference"), "a first batch of shape (4, 6, 3)", PADDING_HINT)
    check_scores(got["second"], expect_ok(ref["second"], "reference"),
                 "a second batch of the same shape with other lengths",
                 "each call stands alone: compute the mask from this call's lengths, do not keep it from an earlier call")
    for k, (g, r) in enumerate(zip(got["after"], ref["after"])):
        C.check_close(g, r, name=f"{('x', 'lengths', 'w')[k % 3]} of call {k // 3 + 1} after the calls", rtol=0,
                      atol=0, hint="build new tensors; never write into x, lengths or w")


WHY['pooled_scores'] = "One broadcast comparison, arange(T) < lengths[:, None], builds the (B, T) mask on the device: the op count does not depend on B and nothing is read back. Multiplying x by it zeroes the padding in a new tensor (zero gradient there); the sum over time / lengths is each mean."
