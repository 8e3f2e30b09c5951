"""Correct: symbols via free_symbols, output via output_specs, compiled into a temporary file then os.replace'd onto path, and path loaded. (written blind, from the release alone)."""
CELL = 'package_for_serving'
SOURCE = '''
from typing import Callable


def package_for_serving(program: torch.export.ExportedProgram, path: str) -> Callable:
    """Compile `program` with AOTInductor into the package `path`, its serving contract in the package's
    metadata; return the loaded package."""
    import shutil

    def bound(size) -> int:
        if isinstance(size, int):
            return size
        (symbol,) = size.node.expr.free_symbols
        return int(program.range_constraints[symbol].upper)

    user_names = [spec.arg.name for spec in program.graph_signature.input_specs if spec.kind.name == "USER_INPUT"]
    ids = next(n for n in program.graph.find_nodes(op="placeholder") if n.name == "input_ids")
    assert "input_ids" in user_names
    out_name = program.graph_signature.output_specs[0].arg.name
    out = next(n for n in program.graph.nodes if n.name == out_name)
    contract = {"max_batch": str(bound(ids.meta["val"].shape[0])), "max_length": str(bound(ids.meta["val"].shape[1])),
                "num_labels": str(bound(out.meta["val"].shape[-1]))}
    folder = tempfile.mkdtemp(prefix="pkg-")
    try:
        tmp = torch._inductor.aoti_compile_and_package(
            program, package_path=os.path.join(folder, "package.pt2"),
            inductor_configs={"aot_inductor.metadata": contract})
        os.replace(tmp, path)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return torch._inductor.aoti_load_package(path)
'''
