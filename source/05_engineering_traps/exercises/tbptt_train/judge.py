"""Exercise 'tbptt_train' of 05_engineering_traps: its hidden probes and verdicts (instructor side: never released).

Run by course.grading.judge.verdicts.load after ../../judge.py, in its namespace (the names defined there,
and in the exercises above this one, are in scope). Its mutants and alternatives are in the folders beside
this file.
"""

# --- Exercise 5.2c · tbptt_train --------------------------------------------------------------------------
# clause -> test
#   state: a tensor (TinyRNN) or a tuple (TinyLSTM) .................... all three (LSTM cases)
#   chunks of chunk_len, last shorter, chunk_len >= T ................... test_tbptt_losses
#   start from state if given, else init_state ......................... test_tbptt_state
#   zero_grad, mean of step MSEs, backward, step, loss.item() ........... test_tbptt_losses
#   gradients within a chunk, not across (every tensor detached) ........ test_tbptt_losses, test_tbptt_graph_constant
#   no gradient into the state passed in ................................ test_tbptt_state
#   returns (losses, final state detached, same structure) .............. test_tbptt_state
#   continuation: two calls == one call ................................. test_tbptt_state
#   sequence not modified ............................................... test_tbptt_state

@judge.probe("test_tbptt_losses")
def probe_tbptt_losses(seed):
    torch.manual_seed(0)
    rnn = L.TinyRNN(n_in=3, n_hidden=8)
    vis = tbptt_train(rnn, torch.randn(11, 2, 3), 4, torch.optim.SGD(rnn.parameters(), lr=0.0))
    specs = [("TinyRNN", 20, 6, "sgd"), ("TinyRNN", 9, 3, "sgd"), ("TinyRNN", 5, 8, "sgd"),
             ("TinyLSTM", 17, 5, "sgd"), ("TinyLSTM", 12, 4, "adam")]
    cases = []
    for j, (kind, T, cl, opt_name) in enumerate(specs):
        torch.manual_seed(seed % 10000 + 57 + j)
        model = getattr(L, kind)(n_in=3, n_hidden=6).double()
        seq = torch.randn(T + 1, 2, 3, dtype=torch.float64)
        opt = (torch.optim.SGD(model.parameters(), lr=0.3) if opt_name == "sgd"
               else torch.optim.Adam(model.parameters(), lr=1e-2))
        out = tbptt_train(model, seq, cl, opt)
        cases.append({"label": f"{kind}, T = {T}, chunk_len = {cl}",
                      "losses": out[0] if isinstance(out, tuple) and len(out) == 2 else out})
    return {"visible": vis[0] if isinstance(vis, tuple) and len(vis) == 2 else vis, "cases": cases}


def check_chunk_losses(g, r, label, rel, abs_tol=1e-12):
    C.check_type(g, list, f"losses ({label})", hint="return (losses, state), losses a list of floats")
    C.check_equal(len(g), len(r), f"number of chunks ({label})",
                  hint="range(0, T, chunk_len): the last chunk may be shorter, and chunk_len >= T is one chunk")
    for i, (v, w) in enumerate(zip(g, r)):
        C.check_float(v, w, f"loss of chunk {i} ({label})", rel=rel, abs_tol=abs_tol,
                      hint="detach the state once per chunk (every tensor of it), not at every step; "
                           "chunk loss = mean of the step MSEs")


@probe_tbptt_losses.verdict
def _(got, ref):
    with visible():
        check_chunk_losses(got["visible"], ref["visible"], "visible: TinyRNN, T = 10, chunk_len = 4, lr = 0", 1e-5, 1e-7)
    for g, r in zip(got["cases"], ref["cases"]):
        check_chunk_losses(g["losses"], r["losses"], r["label"], 1e-8)


@judge.probe("test_tbptt_graph_constant")
def probe_tbptt_graph(seed):
    torch.manual_seed(1)
    rnn = L.TinyRNN(n_in=3, n_hidden=8)
    opt = torch.optim.SGD(rnn.parameters(), lr=0.1)
    visible_nodes = L.run_probed(tbptt_train, rnn, torch.randn(17, 2, 3), 4, opt, optimizer=opt)["nodes"]
    rows = []
    for j, (kind, T, cl) in enumerate((("TinyLSTM", 30, 5), ("TinyRNN", 23, 5), ("TinyLSTM", 14, 3))):
        torch.manual_seed(seed % 10000 + 59 + j)
        model = getattr(L, kind)(n_in=2, n_hidden=5)
        opt = torch.optim.SGD(model.parameters(), lr=0.05)
        seq = torch.randn(T + 1, 3, 2)
        rows.append({"label": f"{kind}, T = {T}, chunk_len = {cl}", "full_chunks": T // cl,
                     "nodes": L.run_probed(tbptt_train, model, seq, cl, opt, optimizer=opt)["nodes"]})
    return {"visible": visible_nodes, "rows": rows}


def check_constant(nodes, n_steps, full, label):
    C.check_equal(len(nodes), n_steps, f"optimizer steps ({label})", hint="one optimizer.step() per chunk")
    head = nodes[:full]
    C.check_true(max(head) == min(head),
                 f"graph nodes alive at each optimizer step change from chunk to chunk ({label}): {nodes}",
                 hint="detach the whole state between chunks (an LSTM carries h and c) so each chunk's graph starts fresh")


