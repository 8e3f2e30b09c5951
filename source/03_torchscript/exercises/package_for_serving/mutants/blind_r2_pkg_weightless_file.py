"""Compiles the package WITHOUT its weights (package_constants_in_so=False) and loads copies of the program's weights into the returned object: the file at `path` alone is not a working package."""
CELL = "package_for_serving"
KIND = "contract"
NOTE = "A package compiled without its weights inside is not a working file on its own: the weights live only in the object you loaded, so a new process that loads the file has none."
FAILS = ["test_serving_package"]
VIOLATES = "Compile `program` with AOTInductor into the package file `path` ... load that file / It holds its own weights"
SOURCE = '''
from typing import Callable


def package_for_serving(program: torch.export.ExportedProgram, path: str) -> Callable:
    """Compile `program` with AOTInductor into the package `path`; return the loaded package."""
    # A smaller, faster package: keep the weights out of the compiled library and hand them over at load time,
    # as copies, so that training the model later cannot reach the package.
    torch._inductor.aoti_compile_and_package(
        program, package_path=path, inductor_configs={"aot_inductor.package_constants_in_so": False})
    package = torch._inductor.aoti_load_package(path)
    weights = {**program.state_dict, **program.constants}
    package.load_constants({name: weights[name].detach().clone() for name in package.get_constant_fqns()},
                           check_full_update=True)
    return package
'''
