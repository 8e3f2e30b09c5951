"""Counts every node of the graph (placeholders and output included), not only call_function nodes."""
CELL = "counting_backend"
FAILS = ["test_counting_backend_counts"]
SOURCE = '''
class CountingBackend:
    """A torch.compile backend: appends to self.counts the number of call_function nodes of each graph it gets."""

    def __init__(self):
        self.counts = []

    def __call__(self, gm, example_inputs):
        self.counts.append(len(gm.graph.nodes))
        return gm.forward
'''
