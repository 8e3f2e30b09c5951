"""Exercise 'break_report' of 06_torch_compile: its hidden probes and verdicts (instructor side: never released).

Run by course.grading.judge.verdicts.load after ../../judge.py, in its namespace (the names defined there,
and in the exercises above this one, are in scope). Its mutants and alternatives are in the folders beside
this file.
"""

# --- this exercise's own helpers (only its probes and verdicts use them; a @judge.shared one ships with
# every probe of the chapter, as the chapter's own do) ------------------------------------------------

def _explanation(record):
    """The 'Explanation: ...' line of a graph_breaks log record (the part that names the cause), or its first line."""
    for line in record.splitlines():
        if line.strip().startswith("Explanation:"):
            return line.strip()
    lines = [line.strip() for line in record.splitlines() if line.strip()]
    return lines[0] if lines else ""


def _record_key_lines(record):
    """Lines of a graph_breaks record that hold no file path: its header (up to ' at <file>'), the 'Graph Break
    Reason:', 'Explanation:' and 'Hint:' lines. A reason that keeps the record's whole text contains them all."""
    keys = []
    for line in record.splitlines():
        text = line.strip()
        if not keys and text:
            keys.append(text.split(" at ")[0])                 # 'Graph break in user code' (the path may differ)
        elif text.startswith(("Graph Break Reason:", "Explanation:", "Hint:")):
            keys.append(text)
    return keys


# --- Exercise 6.1 · break_report ---------------------------------------------------------------------
# clause -> test
#   "graphs": graphs Dynamo compiled for one call (a backend's count) ........ test_break_report_counts
#   "breaks": one per graph_breaks log record, a leading break included,
#   records with the same text each counted (a helper called twice) ......... test_break_report_counts
#   a function with no ops has 0 graphs and 0 breaks ......................... test_break_report_counts
#   "fullgraph": whether fullgraph=True compiles (may disagree with breaks) .. test_break_report_fullgraph
#   "reasons": the text of each log record, in order (the whole record: header,
#   reason, explanation and hints, not one line of it) ....................... test_break_report_reasons
#   "sites": one key per site, "FILE:LINE" as the record's first line ends
#   (a helper's line, or a library's, not fn's), in the order first named;
#   a site logged by several records (a helper called twice, a duplicate
#   record) once; its value: the text after "Explanation:" of every
#   explanation line logged there (a loop's break gives two), stripped,
#   each text once, in order; no break: {} ................................... test_break_report_sites
#   the same report twice in a row / after fn was compiled elsewhere ........ test_break_report_repeat
#   the logging settings are left as they were (an artifact on before stays on,
#   graph_breaks off again, a log level set before (dynamo=ERROR) kept) ....... test_break_report_repeat
#   the report describes the call on these args (same fn, other args: another
#   report; a memo per function fails) ....................................... test_break_report_counts
#   returns a plain dict with exactly those keys ............................. every test

@judge.shared
def _br_functions():
    """Hidden functions for Exercise 6.1: leading breaks, no ops, breaks in loops and helpers, clean code."""
    import subprocess

    def leading_print(x):                  # the notebook's visible examples (defined in demo cells there)
        print("  (leading_print runs its print)")
        return torch.sin(x) + 1

    def two_ops_and_a_print(x):
        y = torch.sin(x) + 1
        print("  (the print inside the function runs)")
        return torch.cos(y) * 2

    def lead_sub(x):
        subprocess.run(["true"], check=False)
        return torch.cos(x) * 2

    def no_ops(x):
        return x

    def only_print(x):
        print("  (probe: only_print)")
        return x

    def loop_print(x):
        for i in range(2):
            x = x + i
            print("  (probe: loop)", i)
        return x

    def _helper(t):
        print("  (probe: helper)")
        return t * 3

    def nested(x):
        return _helper(torch.sin(x)) + 1

    def two_leading(x):
        print("  (probe: one)")
        print("  (probe: two)")
        return torch.sin(x) - 1

    def clean(x):
        return torch.relu(x) * 2 - x.mean()

    def lead_if(x):
        if x.sum() > 0:
            x = x + 1
        return torch.tanh(x)

    def lead_item(x):
        s = x.sum().item()
        return x * s

    def vectorized(x):
        return legacy_score(x * 2) + 1

    def item_if(x):
        if x.sum().item() > 0:
            return x + 1
        return x - 1

    def noisy_helper(t):                   # the visible sites example: its print is the one site
        print(end="")
        return t * 3

    def helper_twice(t):
        return noisy_helper(noisy_helper(t + 1) - 1)

    def _loop_helper_step(t):
        print("  (probe: loop helper)")
        return t + 1

    def loop_helper(x):                    # the same site inside a loop: one record explains twice
        for _ in range(2):
            x = _loop_helper_step(x)
        return torch.cos(x)

    def by_len(x):                         # breaks only for inputs longer than 4: the report depends on args
        y = torch.sin(x)
        if x.shape[0] > 4:
            print("  (probe: long input)")
        return y * 2

    return {"leading_print": leading_print, "two_ops_and_a_print": two_ops_and_a_print,
            "lead_sub": lead_sub, "no_ops": no_ops, "only_print": only_print, "loop_print": loop_print,
            "nested": nested, "two_leading": two_leading, "clean": clean, "lead_if": lead_if,
            "lead_item": lead_item, "vectorized": vectorized, "item_if": item_if, "by_len": by_len,
            "noisy_helper": noisy_helper, "helper_twice": helper_twice, "loop_helper": loop_helper}


