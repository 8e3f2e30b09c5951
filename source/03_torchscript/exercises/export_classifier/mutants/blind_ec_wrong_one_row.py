"""Exports from the example as it is: a 1-row example makes export fail ("specialized it to be a constant (1)"). (written blind, from the release alone)."""
CELL = 'export_classifier'
KIND = 'edge-case'
NOTE = "Export specialises a dimension whose example size is 1 (the 0/1 specialisation), so a 1-row example cannot give a dynamic batch; export needs an example whose batch size it can treat as symbolic."
FAILS = ['test_export_classifier_dynamic_batch']
SOURCE = '''
def export_classifier(model: nn.Module, example: Tensor) -> torch.export.ExportedProgram:
    """Export `model` for inference (eval mode) with a dynamic batch dimension; return the ExportedProgram."""
    snapshot = copy.deepcopy(model).eval()
    return torch.export.export(snapshot, (example,),
                               dynamic_shapes=({0: Dim("batch", min=1, max=1024)},))
'''
