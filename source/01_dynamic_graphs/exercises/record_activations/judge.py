"""Exercise 'record_activations' of 01_dynamic_graphs: its hidden probes and verdicts (instructor side: never released).

Run by course.grading.judge.verdicts.load after ../../judge.py, in its namespace (the names defined there,
and in the exercises above this one, are in scope). Its mutants and alternatives are in the folders beside
this file.
"""

# --- Exercise 1.4 · record_activations ---------------------------------------------------------------
# clause -> test
#   model(x) runs exactly once; a new dict each call ...................... test_record_activations_fresh
#   keys from named_modules(), nested ones included, root left out ........ test_record_activations_shapes
#   a module registered under two names appears once, first name .......... test_record_activations_repeated
#   values are output.shape (torch.Size) of tensor outputs ................ test_record_activations_shapes
#   non-tensor outputs (LSTM's tuple) and modules that never run left out . test_record_activations_shapes
#   a submodule that runs more than once keeps the shape of its last call
#   that returned a tensor (a later tuple changes nothing) ................ test_record_activations_repeated
#   every hook removed, also when forward raises .......................... test_record_activations_cleanup
#   the exception reaches the caller unchanged ............................ test_record_activations_cleanup
#   hooks that were there before stay ..................................... test_record_activations_cleanup

@judge.probe("test_record_activations_shapes")
def probe_record_shapes(seed):
    class Block(nn.Module):
        def __init__(self, d):
            super().__init__()
            self.inner = nn.Sequential(nn.Linear(d, 2 * d), nn.GELU())
            self.out = nn.Linear(2 * d, d)

        def forward(self, x):
            return self.out(self.inner(x)) + x

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Linear(5, 7)
            self.blocks = nn.ModuleList([Block(7), Block(7)])
            self.head = nn.Sequential(nn.LayerNorm(7), nn.Linear(7, 3))

        def forward(self, x):
            x = self.embed(x)
            for blk in self.blocks:
                x = blk(x)
            return self.head(x)

    class Recurrent(nn.Module):
        def __init__(self):
            super().__init__()
            self.rnn = nn.LSTM(4, 6, batch_first=True)      # returns a tuple: left out
            self.head = nn.Linear(6, 2)
            self.spare = nn.Linear(2, 2)                    # never runs: left out

        def forward(self, x):
            out, _ = self.rnn(x)
            return self.head(out[:, -1])

    gen = torch.Generator().manual_seed(seed)
    b = 2 + seed % 5
    xs = (torch.randn(2, 3, 16, 16, generator=gen), torch.randn(b, 5, generator=gen), torch.randn(b, 3, 4, generator=gen))
    return {"visible": attempt(lambda: record_activations(small_cnn().eval(), xs[0])), "batch": b,
            "nested": attempt(lambda: record_activations(Net(), xs[1])),
            "recurrent": attempt(lambda: record_activations(Recurrent(), xs[2]))}


@probe_record_shapes.verdict
def _(got, ref):
    with visible():
        shapes = expect_ok(got["visible"], "record_activations(small_cnn(), x)")
        C.check_type(shapes, dict, "the returned mapping")
        C.check_equal(shapes, ref["visible"][1], "recorded shapes for small_cnn", hint="one entry per name from model.named_modules() except the root '', valued output.shape")
    nested = expect_ok(got["nested"], "record_activations on a model with nested blocks")
    C.check_type(nested, dict, "the returned mapping")
    C.check_equal(nested, ref["nested"][1], "recorded shapes for a model with nested blocks in a ModuleList",
                  hint="every named submodule that returns a tensor, keyed by its dotted name; not the root")
    rec = expect_ok(got["recurrent"], "record_activations on a model with an nn.LSTM (whose output is a tuple)",
                    hint="a module's output need not be a tensor: record only when isinstance(output, torch.Tensor)")
    C.check_type(rec, dict, "the returned mapping")
    C.check_equal(rec, ref["recurrent"][1], "recorded shapes for an LSTM model with an unused layer",
                  hint="leave out submodules whose output is not a tensor (the LSTM's tuple) and those that never ran")


