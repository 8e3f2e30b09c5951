"""Keys the sites by each record's whole first line, so a duplicate record ('user stack suppressed ...') of the same site becomes a second site."""
KIND = "contract"
NOTE = "A site is the FILE:LINE at the end of the first line. The rest of that line changes from record to record (a repeated break says its user stack was suppressed), so the whole line does not identify the place."
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
        explained = report["sites"].setdefault(header, [])
        for line in body:
            if line.strip().startswith("Explanation:"):
                text = line.strip()[len("Explanation:"):].strip()
                if text not in explained:
                    explained.append(text)
    torch._dynamo.reset()
    try:
        torch.compile(fn, backend="eager", fullgraph=True)(*args)
    except Exception:
        report["fullgraph"] = False
    return report
'''
