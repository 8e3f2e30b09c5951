"""Does not train at all: returns an empty list."""
CELL = "train_accumulated"
KIND = "do-nothing"
FAILS = ["test_accumulate_values", "test_accumulate_one_allreduce"]
SOURCE = '''
def train_accumulated(model, micro_batches, optimizer, accum_steps):
    return []
'''