@judge.probe("test_record_activations_repeated")
def probe_record_repeated(seed):
    class Pyramid(nn.Module):
        def __init__(self):
            super().__init__()
            self.pool = nn.MaxPool1d(2)
            self.proj = nn.Conv1d(2, 2, 1)

        def forward(self, x):
            for _ in range(3):
                x = self.proj(self.pool(x))
            return x

    class Tied(nn.Module):
        def __init__(self):
            super().__init__()
            self.enc = nn.Linear(5, 3)
            self.act = nn.ReLU()
            self.dec = nn.Linear(3, 5)
            self.also_enc = self.enc                         # the same module under a second name

        def forward(self, x):
            y = self.dec(self.act(self.enc(x)))
            return self.also_enc(y[:1])                      # its last call sees one row

    class Split(nn.Module):
        """Returns a tensor for a wide input and a tuple (two halves) for a narrow one."""
        def forward(self, x):
            return x[..., :2] if x.shape[-1] > 2 else (x[..., :1], x[..., 1:])

    class Mixed(nn.Module):
        def __init__(self):
            super().__init__()
            self.split = Split()
            self.lin = nn.Linear(2, 2)

        def forward(self, x):
            first = self.split(x)                            # a tensor: shape (n, 2)
            halves = self.split(self.lin(first))             # a tuple: its last call returns no tensor
            return halves[0]

    gen = torch.Generator().manual_seed(seed)
    pool = nn.MaxPool1d(2)
    length = 8 * (2 + seed % 3)
    xs = (torch.randn(1, 2, 8, generator=gen), torch.randn(2, 2, length, generator=gen),
          torch.randn(3 + seed % 4, 5, generator=gen), torch.randn(2 + seed % 3, 6, generator=gen))
    return {"visible": attempt(lambda: record_activations(nn.Sequential(pool, nn.Identity(), pool), xs[0])),
            "pyramid": attempt(lambda: record_activations(Pyramid(), xs[1])),
            "tied": attempt(lambda: record_activations(Tied(), xs[2])),
            "mixed": attempt(lambda: record_activations(Mixed(), xs[3]))}


@probe_record_repeated.verdict
def _(got, ref):
    with visible():
        C.check_equal(expect_ok(got["visible"], "record_activations(Sequential(pool, Identity(), pool), x)"),
                      ref["visible"][1], "recorded shapes", hint="keep the LAST call's shape; list modules as model.named_modules() does (each module once)")
    C.check_equal(expect_ok(got["pyramid"], "record_activations on a model whose modules run three times"),
                  ref["pyramid"][1], "shapes when modules run three times", hint="keep the shape of the LAST call")
    C.check_equal(expect_ok(got["tied"], "record_activations on a model with a module registered twice"),
                  ref["tied"][1], "shapes for a module registered under two names ('enc' and 'also_enc')",
                  hint="model.named_modules() lists a shared module once, under its first name; keep its last shape")
    C.check_equal(expect_ok(got["mixed"], "record_activations on a module that returns a tensor, then a tuple"),
                  ref["mixed"][1], "shapes when a module's last call returns a tuple",
                  hint="keep the shape of the last call that returned a tensor: a later call that returns something "
                       "else changes nothing")


@judge.probe("test_record_activations_cleanup")
def probe_record_cleanup(seed):
    def hooks_left(model):
        return sum(len(m._forward_hooks) + len(m._forward_pre_hooks) for m in model.modules())

    class Boom(nn.Module):
        def forward(self, x):
            raise ValueError(f"boom {x.shape[0]}")

    gen = torch.Generator().manual_seed(seed)
    xs = [torch.randn(n, 3, generator=gen) for n in (1, 2, 2, 3, 4)]
    m = small_cnn()
    first = attempt(lambda: record_activations(m, torch.randn(1, 3, 8, 8, generator=gen)))
    visible_left = hooks_left(m)
    bad = nn.Sequential(nn.Linear(3, 3), nn.Linear(4, 2))          # raises: 3 features into Linear(4, 2)
    vis_raise = attempt(lambda: record_activations(bad, xs[0]))
    err_type = vis_raise[1].split(":")[0] if vis_raise[0] == "error" else ""
    out = {"visible": (first[0], visible_left, vis_raise[0], err_type, hooks_left(bad))}
    m = nn.Sequential(nn.Linear(3, 3), nn.Sequential(nn.Linear(3, 3), nn.Tanh()), nn.Linear(3, 3))
    for x in xs[1:3]:
        record_activations(m, x)
    out["after_two"] = hooks_left(m)
    deep = nn.Sequential(nn.Linear(3, 3), nn.Sequential(nn.Tanh(), Boom()), nn.Linear(3, 3))
    out["raised"] = attempt(lambda: record_activations(deep, xs[3]))
    out["after_raise"] = hooks_left(deep)
    # a hook the user had before the call must survive it
    user = nn.Sequential(nn.Linear(3, 4), nn.ReLU())
    seen = []
    user[0].register_forward_hook(lambda module, inputs, output: seen.append(tuple(output.shape)))
    run = attempt(lambda: record_activations(user, xs[4]))
    user(xs[1])
    out["user"] = {"run": run[0], "hooks": len(user[0]._forward_hooks), "seen": seen}
    return out


