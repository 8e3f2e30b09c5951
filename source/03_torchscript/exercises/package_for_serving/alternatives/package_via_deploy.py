"""The course's own helper (course.deploy.aoti_package) writes the package, the contract set by patching the Inductor config around it, then torch._inductor loads the file."""
CELL = "package_for_serving"
SOURCE = '''
from typing import Callable


def package_for_serving(program: torch.export.ExportedProgram, path: str) -> Callable:
    """Compile `program` with AOTInductor into the package `path`; return the loaded package."""
    import torch._inductor.config as _config
    from course import deploy as _deploy
    out = program.graph.output_node().args[0][0].meta["val"]
    ids = next(n for n in program.graph.nodes if n.name == "input_ids").meta["val"]
    upper = {str(k): str(int(v.upper)) for k, v in program.range_constraints.items()}
    contract = {"max_batch": upper[str(ids.shape[0])], "max_length": upper[str(ids.shape[1])],
                "num_labels": str(out.shape[-1])}
    with _config.patch({"aot_inductor.metadata": contract}):     # the global config, not inductor_configs=
        _deploy.aoti_package(program, path)
    return torch._inductor.aoti_load_package(str(path))
'''
