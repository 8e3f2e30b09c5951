"""The course's own helper (course.deploy.aoti_package) writes the package, then torch._inductor loads the file."""
CELL = "package_for_serving"
SOURCE = '''
from typing import Callable


def package_for_serving(program: torch.export.ExportedProgram, path: str) -> Callable:
    """Compile `program` with AOTInductor into the package `path`; return the loaded package."""
    from course import deploy as _deploy
    _deploy.aoti_package(program, path)
    return torch._inductor.aoti_load_package(str(path))
'''