@judge.shared
def _br_call(fn, x):
    """break_report(fn, x) from a fresh cache, as plain data (or the error text)."""
    torch._dynamo.reset()
    try:
        r = break_report(fn, x)
    except Exception as err:  # noqa: BLE001 - the student's code may raise anything
        return {"error": _error_text(err)}
    return _no_sites(r)


@judge.shared
def _no_sites(r):
    """r without the value of "sites" (its key stays): only test_break_report_sites judges it, and a sites list
    of another length would make every other probe's data differ in form from the reference's."""
    if isinstance(r, dict) and "sites" in r:
        return {**r, "sites": None}
    return r


@judge.probe("test_break_report_counts")
def probe_br_counts(seed):
    g = torch.Generator().manual_seed(seed)
    fns = _br_functions()
    names = ["lead_sub", "no_ops", "loop_print", "lead_if",      # each defeats explain or the break counters
             "helper_twice"]                                   # one site, two records with the same text
    xs = {name: torch.randn(int(torch.randint(3, 9, (), generator=g)), generator=g) for name in names}
    out = {"visible": [_br_call(fns["leading_print"], torch.randn(3)), _br_call(fns["two_ops_and_a_print"], torch.randn(3))]}
    out["cases"] = {name: _br_call(fns[name], xs[name]) for name in names}
    by_len = fns["by_len"]                                      # one function object, two calls with other args
    out["same_fn"] = [_br_call(by_len, torch.randn(3, generator=g)),
                      _br_call(by_len, torch.randn(int(torch.randint(5, 9, (), generator=g)), generator=g))]
    return out


def _check_report_form(r, where):
    C.check_type(r, dict, name=f"break_report({where})", hint="return a plain dict")
    if "error" in r and len(r) == 1:
        C.check_true(False, f"break_report({where}) raised {r['error']}")
    C.check_equal(sorted(str(k) for k in r), ["breaks", "fullgraph", "graphs", "reasons", "sites"],
                  name=f"keys of break_report({where})")


@probe_br_counts.verdict
def _(got, ref):
    with visible():
        for r, name, want in zip(got["visible"], ("leading_print", "two_ops_and_a_print"), ((1, 1), (2, 1))):
            _check_report_form(r, name)
            C.check_equal((r["graphs"], r["breaks"]), want, name=f"(graphs, breaks) for {name}",
                          hint="graphs: what your backend received; breaks: records of the graph_breaks log "
                               "(explain misses a break before the first op)")
    for name, want in ref["cases"].items():
        r = got["cases"].get(name)
        _check_report_form(r, f"a hidden function ({name})")
        hint = None
        if name in ("lead_sub", "loop_print", "no_ops"):
            hint = ("this function breaks before its first op (or has no ops, or breaks in a loop): explain's "
                    "counts are wrong here, the graph_breaks log and a counting backend are not")
        elif name == "helper_twice":
            hint = "a helper called twice breaks twice: every record of the log is a break, even one that repeats another"
        C.check_equal(r["graphs"], want["graphs"], name=f'report["graphs"] for a hidden function ({name})',
                      hint=hint or "count the graphs your backend receives during one call")
        C.check_equal(r["breaks"], want["breaks"], name=f'report["breaks"] for a hidden function ({name})',
                      hint=hint or "one break per record of the graph_breaks log")
    for k, (r, want) in enumerate(zip(got["same_fn"], ref["same_fn"])):
        where = f"a hidden function called on {'a short' if k == 0 else 'a longer'} input (call {k + 1} on it)"
        _check_report_form(r, where)
        C.check_equal((r["graphs"], r["breaks"]), (want["graphs"], want["breaks"]),
                      name=f"(graphs, breaks) for {where}",
                      hint="the report describes the call fn(*args) on these args: compile and call fn again at "
                           "every break_report call (the function breaks only for long inputs)")


