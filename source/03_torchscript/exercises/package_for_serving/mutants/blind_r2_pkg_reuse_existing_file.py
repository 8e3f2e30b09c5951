"""Skips the compile when a file already exists at `path` and loads that (possibly stale, other model's) package."""
CELL = "package_for_serving"
KIND = "state"
NOTE = "A file already at the path may be an older package or another model's: skipping the compile when it exists serves stale code and weights instead of the program you were given."
FAILS = ["test_serving_package"]
VIOLATES = "Compile `program` with AOTInductor into the package file `path` (the file is there when your function returns), load that file, and return the loaded package"
SOURCE = '''
from typing import Callable


def package_for_serving(program: torch.export.ExportedProgram, path: str) -> Callable:
    """Compile `program` with AOTInductor into the package `path`; return the loaded package."""
    # An AOTInductor compile takes 10-20 s: only compile when the package is not on disk yet,
    # so that re-running the notebook is fast.
    if not os.path.isfile(path):
        torch._inductor.aoti_compile_and_package(program, package_path=path)
    return torch._inductor.aoti_load_package(path)
'''
