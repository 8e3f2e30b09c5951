"""num_labels is the length of the last tensor in program.state_dict (the head's bias here), not the logits' last dimension read from the graph output. (written blind, from the release alone)."""
CELL = 'package_for_serving'
KIND = 'overfit'
NOTE = "The order of a program's parameters says nothing about its outputs: the number of labels is the width of the output itself, read from the graph's output node."
FAILS = ['test_serving_package']
SOURCE = '''
from typing import Callable


def package_for_serving(program: torch.export.ExportedProgram, path: str) -> Callable:
    """Compile `program` with AOTInductor into the package `path`, its serving contract in the package's
    metadata; return the loaded package."""
    user = {spec.arg.name for spec in program.graph_signature.input_specs if spec.kind.name == "USER_INPUT"}
    nodes = {node.name: node for node in program.graph.nodes if node.op == "placeholder" and node.name in user}
    batch_size, length = nodes["input_ids"].meta["val"].shape
    logits = program.graph.output_node().args[0][0].meta["val"]

    def upper(size) -> str:
        return str(int(program.range_constraints[size.node.expr].upper))

    last = list(program.state_dict.values())[-1]          # the classifier head's bias: one entry per label
    contract = {"max_batch": upper(batch_size), "max_length": upper(length), "num_labels": str(last.shape[0])}
    torch._inductor.aoti_compile_and_package(program, package_path=path,
                                             inductor_configs={"aot_inductor.metadata": contract})
    return torch._inductor.aoti_load_package(path)
'''
