"""Correct: compiles through an open file object at `path` (one compile thread), then loads the package back from `path`."""
CELL = "package_for_serving"
KIND = "correct"
VIOLATES = ""
SOURCE = '''
from typing import Callable

import torch._inductor.config as inductor_config


def package_for_serving(program: torch.export.ExportedProgram, path: str) -> Callable:
    """Compile `program` with AOTInductor into the package `path`; return the loaded package."""
    # The package gets its own copy of the weights when it is compiled, so it does not move when the
    # model the program came from is trained. Writing through a file object also works for a path
    # that does not end in ".pt2".
    with inductor_config.patch(compile_threads=1), open(path, "wb") as f:
        torch._inductor.aoti_compile_and_package(program, package_path=f)
    loaded = torch._inductor.aoti_load_package(path)
    return loaded
'''
