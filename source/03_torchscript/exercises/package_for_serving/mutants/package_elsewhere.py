"""Compiles and loads a package of its own in a temporary folder: the loaded package is right, but nothing is
written at `path` (a caller that ships the file ships nothing)."""
CELL = "package_for_serving"
KIND = "contract"
NOTE = "The package has to be written at the path you were given: compiling into a file of your own leaves nothing at that path for the caller to ship."
FAILS = ["test_serving_package"]
SOURCE = '''
from typing import Callable
import tempfile as _tempfile


def package_for_serving(program: torch.export.ExportedProgram, path: str) -> Callable:
    """Compile `program` with AOTInductor into the package `path`; return the loaded package."""
    own = os.path.join(_tempfile.mkdtemp(), "model.pt2")
    torch._inductor.aoti_compile_and_package(program, package_path=own)
    return torch._inductor.aoti_load_package(own)
'''
