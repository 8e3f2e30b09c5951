"""Does not train at all: returns an empty list."""
CELL = "train_mixed"
KIND = "do-nothing"
NOTE = 'The answer does not do the work the statement asks for yet: it returns a placeholder (an empty list) without training.'
FAILS = ['test_mixed_values', 'test_mixed_clip', 'test_mixed_calls', 'test_mixed_overflow']
SOURCE = '''
def train_mixed(model, micro_batches, optimizer, scaler, accum_steps, max_norm):
    return []
'''
