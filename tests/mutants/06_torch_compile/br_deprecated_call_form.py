"""Uses the deprecated torch._dynamo.explain(fn, *args) form (FutureWarning)."""
CELL = "break_report"
FAILS = ["test_break_report_current_api"]
SOURCE = '''
def break_report(fn, *args) -> dict:
    """Return {"graphs": int, "breaks": int, "reasons": list[str]} for fn(*args), from torch._dynamo.explain."""
    out = torch._dynamo.explain(fn, *args)
    return {"graphs": out.graph_count, "breaks": out.graph_break_count,
            "reasons": [str(r.reason) for r in out.break_reasons]}
'''
