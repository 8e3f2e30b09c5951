"""Returns a torch.jit.trace of an eval-mode copy (old habit) instead of a torch.export ExportedProgram."""
CELL = "export_classifier"
KIND = "contract"
NOTE = "torch.jit.trace gives a TorchScript module, not the torch.export ExportedProgram the statement asks for: they are two different capture systems."
FAILS = ["test_export_classifier_eval_outputs", "test_export_classifier_dynamic_batch", "test_export_classifier_rejects_features", "test_export_classifier_leaves_model", "test_export_classifier_snapshot"]
SOURCE = '''
def export_classifier(model: nn.Module, example: Tensor) -> torch.export.ExportedProgram:
    """Export `model` for inference (eval mode) with a dynamic batch dimension; return the ExportedProgram."""
    return torch.jit.trace(copy.deepcopy(model).eval(), example)
'''
