"""Does nothing useful: returns zeros of the right shape and dtype."""
KIND = "do-nothing"
NOTE = "The answer does not do the work the statement asks for yet: it returns zeros."
CELL = "pooled_scores"
FAILS = ["test_pooled_scores_values", "test_pooled_scores_gradients", "test_pooled_scores_batched",
         "test_pooled_scores_edge_cases"]
SOURCE = '''
def pooled_scores(x, lengths, w):
    return torch.zeros(x.shape[0], dtype=x.dtype)
'''
