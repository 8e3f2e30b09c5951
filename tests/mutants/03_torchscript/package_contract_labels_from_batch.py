"""Takes num_labels from the logits' first dimension (the batch symbol), not the last."""
CELL = "package_for_serving"
KIND = "wrong-value"
NOTE = "The logits are (batch, num_labels): the width of the last dimension is the number of labels; the first dimension is the batch, a symbol with no fixed size."
FAILS = ["test_serving_package"]
SOURCE = '''
from typing import Callable


def package_for_serving(program: torch.export.ExportedProgram, path: str) -> Callable:
    """Compile `program` with AOTInductor into the package `path`, its serving contract in the package's
    metadata; return the loaded package."""
    placeholders = {node.name: node for node in program.graph.nodes if node.op == "placeholder"}
    ids = placeholders["input_ids"].meta["val"]
    logits = program.graph.output_node().args[0][0].meta["val"]
    upper = lambda size: program.range_constraints[size.node.expr].upper
    contract = {"max_batch": str(int(upper(ids.shape[0]))), "max_length": str(int(upper(ids.shape[1]))),
                "num_labels": str(logits.shape[0])}
    torch._inductor.aoti_compile_and_package(program, package_path=str(path),
                                             inductor_configs={"aot_inductor.metadata": contract})
    return torch._inductor.aoti_load_package(str(path))
'''
