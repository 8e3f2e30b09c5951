"""Does not train at all: returns an empty list."""
CELL = "train_accumulated"
KIND = "do-nothing"
NOTE = "The answer does not do the work the statement asks for yet: it returns a placeholder (an empty list) without training."
FAILS = ["test_accumulate_values", "test_accumulate_one_allreduce"]
SOURCE = '''
def train_accumulated(model, micro_batches, optimizer, accum_steps):
    return []
'''
