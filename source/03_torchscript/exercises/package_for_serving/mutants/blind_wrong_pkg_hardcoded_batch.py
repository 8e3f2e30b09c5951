"""max_batch is hard-coded to "64" (the batch limit export_for_serving uses) instead of being read from the program. (written blind, from the release alone)."""
CELL = 'package_for_serving'
KIND = 'overfit'
NOTE = "A limit that one exporter happened to use is not the program's contract: a program from elsewhere has its own batch range, and only its range constraints say what it is."
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
    contract = {"max_batch": "64",                     # export_for_serving allows batches 1 to 64
                "max_length": str(int(program.range_constraints[length.node.expr].upper)),
                "num_labels": str(int(logits.shape[-1]))}
    torch._inductor.aoti_compile_and_package(program, package_path=path,
                                             inductor_configs={"aot_inductor.metadata": contract})
    return torch._inductor.aoti_load_package(path)
'''