@probe_record_cleanup.verdict
def _(got, ref):
    with visible():
        status, left, raised, err_type, left_bad = got["visible"]
        C.check_true(status == "ok", "record_activations(small_cnn(), x) raised an exception")
        C.check_true(left == 0, f"{left} hook(s) are still registered after record_activations returned", hint="keep the handles from register_forward_hook and call handle.remove() on each")
        C.check_true(raised == "error" and err_type == "RuntimeError",
                     f"on a model whose forward raises RuntimeError, record_activations gave: {raised} {err_type}", hint="let the model's exception reach the caller: try/finally, no except")
        C.check_true(left_bad == 0, f"{left_bad} hook(s) left behind after a forward pass that raised", hint="remove the hooks in a finally: block")
    C.check_true(got["after_two"] == 0, f"{got['after_two']} hook(s) left after two calls on the same model")
    C.check_true(got["raised"] == ref["raised"],
                 f"a forward that raises {ref['raised'][1]} deep inside the model: record_activations gave "
                 f"{got['raised'][0]} {got['raised'][1] if got['raised'][0] == 'error' else ''}".rstrip(),
                 hint="do not catch the exception (no except, or re-raise it unchanged): the caller must see it")
    C.check_true(got["after_raise"] == 0, f"{got['after_raise']} hook(s) left behind after a forward pass that raised", hint="remove the hooks in a finally: block")
    u, ru = got["user"], ref["user"]
    C.check_true(u["run"] == "ok" and u["hooks"] == ru["hooks"] and u["seen"] == ru["seen"],
                 f"a forward hook the model had before the call: {u['hooks']} registered afterwards (expected "
                 f"{ru['hooks']}), it saw the calls {u['seen']} (expected {ru['seen']})",
                 hint="remove only the handles you registered; never clear module._forward_hooks")


@judge.probe("test_record_activations_fresh")
def probe_record_fresh(seed):
    class CountingNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = nn.Sequential(nn.Linear(4, 6), nn.ReLU(), nn.Linear(6, 2))
            self.calls = 0

        def forward(self, x):
            self.calls += 1
            return self.body(x)

    gen = torch.Generator().manual_seed(seed)
    xs = [torch.randn(n, k, generator=gen) for n, k in ((2, 3), (6, 4), (3, 4), (5 + seed % 3, 4))]
    record_activations(nn.Sequential(nn.Linear(3, 5), nn.ReLU()), xs[0])
    vis = attempt(lambda: record_activations(nn.Sequential(nn.Linear(4, 1)), xs[1]))
    net = CountingNet()
    first = record_activations(net, xs[2])
    calls_once = net.calls
    second = record_activations(net, xs[3])
    other = record_activations(nn.Sequential(nn.Linear(4, 3)), xs[3])
    return {"visible": vis, "calls": calls_once, "second": second, "other": other,
            "distinct": first is not second and second is not other}


@probe_record_fresh.verdict
def _(got, ref):
    with visible():
        C.check_equal(expect_ok(got["visible"], "a second record_activations call"), ref["visible"][1],
                      "shapes returned by the second call", hint="create the dict inside the function (a mutable default argument is shared between calls)")
    C.check_true(got["calls"] == 1, f"record_activations ran the model's forward {got['calls']} times; expected once",
                 hint="one forward pass: the hooks record everything during it")
    C.check_equal(got["second"], ref["second"], "shapes from a second call on the same model with another batch",
                  hint="nothing from earlier calls: a new dict each call")
    C.check_equal(got["other"], ref["other"], "shapes from a call on another model",
                  hint="nothing from earlier calls: a new dict each call")
    C.check_true(got["distinct"] is True, "two calls returned the same dict object",
                 hint="create the dict inside the function, not as a default argument or a global")


WHY['record_activations'] = "make_hook(name) binds each name when its hook is made, named_modules() lists a shared module once, and each call overwrites its entry, so the last tensor output wins. The handles are removed in finally with no except: the hooks go even when model(x) raises, and the error propagates."
