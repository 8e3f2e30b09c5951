"""Returns 0.0 without looking at the model or the data."""
CELL = "evaluate"
KIND = "do-nothing"
NOTE = "The answer does not do the work the statement asks for yet: it returns a placeholder (a constant) without running the model on the data."
FAILS = ["test_evaluate_value", "test_evaluate_no_graph", "test_evaluate_modes"]
SOURCE = '''
def evaluate(model, loader):
    return 0.0
'''
