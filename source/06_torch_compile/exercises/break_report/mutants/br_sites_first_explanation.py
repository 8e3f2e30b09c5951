"""Reads one explanation per record (the first), so the second explanation of a break inside a loop is lost."""
KIND = "edge-case"
NOTE = "One record can explain more than one thing: a break inside a loop says why the call broke, then that Dynamo gave up on the whole loop. Reading only the first explanation line drops the second."
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
        first = next((line for line in body if line.strip().startswith("Explanation:")), None)
        if first is not None:
            text = first.strip()[len("Explanation:"):].strip()
            if text not in explained:
                explained.append(text)
    torch._dynamo.reset()
    try:
        torch.compile(fn, backend="eager", fullgraph=True)(*args)
    except Exception:
        report["fullgraph"] = False
    return report
'''
