"""Neither trains nor logs: returns an empty list."""
CELL = "train_logged"
KIND = "do-nothing"
NOTE = "The answer does not do the work the statement asks for yet: it returns a placeholder (an empty list) without training or logging."
FAILS = ["test_logged_values", "test_logged_collectives"]
SOURCE = '''
def train_logged(model, batches, optimizer, log_every):
    return []
'''
