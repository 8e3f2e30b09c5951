"""dynamic_shapes keyed by the name "x" (the demo's argument): models whose forward argument has another name fail."""
CELL = "export_classifier"
KIND = "overfit"
NOTE = "dynamic_shapes keyed by a name must match the forward's real parameter name; here that argument may have any name, so a fixed name breaks every model that calls it something else."
FAILS = ["test_export_classifier_eval_outputs", "test_export_classifier_dynamic_batch", "test_export_classifier_snapshot"]
SOURCE = '''
def export_classifier(model: nn.Module, example: Tensor) -> torch.export.ExportedProgram:
    """Export `model` for inference (eval mode) with a dynamic batch dimension; return the ExportedProgram."""
    if example.shape[0] < 2:
        example = torch.cat([example, example])
    batch = Dim("batch", min=1, max=1024)
    return torch.export.export(copy.deepcopy(model).eval(), (example,), dynamic_shapes={"x": {0: batch}})
'''
