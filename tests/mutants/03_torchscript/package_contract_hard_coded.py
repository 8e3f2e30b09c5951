"""Writes the visible example's contract (64, 20, 4) as constants: right for that program only."""
CELL = "package_for_serving"
KIND = "overfit"
NOTE = "A package's contract must describe the program being compiled: constants copied from one example are wrong for every other program (another batch limit, another length, other labels)."
FAILS = ["test_serving_package"]
SOURCE = '''
from typing import Callable


def package_for_serving(program: torch.export.ExportedProgram, path: str) -> Callable:
    """Compile `program` with AOTInductor into the package `path`, its serving contract in the package's
    metadata; return the loaded package."""
    contract = {"max_batch": "64", "max_length": "20", "num_labels": "4"}
    torch._inductor.aoti_compile_and_package(program, package_path=str(path),
                                             inductor_configs={"aot_inductor.metadata": contract})
    return torch._inductor.aoti_load_package(str(path))
'''
