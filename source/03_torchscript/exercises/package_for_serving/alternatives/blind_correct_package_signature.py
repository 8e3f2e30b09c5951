"""Correct: finds the user inputs through the graph signature, reads each symbol's upper bound from range_constraints, the logits' last dim from the output node, passes the contract as aot_inductor.metadata. (written blind, from the release alone)."""
CELL = 'package_for_serving'
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

    contract = {"max_batch": upper(batch_size), "max_length": upper(length), "num_labels": str(int(logits.shape[-1]))}
    if os.path.exists(path):
        os.remove(path)
    torch._inductor.aoti_compile_and_package(program, package_path=path,
                                             inductor_configs={"aot_inductor.metadata": contract})
    return torch._inductor.aoti_load_package(path)
'''
