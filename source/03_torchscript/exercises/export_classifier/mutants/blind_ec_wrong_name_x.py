"""Keys dynamic_shapes by the name "x" (as in section 1.1): a model whose forward argument is called `features` or `inputs` cannot be exported. (written blind, from the release alone)."""
CELL = 'export_classifier'
KIND = 'overfit'
NOTE = "dynamic_shapes keyed by a name must match the forward's real parameter name; here that argument may have any name, so a fixed name breaks every model that calls it something else."
FAILS = ['test_export_classifier_dynamic_batch', 'test_export_classifier_eval_outputs', 'test_export_classifier_snapshot']
SOURCE = '''
def export_classifier(model: nn.Module, example: Tensor) -> torch.export.ExportedProgram:
    """Export `model` for inference (eval mode) with a dynamic batch dimension; return the ExportedProgram."""
    if example.shape[0] == 1:
        example = torch.cat([example, example])
    snapshot = copy.deepcopy(model).eval()
    batch = Dim("batch", min=1, max=1024)
    return torch.export.export(snapshot, (example,), dynamic_shapes={"x": {0: batch}})
'''
