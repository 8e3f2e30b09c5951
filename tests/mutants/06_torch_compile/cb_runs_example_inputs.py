"""Returns a callable that runs the graph on the example inputs it was compiled with, not on the real arguments."""
CELL = "counting_backend"
FAILS = ["test_counting_backend_outputs"]
SOURCE = '''
class CountingBackend:
    """A torch.compile backend: appends to self.counts the number of call_function nodes of each graph it gets."""

    def __init__(self):
        self.counts = []

    def __call__(self, gm, example_inputs):
        self.counts.append(sum(1 for node in gm.graph.nodes if node.op == "call_function"))
        return lambda *args: gm(*example_inputs)
'''
