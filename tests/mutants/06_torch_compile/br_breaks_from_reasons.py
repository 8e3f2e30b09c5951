"""Counts breaks as len(break_reasons) and graphs as that plus one: wrong when explain records more or fewer reasons than breaks."""
CELL = "break_report"
FAILS = ["test_break_report_counts"]
SOURCE = '''
def break_report(fn, *args) -> dict:
    """Return {"graphs": int, "breaks": int, "reasons": list[str]} for fn(*args), from torch._dynamo.explain."""
    out = torch._dynamo.explain(fn)(*args)
    reasons = [str(r.reason) for r in out.break_reasons]
    return {"graphs": len(reasons) + 1, "breaks": len(reasons), "reasons": reasons}
'''