@probe_tbptt_graph.verdict
def _(got, ref):
    with visible():
        check_constant(got["visible"], len(ref["visible"]), len(ref["visible"]), "visible: TinyRNN, T = 16, chunk_len = 4")
    for g, r in zip(got["rows"], ref["rows"]):
        check_constant(g["nodes"], len(r["nodes"]), r["full_chunks"], r["label"])


@judge.probe("test_tbptt_state")
def probe_tbptt_state(seed):
    def describe_state(s):
        if isinstance(s, torch.Tensor):
            return {"kind": "tensor", "tensors": [s.detach().clone()], "grad_fn": [s.grad_fn is not None]}
        if isinstance(s, tuple):
            return {"kind": f"tuple of {len(s)}", "tensors": [t.detach().clone() if isinstance(t, torch.Tensor) else None
                                                              for t in s],
                    "grad_fn": [getattr(t, "grad_fn", None) is not None for t in s]}
        return {"kind": type(s).__name__, "tensors": [], "grad_fn": []}

    def call(model, seq, cl, state=None):
        opt = torch.optim.SGD(model.parameters(), lr=0.0)
        out = tbptt_train(model, seq, cl, opt) if state is None else tbptt_train(model, seq, cl, opt, state=state)
        if not (isinstance(out, tuple) and len(out) == 2):
            return {"losses": None, "state": describe_state(None)}
        return {"losses": out[0], "state": describe_state(out[1]), "raw": out[1]}

    torch.manual_seed(2)
    rnn = L.TinyRNN(n_in=3, n_hidden=8)
    vis = call(rnn, torch.randn(13, 2, 3), 5)
    vis.pop("raw", None)
    torch.manual_seed(seed % 10000 + 61)
    lstm = L.TinyLSTM(n_in=3, n_hidden=6).double()
    seq = torch.randn(19, 2, 3, dtype=torch.float64)   # T = 18
    seq_copy = seq.clone()
    g = torch.Generator().manual_seed(seed)
    h0 = (torch.randn(2, 6, generator=g, dtype=torch.float64), torch.randn(2, 6, generator=g, dtype=torch.float64))
    h0_leaf = (h0[0].clone().requires_grad_(True), h0[1].clone().requires_grad_(True))
    whole = call(lstm, seq, 4)
    first = call(lstm, seq[:9], 4)                       # a = 8, a multiple of chunk_len
    second = call(lstm, seq[8:], 4, state=first.pop("raw", None))
    given = call(lstm, seq, 4, state=h0_leaf)
    for d in (whole, given, second):
        d.pop("raw", None)
    return {"visible": vis, "whole": whole, "first": first, "second": second, "given": given,
            "seq_changed": not torch.equal(seq, seq_copy),
            "h0_grads": [t.grad is not None and bool(t.grad.abs().sum() > 0) for t in h0_leaf]}


def check_state(g, r, label, rtol=1e-6, atol=1e-8):
    C.check_true(g["losses"] is not None, f"tbptt_train(...) ({label}) did not return a (losses, state) pair",
                 hint="return losses, state")
    C.check_equal(g["state"]["kind"], r["state"]["kind"], f"structure of the returned state ({label})",
                  hint="return the state as the model gives it: a tensor for TinyRNN, a tuple (h, c) for TinyLSTM")
    for k, (has_fn, t, want) in enumerate(zip(g["state"]["grad_fn"], g["state"]["tensors"], r["state"]["tensors"])):
        C.check_true(has_fn is False, f"tensor {k} of the returned state still has a grad_fn ({label})",
                     hint="detach the state you return: it would keep the last chunk's graph alive")
        C.check_close(t, want, f"tensor {k} of the returned state ({label})", rtol=rtol, atol=atol,
                      hint="the state after the last step of the last chunk")


@probe_tbptt_state.verdict
def _(got, ref):
    with visible():
        check_state(got["visible"], ref["visible"], "visible: TinyRNN, lr = 0", rtol=1e-5, atol=1e-6)
    check_state(got["whole"], ref["whole"], "TinyLSTM, T = 18, chunk_len = 4")
    check_state(got["first"], ref["first"], "TinyLSTM, first 8 steps")
    check_state(got["second"], ref["second"], "TinyLSTM, steps 8 to 18, continuing from the first call's state")
    both = (got["first"]["losses"] or []) + (got["second"]["losses"] or [])
    C.check_equal(len(both), len(ref["whole"]["losses"]), "number of chunks over the two calls")
    for i, (v, w) in enumerate(zip(both, ref["whole"]["losses"])):
        C.check_float(v, w, f"loss of chunk {i}, over two calls that pass the state on", rel=1e-8, abs_tol=1e-12,
                      hint="start from the `state` argument when it is given (instead of init_state)")
    check_state(got["given"], ref["given"], "TinyLSTM started from a given random state")
    for i, (v, w) in enumerate(zip(got["given"]["losses"] or [], ref["given"]["losses"])):
        C.check_float(v, w, f"loss of chunk {i}, starting from a given state", rel=1e-8, abs_tol=1e-12,
                      hint="start from the `state` argument when it is given")
    C.check_equal(got["h0_grads"], [False, False], "gradient reached the state passed in (h0, c0 have a .grad)",
                  hint="detach the incoming state too: gradients stay inside each chunk")
    C.check_equal(got["seq_changed"], False, "sequence modified by tbptt_train", hint="do not write into `sequence`")


WHY['tbptt_train'] = "detach_state cuts the history of a tensor or of every tensor in a tuple; applying it at each chunk boundary (the incoming state included) keeps gradients inside the chunk, never in earlier chunks, with no retain_graph. The returned state is detached too, so the next call continues the stream."
