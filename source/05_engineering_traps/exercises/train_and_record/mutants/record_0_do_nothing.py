"""Neither trains nor records: no losses and an empty tensor."""
CELL = "train_and_record"
KIND = "do-nothing"
NOTE = "The answer does not do the work the statement asks for yet: it returns a placeholder (no losses, an empty tensor) without training or recording."
FAILS = ["test_record_values", "test_record_no_graph", "test_record_hooks"]
SOURCE = '''
def train_and_record(model, loader, optimizer, layer):
    return [], torch.empty(0)
'''
