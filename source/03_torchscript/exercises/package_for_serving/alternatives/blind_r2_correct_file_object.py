"""Correct: compiles through an open file object at `path` (one compile thread), then loads the package back from `path`; the contract read through the graph signature."""
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
    # The contract (added by the lead when the statement grew a serving contract): inputs in the signature's
    # order, the output node last in the graph.
    names = list(program.graph_signature.user_inputs)
    inputs = [n for n in program.graph.nodes if n.op == "placeholder" and n.name in names]
    ids = inputs[names.index("input_ids")].meta["val"]
    out = list(program.graph.nodes)[-1].args[0][0].meta["val"]
    ranges = program.range_constraints
    contract = {"max_batch": f"{int(ranges[ids.shape[0].node.expr].upper)}",
                "max_length": f"{int(ranges[ids.shape[1].node.expr].upper)}", "num_labels": f"{out.shape[-1]}"}
    with inductor_config.patch(compile_threads=1), open(path, "wb") as f:
        torch._inductor.aoti_compile_and_package(program, package_path=f,
                                                 inductor_configs={"aot_inductor.metadata": contract})
    loaded = torch._inductor.aoti_load_package(path)
    return loaded
'''
