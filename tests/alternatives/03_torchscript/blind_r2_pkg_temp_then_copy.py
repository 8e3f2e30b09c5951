"""Behaviourally correct (kept as an alternative): Compiles and loads a package in a temporary folder, then copies the file to `path`: the returned package is not loaded from `path`."""
CELL = "package_for_serving"

VIOLATES = "Compile `program` with AOTInductor into the package file `path` (the file is there when your function returns), load that file, and return the loaded package"
SOURCE = '''
import shutil
from typing import Callable


def package_for_serving(program: torch.export.ExportedProgram, path: str) -> Callable:
    """Compile `program` with AOTInductor into the package `path`; return the loaded package."""
    # aoti_compile_and_package insists on a name ending in .pt2: compile under a name of my own, then copy.
    tmp = os.path.join(tempfile.mkdtemp(prefix="aoti-"), "model.pt2")
    # The contract (added by the lead when the statement grew a serving contract): symbols matched by name.
    ranges = {str(symbol): r for symbol, r in program.range_constraints.items()}
    node = next(n for n in program.graph.nodes if n.op == "placeholder" and n.target == "input_ids")
    batch, length = node.meta["val"].shape
    width = program.graph.output_node().args[0][0].meta["val"].shape[1]
    contract = {"max_batch": str(ranges[str(batch)].upper), "max_length": str(ranges[str(length)].upper),
                "num_labels": str(width)}
    torch._inductor.aoti_compile_and_package(program, package_path=tmp,
                                             inductor_configs={"aot_inductor.metadata": contract})
    package = torch._inductor.aoti_load_package(tmp)
    shutil.copyfile(tmp, path)
    return package
'''
