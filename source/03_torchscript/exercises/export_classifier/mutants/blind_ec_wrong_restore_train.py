"""Switches the caller's model to eval and restores it with model.train(was_training): submodules that were frozen in eval mode come back in train mode. (written blind, from the release alone)."""
CELL = 'export_classifier'
KIND = 'mutation'
NOTE = "model.train(flag) sets every submodule to the same mode, so submodules that were in eval mode before (frozen ones) come back in train mode: each submodule's own flag is what has to be restored."
FAILS = ['test_export_classifier_leaves_model']
SOURCE = '''
def export_classifier(model: nn.Module, example: Tensor) -> torch.export.ExportedProgram:
    """Export `model` for inference (eval mode) with a dynamic batch dimension; return the ExportedProgram."""
    if example.shape[0] == 1:
        example = torch.cat([example, example])
    was_training = model.training
    model.eval()
    try:
        program = torch.export.export(copy.deepcopy(model), (example,),
                                      dynamic_shapes=({0: Dim("batch", min=1, max=1024)},))
    finally:
        model.train(was_training)
    return program
'''
