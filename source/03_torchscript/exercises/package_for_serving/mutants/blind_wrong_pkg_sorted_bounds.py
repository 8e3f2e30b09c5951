"""Takes the two range upper bounds sorted: the smaller as max_length, the larger as max_batch; swapped whenever the program's length limit exceeds its batch limit (e.g. 512 positions, batch 64). (written blind, from the release alone)."""
CELL = 'package_for_serving'
KIND = 'overfit'
NOTE = 'Symbols are not interchangeable by size: each dimension of input_ids has its own symbol, and the batch and the length limits must be read from the dimension they belong to.'
FAILS = ['test_serving_package']
SOURCE = '''
from typing import Callable


def package_for_serving(program: torch.export.ExportedProgram, path: str) -> Callable:
    """Compile `program` with AOTInductor into the package `path`, its serving contract in the package's
    metadata; return the loaded package."""
    bounds = sorted(int(r.upper) for r in program.range_constraints.values())
    logits = program.graph.output_node().args[0][0].meta["val"]
    contract = {"max_batch": str(bounds[-1]), "max_length": str(bounds[0]), "num_labels": str(int(logits.shape[-1]))}
    torch._inductor.aoti_compile_and_package(program, package_path=path,
                                             inductor_configs={"aot_inductor.metadata": contract})
    return torch._inductor.aoti_load_package(path)
'''
