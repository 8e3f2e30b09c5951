"""Tallies node kinds with collections.Counter and returns the GraphModule itself (also a callable)."""
CELL = "counting_backend"
SOURCE = '''
import collections

class CountingBackend:
    """A torch.compile backend: appends to self.counts the number of call_function nodes of each graph it gets."""

    def __init__(self):
        self.counts: list[int] = []

    def __call__(self, gm, example_inputs):
        kinds = collections.Counter(node.op for node in gm.graph.nodes)
        self.counts.append(kinds["call_function"])
        return gm
'''
