"""Reads the sizes of the example the program was exported from, not the range the program accepts."""
CELL = "package_for_serving"
KIND = "wrong-value"
NOTE = "The example that export traced is one point inside the program's range: the limits a server must check are the ranges of the size symbols (range_constraints), not the example's shape."
FAILS = ["test_serving_package"]
SOURCE = '''
from typing import Callable


def package_for_serving(program: torch.export.ExportedProgram, path: str) -> Callable:
    """Compile `program` with AOTInductor into the package `path`, its serving contract in the package's
    metadata; return the loaded package."""
    _, kwargs = program.example_inputs
    batch, length = kwargs["input_ids"].shape
    logits = program.graph.output_node().args[0][0].meta["val"]
    contract = {"max_batch": str(batch), "max_length": str(length), "num_labels": str(int(logits.shape[-1]))}
    torch._inductor.aoti_compile_and_package(program, package_path=str(path),
                                             inductor_configs={"aot_inductor.metadata": contract})
    return torch._inductor.aoti_load_package(str(path))
'''
