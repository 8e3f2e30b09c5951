"""Trains nothing: returns no losses and the state it was given (or the initial one)."""
CELL = "tbptt_train"
KIND = "do-nothing"
NOTE = "The answer does not do the work the statement asks for yet: it returns a placeholder (no losses, the state unchanged) without training."
FAILS = ["test_tbptt_losses", "test_tbptt_graph_constant", "test_tbptt_state"]
SOURCE = '''
def tbptt_train(model, sequence, chunk_len, optimizer, state=None):
    return [], state if state is not None else model.init_state(sequence.shape[1], sequence.dtype)
'''
