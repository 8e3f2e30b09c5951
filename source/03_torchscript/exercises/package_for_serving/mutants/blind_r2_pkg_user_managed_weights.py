"""Points the loaded package at the program's own tensors (load_constants(user_managed=True)), so it moves when the model trains."""
CELL = "package_for_serving"
KIND = "contract"
NOTE = "Giving the package the program's own tensors as user-managed constants makes it use them in place: it then shares the model's weights and moves when the model trains, instead of holding its own."
FAILS = ["test_serving_package"]
VIOLATES = "It holds its own weights: training the model the program was exported from (a program that shares the model's weights, as section 1.2.1 showed) does not change the package's outputs."
SOURCE = '''
from typing import Callable


def package_for_serving(program: torch.export.ExportedProgram, path: str) -> Callable:
    """Compile `program` with AOTInductor into the package `path`; return the loaded package."""
    torch._inductor.aoti_compile_and_package(program, package_path=path)
    package = torch._inductor.aoti_load_package(path)
    # "gives the program's outputs": feed the package the program's weights, so the two can never disagree,
    # and let it use them in place instead of keeping a second copy of every tensor in memory.
    weights = {**program.state_dict, **program.constants}
    package.load_constants({name: weights[name] for name in package.get_constant_fqns() if name in weights},
                           check_full_update=False, user_managed=True)
    return package
'''
