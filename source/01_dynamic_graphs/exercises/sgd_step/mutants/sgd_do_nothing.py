"""Does nothing: no backward, no update, returns None."""
KIND = "do-nothing"
NOTE = "The answer does not do the work the statement asks for yet: it computes no loss, takes no step and returns nothing."
CELL = "sgd_step"
FAILS = ["test_sgd_step_update", "test_sgd_step_weight_decay", "test_sgd_step_returns_float",
         "test_sgd_step_no_accumulation", "test_sgd_step_edge_cases", "test_sgd_step_leaves"]
SOURCE = '''
def sgd_step(params, loss_fn, lr, weight_decay=0.0):
    pass
'''