@judge.probe("test_break_report_fullgraph")
def probe_br_fullgraph(seed):
    g = torch.Generator().manual_seed(seed + 1)
    fns = _br_functions()
    names = ["lead_item", "no_ops", "item_if"]
    xs = {name: torch.randn(5, generator=g) for name in names}
    out = {"visible": [_br_call(fns["leading_print"], torch.randn(3)), _br_call(lambda t: torch.relu(t) * 2, torch.randn(3))]}
    out["cases"] = {name: _br_call(fns[name], xs[name]) for name in names}
    return out


@probe_br_fullgraph.verdict
def _(got, ref):
    with visible():
        for r, name, want in zip(got["visible"], ("leading_print", "a clean function"), (False, True)):
            _check_report_form(r, name)
            C.check_equal(r["fullgraph"], want, name=f'report["fullgraph"] for {name}')
    for name, want in ref["cases"].items():
        r = got["cases"].get(name)
        _check_report_form(r, f"a hidden function ({name})")
        hint = "report whether torch.compile(fn, backend='eager', fullgraph=True)(*args) raised, from a fresh cache"
        if name == "lead_item":
            hint = ("this function has a graph break (the log shows it), yet fullgraph=True compiles it (.item() "
                    "captured as an unbacked scalar): compile it, do not infer it from the break count")
        if name == "no_ops":
            hint = ("a function with no ops compiles with fullgraph=True; reset Dynamo before the fullgraph compile "
                    "(the earlier compile marked the frame as skipped)")
        C.check_equal(r["fullgraph"], want["fullgraph"], name=f'report["fullgraph"] for a hidden function ({name})',
                      hint=hint)


@judge.probe("test_break_report_reasons")
def probe_br_reasons(seed):
    g = torch.Generator().manual_seed(seed + 2)
    fns = _br_functions()
    names = ["two_leading", "vectorized"]
    xs = {name: torch.randn(4, generator=g) for name in names}
    out = {"visible": _br_call(fns["leading_print"], torch.randn(3))}
    out["cases"] = {name: _br_call(fns[name], xs[name]) for name in names}
    return out


@probe_br_reasons.verdict
def _(got, ref):
    with visible():
        r = got["visible"]
        _check_report_form(r, "leading_print")
        C.check_type(r["reasons"], list, name='report["reasons"]')
        C.check_equal(len(r["reasons"]), 1, name="number of reasons for leading_print")
        C.check_type(r["reasons"][0], str, name='report["reasons"][0]')
        C.check_true("print" in r["reasons"][0],
                     f'the reason for leading_print should mention `print`, got {r["reasons"][0][:120]!r}',
                     hint="keep the whole text of each graph_breaks log record")
    for name, want in ref["cases"].items():
        r = got["cases"].get(name)
        _check_report_form(r, f"a hidden function ({name})")
        C.check_type(r["reasons"], list, name=f'report["reasons"] ({name})')
        C.check_equal(len(r["reasons"]), len(want["reasons"]), name=f"number of reasons for a hidden function ({name})",
                      hint="one string per graph_breaks log record")
        for i, (text, expected) in enumerate(zip(r["reasons"], want["reasons"])):
            C.check_type(text, str, name=f'report["reasons"][{i}] ({name})')
            key = _explanation(expected)
            C.check_true(key in text, f'report["reasons"][{i}] for {name} should contain the log\'s explanation '
                                      f'{key[:140]!r}; got {text[:160]!r}',
                         hint="keep each record's whole text, in the order the log gave them")
            missing = [line for line in _record_key_lines(expected) if line not in text]
            C.check_true(not missing, f'report["reasons"][{i}] for {name} is not the whole log record: it lacks '
                                      f'{missing[0][:140]!r}' if missing else "",
                         hint="a reason is the text of the whole record (header, reason, explanation and hints), "
                              "not one line of it")


@judge.shared
def _portable_key(key, here):
    """A site key with its folder named ("<probe>", "<course>", "<stdlib>") instead of spelled."""
    import os
    import subprocess

    import course.dynamo

    folders = {os.path.dirname(here): "<probe>", os.path.dirname(course.dynamo.__file__): "<course>",
               os.path.dirname(subprocess.__file__): "<stdlib>"}
    for folder, name in folders.items():
        if folder and key.startswith(folder + os.sep):
            return name + key[len(folder):]
    return key


