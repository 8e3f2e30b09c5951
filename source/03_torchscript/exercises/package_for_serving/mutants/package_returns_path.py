"""Compiles the package and returns the path aoti_compile_and_package gives back, not the loaded package."""
CELL = "package_for_serving"
KIND = "wrong-value"
NOTE = "The AOTInductor compile returns the package's path, not something to call: the compiled model is what loading that file gives back."
FAILS = ["test_serving_package"]
SOURCE = '''
from typing import Callable


def package_for_serving(program: torch.export.ExportedProgram, path: str) -> Callable:
    """Compile `program` with AOTInductor into the package `path`; return the loaded package."""
    return torch._inductor.aoti_compile_and_package(program, package_path=str(path))
'''
