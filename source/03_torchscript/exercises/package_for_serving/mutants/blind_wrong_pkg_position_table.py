"""max_length is the number of rows of the position-embedding table in the program's state_dict, not the length symbol's upper bound (wrong when the program was exported with a smaller length range). (written blind, from the release alone)."""
CELL = 'package_for_serving'
KIND = 'wrong-value'
NOTE = "What the model could read is not what the program accepts: a program can be exported with a tighter range than the model's tables, and a server must check the program's own limit."
FAILS = ['test_serving_package']
SOURCE = '''
from typing import Callable


def package_for_serving(program: torch.export.ExportedProgram, path: str) -> Callable:
    """Compile `program` with AOTInductor into the package `path`, its serving contract in the package's
    metadata; return the loaded package."""
    user = {spec.arg.name for spec in program.graph_signature.input_specs if spec.kind.name == "USER_INPUT"}
    nodes = {node.name: node for node in program.graph.nodes if node.op == "placeholder" and node.name in user}
    batch_size, length = nodes["input_ids"].meta["val"].shape
    logits = program.graph.output_node().args[0][0].meta["val"]
    positions = next(v for k, v in program.state_dict.items() if "position" in k and v.dim() == 2)
    contract = {"max_batch": str(int(program.range_constraints[batch_size.node.expr].upper)),
                "max_length": str(positions.shape[0]),            # the model can read this many positions
                "num_labels": str(int(logits.shape[-1]))}
    torch._inductor.aoti_compile_and_package(program, package_path=path,
                                             inductor_configs={"aot_inductor.metadata": contract})
    return torch._inductor.aoti_load_package(path)
'''
