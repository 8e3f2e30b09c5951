"""Never resets Dynamo: a function compiled before (or reported twice) hits its cached code and reports nothing."""
KIND = "state"
NOTE = "Dynamo caches compiled code per function: without a fresh cache, a function compiled before (or reported a second time) reuses its cached code, so nothing is compiled or logged."
CELL = "break_report"
FAILS = ["test_break_report_fullgraph", "test_break_report_repeat"]
SOURCE = '''
def break_report(fn, *args) -> dict:
    """Return {"graphs", "breaks", "reasons", "fullgraph"} for one compiled call fn(*args), from a fresh cache."""
    counter = CompileCounter()
    with capture_logs("graph_breaks") as logs:
        torch.compile(fn, backend=counter)(*args)
    try:
        torch.compile(fn, backend="eager", fullgraph=True)(*args)
        ok = True
    except Exception:
        ok = False
    return {"graphs": counter.count, "breaks": len(logs["graph_breaks"]), "reasons": list(logs["graph_breaks"]),
            "fullgraph": ok}
'''
