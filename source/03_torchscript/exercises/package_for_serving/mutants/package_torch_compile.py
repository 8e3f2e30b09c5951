"""Reaches for torch.compile instead of AOTInductor: a compiled Python module that shares the program's weights,
and no package file."""
CELL = "package_for_serving"
KIND = "state"
NOTE = "torch.compile compiles a Python module just in time: it writes no package file and keeps sharing the program's weights, unlike an AOTInductor package compiled ahead of time."
FAILS = ["test_serving_package"]
SOURCE = '''
from typing import Callable


def package_for_serving(program: torch.export.ExportedProgram, path: str) -> Callable:
    """Compile `program` with AOTInductor into the package `path`; return the loaded package."""
    return torch.compile(program.module(), dynamic=True)
'''
