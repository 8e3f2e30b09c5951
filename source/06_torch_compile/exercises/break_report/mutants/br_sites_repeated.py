"""Appends every explanation line of every record to its site's list: a site logged twice lists its explanation twice."""
KIND = "wrong-value"
NOTE = "The graph_breaks log repeats itself: the same break is logged again when Dynamo traces the frame again or a helper is called twice. A list of what to fix names each explanation once per site."
CELL = "break_report"
FAILS = ["test_break_report_sites"]
SOURCE = '''
def break_report(fn, *args) -> dict:
    """Return {"graphs", "breaks", "reasons", "sites", "fullgraph"} for one compiled call fn(*args), from a fresh cache."""
    torch._dynamo.reset()
    counter = CompileCounter()
    with capture_logs("graph_breaks") as logs:
        torch.compile(fn, backend=counter)(*args)
    records = list(logs["graph_breaks"])
    report = {"graphs": counter.count, "breaks": len(records), "reasons": records, "sites": {}, "fullgraph": True}
    for record in records:
        header, *body = record.splitlines()
        where = header.rsplit(" at ", 1)[-1]
        explained = report["sites"].setdefault(where, [])
        for line in body:
            if line.strip().startswith("Explanation:"):
                explained.append(line.strip()[len("Explanation:"):].strip())
    torch._dynamo.reset()
    try:
        torch.compile(fn, backend="eager", fullgraph=True)(*args)
    except Exception:
        report["fullgraph"] = False
    return report
'''
