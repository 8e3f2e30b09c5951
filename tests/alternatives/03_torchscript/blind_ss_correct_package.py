"""Correct: loads the path that aoti_compile_and_package returns. (written blind, from the release alone)"""
CELL = "package_for_serving"
SOURCE = '''
from typing import Callable


def package_for_serving(program: torch.export.ExportedProgram, path: str) -> Callable:
    """Compile `program` with AOTInductor into the package `path`; return the loaded package."""
    import torch._inductor
    package = torch._inductor.aoti_compile_and_package(program, package_path=path)
    return torch._inductor.aoti_load_package(package)
'''