@judge.shared
def _sites_wire(fn, x, here):
    """break_report(fn, x) from a fresh cache, as {"keys": its keys, "sites": JSON text of [[site, explanations],
    ...]} (or the error text). The folders of a site are named, not spelled: the reference worker and the
    student's sandbox may keep the probe, course/ and the standard library in different places; a key that is
    not FILE:LINE in one of them stays as it is (and fails the comparison, as it should)."""
    import json

    torch._dynamo.reset()
    try:
        r = break_report(fn, x)
    except Exception as err:  # noqa: BLE001 - the student's code may raise anything
        return {"error": _error_text(err)}
    if not isinstance(r, dict):
        return {"keys": [], "sites": json.dumps(f"a {type(r).__name__}, not a dict")}
    sites = r.get("sites")
    if not isinstance(sites, dict):
        return {"keys": sorted(str(k) for k in r), "sites": json.dumps(f"a {type(sites).__name__}, not a dict")}
    items = []
    for key, value in sites.items():
        key = _portable_key(str(key), here)
        value = [str(v)[:2000] for v in value] if isinstance(value, list) else f"a {type(value).__name__}, not a list"
        items.append([key[:2000], value])
    return {"keys": sorted(str(k) for k in r), "sites": json.dumps(items[:100])}


@judge.probe("test_break_report_sites")
def probe_br_sites(seed):
    g = torch.Generator().manual_seed(seed + 4)
    fns = _br_functions()
    code = fns["noisy_helper"].__code__
    import json

    site = _portable_key(f"{code.co_filename}:{code.co_firstlineno + 1}", code.co_filename)
    out = {"visible": {"report": _sites_wire(fns["helper_twice"], torch.randn(3), code.co_filename),
                       "site": json.dumps(site),
                       "clean": _sites_wire(lambda t: torch.relu(t) * 2, torch.randn(3), code.co_filename)}}
    names = ["nested", "loop_helper", "vectorized", "two_leading", "lead_sub", "clean"]
    xs = {name: torch.randn(int(torch.randint(3, 8, (), generator=g)), generator=g) for name in names}
    out["cases"] = {name: _sites_wire(fns[name], xs[name], code.co_filename) for name in names}
    return out


def _decode_sites(r, where):
    """The [[site, explanations], ...] a probe sent for ``where``, after checking the report's keys."""
    import json

    C.check_type(r, dict, name=f"break_report({where})", hint="return a plain dict")
    if "error" in r and len(r) == 1:
        C.check_true(False, f"break_report({where}) raised {r['error']}")
    C.check_equal(r.get("keys"), ["breaks", "fullgraph", "graphs", "reasons", "sites"],
                  name=f"keys of break_report({where})")
    try:
        items = json.loads(r["sites"])
    except (TypeError, ValueError):
        items = "unreadable"
    C.check_true(isinstance(items, list), f'report["sites"] for {where} should be a dict of lists, got {items}')
    return items


@probe_br_sites.verdict
def _(got, ref):
    import json

    with visible():
        items = _decode_sites(got["visible"]["report"], "_helper_twice")
        site = json.loads(ref["visible"]["site"])
        C.check_equal([k for k, _ in items], [site], name="the sites of _helper_twice (one print, reached twice)",
                      hint="a site is the FILE:LINE at the end of a record's first line; list each site once")
        explained = items[0][1]
        C.check_true(isinstance(explained, list), f"the value of a site should be a list, got {explained}")
        C.check_equal(len(explained), 1, name="number of explanations at that site",
                      hint="the same explanation, logged by several records, is listed once")
        C.check_true(explained[0].startswith("Dynamo does not know how to trace builtin operator `print`"),
                     f'the explanation at that site should be the text after "Explanation:", got {explained[0][:120]!r}')
        C.check_equal(_decode_sites(got["visible"]["clean"], "a clean function"), [],
                      name='report["sites"] with no break')
    hints = {"nested": "two records name one site (the second says 'user stack suppressed due to duplicate graph "
                       "break'): one key, its explanation once",
             "loop_helper": "a break inside a loop: one record gives two explanations (the call, then the loop); "
                            "keep every explanation line of a record",
             "vectorized": "the site is inside a library function (course.dynamo), as the first line says; its "
                           "records give two different explanations, each listed once, in order",
             "two_leading": "two prints on two lines: two sites, in the order the log names them",
             "lead_sub": "tracing stopped inside the library (subprocess): the site is the FILE:LINE the record "
                         "names, not the line of fn",
             "clean": "no break: an empty dict"}
    for name, want in ref["cases"].items():
        items = _decode_sites(got["cases"].get(name), f"a hidden function ({name})")
        expected = json.loads(want["sites"])
        C.check_equal([k for k, _ in items], [k for k, _ in expected],
                      name=f"the sites (keys, in order) for a hidden function ({name})", hint=hints[name])
        for (site, explained), (_, wanted) in zip(items, expected):
            C.check_equal(explained, wanted, name=f"the explanations at one site of a hidden function ({name})",
                          hint=hints[name])


