"""Switches only the nn.Dropout layers of the copy to eval ("inference = no dropout"): a BatchNorm stays in train mode and normalises with batch statistics. (written blind, from the release alone)."""
CELL = 'export_classifier'
KIND = 'wrong-value'
NOTE = "Inference means the whole model in eval mode, not only its Dropout layers: a BatchNorm left in train mode still normalises with the statistics of the batch it is given."
FAILS = ['test_export_classifier_dynamic_batch', 'test_export_classifier_eval_outputs', 'test_export_classifier_snapshot']
SOURCE = '''
def export_classifier(model: nn.Module, example: Tensor) -> torch.export.ExportedProgram:
    """Export `model` for inference (eval mode) with a dynamic batch dimension; return the ExportedProgram."""
    if example.shape[0] == 1:
        example = torch.cat([example, example])
    snapshot = copy.deepcopy(model)
    for m in snapshot.modules():
        if isinstance(m, nn.Dropout):
            m.eval()                      # no dropout at inference
    return torch.export.export(snapshot, (example,),
                               dynamic_shapes=({0: Dim("batch", min=1, max=1024)},))
'''
