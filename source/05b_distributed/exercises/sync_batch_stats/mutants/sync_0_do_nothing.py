"""Returns zeros and a count of 0, without any communication."""
CELL = "sync_batch_stats"
KIND = "do-nothing"
NOTE = "The answer does not do the work the statement asks for yet: it returns a placeholder (zeros and a count of 0) without combining the ranks' data."
FAILS = ["test_sync_stats_mean_count", "test_sync_stats_var"]
SOURCE = '''
def sync_batch_stats(x):
    zeros = torch.zeros(x.shape[1], dtype=x.dtype)
    return zeros, zeros.clone(), 0
'''
