"""Correct: loads the path that aoti_compile_and_package returns. (written blind, from the release alone)"""
CELL = "package_for_serving"
SOURCE = '''
from typing import Callable


def package_for_serving(program: torch.export.ExportedProgram, path: str) -> Callable:
    """Compile `program` with AOTInductor into the package `path`; return the loaded package."""
    import torch._inductor
    # The contract (added by the lead when the statement grew a serving contract).
    val = {n.name: n.meta["val"] for n in program.graph.nodes if n.op == "placeholder"}["input_ids"]
    top = [int(program.range_constraints[s.node.expr].upper) for s in val.shape]
    (logits,) = program.graph.output_node().args[0]
    meta = {"max_batch": str(top[0]), "max_length": str(top[1]), "num_labels": str(logits.meta["val"].size(-1))}
    package = torch._inductor.aoti_compile_and_package(program, package_path=path,
                                                        inductor_configs={"aot_inductor.metadata": meta})
    return torch._inductor.aoti_load_package(package)
'''
