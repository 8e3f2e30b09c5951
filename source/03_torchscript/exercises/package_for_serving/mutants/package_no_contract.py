"""Compiles and loads the package but stores no contract in its metadata."""
CELL = "package_for_serving"
KIND = "edge-case"
NOTE = "A package that does not say its limits leaves a server to guess them: the contract (largest batch, longest sequence, number of labels) goes into the package's metadata when it is compiled."
FAILS = ["test_serving_package"]
SOURCE = '''
from typing import Callable


def package_for_serving(program: torch.export.ExportedProgram, path: str) -> Callable:
    """Compile `program` with AOTInductor into the package `path`, its serving contract in the package's
    metadata; return the loaded package."""
    torch._inductor.aoti_compile_and_package(program, package_path=str(path))
    return torch._inductor.aoti_load_package(str(path))
'''
