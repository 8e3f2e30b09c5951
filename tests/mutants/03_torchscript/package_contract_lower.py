"""Stores each size symbol's lower bound instead of its upper bound."""
CELL = "package_for_serving"
KIND = "wrong-value"
NOTE = "A range constraint has two ends: the most a server may send is the upper end of the symbol's range, not the lower one."
FAILS = ["test_serving_package"]
SOURCE = '''
from typing import Callable


def package_for_serving(program: torch.export.ExportedProgram, path: str) -> Callable:
    """Compile `program` with AOTInductor into the package `path`, its serving contract in the package's
    metadata; return the loaded package."""
    placeholders = {node.name: node for node in program.graph.nodes if node.op == "placeholder"}
    ids = placeholders["input_ids"].meta["val"]
    logits = program.graph.output_node().args[0][0].meta["val"]
    lower = lambda size: program.range_constraints[size.node.expr].lower
    contract = {"max_batch": str(int(lower(ids.shape[0]))), "max_length": str(int(lower(ids.shape[1]))),
                "num_labels": str(int(logits.shape[-1]))}
    torch._inductor.aoti_compile_and_package(program, package_path=str(path),
                                             inductor_configs={"aot_inductor.metadata": contract})
    return torch._inductor.aoti_load_package(str(path))
'''
