"""Neither trains nor logs: returns an empty list."""
CELL = "train_logged"
KIND = "do-nothing"
FAILS = ["test_logged_values", "test_logged_collectives"]
SOURCE = '''
def train_logged(model, batches, optimizer, log_every):
    return []
'''
