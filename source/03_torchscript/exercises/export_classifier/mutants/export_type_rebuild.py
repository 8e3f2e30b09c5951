"""Snapshots by rebuilding the model as type(model)() plus load_state_dict: works for the demo's TinyClassifier, fails for a model whose constructor needs arguments (found writing wrong answers from the release)."""
CELL = "export_classifier"
KIND = "overfit"
NOTE = "Rebuilding the model from its class with no arguments works only for a class whose constructor needs none: a snapshot has to reproduce any model, whatever its constructor takes."
FAILS = ["test_export_classifier_eval_outputs", "test_export_classifier_dynamic_batch",
         "test_export_classifier_rejects_features", "test_export_classifier_leaves_model",
         "test_export_classifier_snapshot"]
SOURCE = '''
def export_classifier(model: nn.Module, example: Tensor) -> torch.export.ExportedProgram:
    """Export `model` for inference (eval mode) with a dynamic batch dimension; return the ExportedProgram."""
    own = type(model)()
    own.load_state_dict(model.state_dict())
    own.eval()
    if example.shape[0] < 2:
        example = torch.cat([example, example])
    return torch.export.export(own, (example,), dynamic_shapes=({0: Dim("batch", min=1, max=1024)},))
'''
