"""Trains nothing: returns no losses and the state it was given (or the initial one)."""
CELL = "tbptt_train"
KIND = "do-nothing"
FAILS = ["test_tbptt_losses", "test_tbptt_graph_constant", "test_tbptt_state"]
SOURCE = '''
def tbptt_train(model, sequence, chunk_len, optimizer, state=None):
    return [], state if state is not None else model.init_state(sequence.shape[1], sequence.dtype)
'''
