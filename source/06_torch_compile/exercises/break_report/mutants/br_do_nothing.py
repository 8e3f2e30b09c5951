"""Returns a report of nothing: no graphs, no breaks, no reasons, fullgraph True, without compiling anything."""
KIND = "do-nothing"
NOTE = "The answer does not do the work the statement asks for yet: it returns a placeholder (a fixed report) without compiling or calling the function."
CELL = "break_report"
FAILS = ["test_break_report_counts", "test_break_report_fullgraph", "test_break_report_reasons", "test_break_report_sites",
         "test_break_report_repeat"]
SOURCE = '''
def break_report(fn, *args) -> dict:
    """Return {"graphs", "breaks", "reasons", "sites", "fullgraph"} for one compiled call fn(*args), from a fresh cache."""
    return {"graphs": 0, "breaks": 0, "reasons": [], "sites": {}, "fullgraph": True}
'''
