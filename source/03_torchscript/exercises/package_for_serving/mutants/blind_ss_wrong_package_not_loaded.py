"""Compiles the package into path but returns program.module() (the Python program), never loading the
AOTInductor package. (written blind, from the release alone)"""
CELL = "package_for_serving"
KIND = "contract"
NOTE = "Compiling the package is half the job: the exported program's module is Python code that shares the model's weights, not the AOTInductor package loaded from the file."
FAILS = ["test_serving_package"]
SOURCE = '''
from typing import Callable


def package_for_serving(program: torch.export.ExportedProgram, path: str) -> Callable:
    """Compile `program` with AOTInductor into the package `path`; return the loaded package."""
    import torch._inductor
    torch._inductor.aoti_compile_and_package(program, package_path=path)
    return program.module()                # called like the program
'''
