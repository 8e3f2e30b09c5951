"""Does nothing: never runs the model and returns an empty dict."""
KIND = "do-nothing"
NOTE = "The answer does not do the work the statement asks for yet: it never runs the model and returns an empty dict."
CELL = "record_activations"
FAILS = ["test_record_activations_shapes", "test_record_activations_repeated", "test_record_activations_cleanup",
         "test_record_activations_fresh"]
SOURCE = '''
def record_activations(model, x):
    return {}
'''