@judge.probe("test_break_report_repeat")
def probe_br_repeat(seed):
    import torch._logging._internal as _log_internal

    g = torch.Generator().manual_seed(seed + 3)
    fns = _br_functions()
    torch._dynamo.reset()
    try:
        first = _no_sites(break_report(fns["two_ops_and_a_print"], torch.randn(3)))
        second = _no_sites(break_report(fns["two_ops_and_a_print"], torch.randn(3)))
        visible_pair = [first, second]
    except Exception as err:  # noqa: BLE001
        visible_pair = [{"error": _error_text(err)}, {"error": _error_text(err)}]
    cases = {}
    for name in ("nested",):
        x = torch.randn(6, generator=g)
        torch._dynamo.reset()
        try:
            torch.compile(fns[name], backend="eager")(x)          # compiled before, as in a real notebook
            cases[name] = [_no_sites(break_report(fns[name], x)), _no_sites(break_report(fns[name], x))]
        except Exception as err:  # noqa: BLE001
            cases[name] = [{"error": _error_text(err)}] * 2
    torch._dynamo.reset()
    settings = {}
    import logging

    for label, before in (("nothing on", {}), ("recompiles on", {"recompiles": True}),
                          ("dynamo=ERROR and recompiles on", {"dynamo": logging.ERROR, "recompiles": True})):
        torch._logging.set_logs(**before)
        try:
            break_report(fns["lead_sub"], torch.randn(3, generator=g))
        except Exception as err:  # noqa: BLE001
            settings[label] = _error_text(err)
        else:
            settings[label] = sorted(a for a in ("graph_breaks", "recompiles", "guards", "graph_code")
                                     if _log_internal.log_state.is_artifact_enabled(a))
            levels = _log_internal.log_state.log_qname_to_level
            if levels:                                               # log levels set before the call are kept too
                settings[label] = [settings[label], sorted((str(k), int(v)) for k, v in levels.items())]
        torch._logging.set_logs()
    torch._dynamo.reset()
    return {"visible": visible_pair, "cases": cases, "settings": settings}


@probe_br_repeat.verdict
def _(got, ref):
    with visible():
        first, second = got["visible"]
        _check_report_form(first, "two_ops_and_a_print")
        _check_report_form(second, "two_ops_and_a_print, second call")
        C.check_equal((second["graphs"], second["breaks"]), (first["graphs"], first["breaks"]),
                      name="(graphs, breaks) of a second report on the same function",
                      hint="the second compile found the first one's cached code: reset Dynamo before compiling")
    for name, (w, _) in ref["cases"].items():
        for k, r in enumerate(got["cases"][name]):
            _check_report_form(r, f"{name}, call {k + 1}")
            C.check_equal({key: r[key] for key in ("graphs", "breaks", "fullgraph")},
                          {key: w[key] for key in ("graphs", "breaks", "fullgraph")},
                          name=f"report {k + 1} on a hidden function ({name}) that had been compiled before",
                          hint="start from a fresh cache (torch._dynamo.reset()) before each compile, so cached "
                               "code cannot hide graphs and breaks")
    with visible():
        C.check_equal(got["settings"]["recompiles on"], ref["settings"]["recompiles on"],
                      name="log artifacts on after break_report, when recompiles was on before it",
                      hint="torch._logging.set_logs() resets every setting to the default; cd.capture_logs restores "
                           "the ones that were on")
    for label, want in ref["settings"].items():
        C.check_equal(got["settings"][label], want, name=f"log artifacts on after break_report, with {label} before it",
                      hint="leave the logging settings as you found them: cd.capture_logs restores them")


WHY['break_report'] = "torch._dynamo.reset() before each compile makes every call start cold, so cached code cannot hide graphs or breaks. The counting backend sees each graph, capture_logs keeps one record per break and restores the log settings, and the fullgraph=True compile runs inside try/except."
