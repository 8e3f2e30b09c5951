"""Returns None: no program at all (a do-nothing answer must score 0)."""
CELL = "export_classifier"
KIND = "do-nothing"
NOTE = "The answer does not do the work the statement asks for yet: it returns a placeholder instead of an exported program."
FAILS = ["test_export_classifier_eval_outputs", "test_export_classifier_dynamic_batch", "test_export_classifier_rejects_features", "test_export_classifier_leaves_model", "test_export_classifier_snapshot"]
SOURCE = '''
def export_classifier(model: nn.Module, example: Tensor) -> torch.export.ExportedProgram:
    """Export `model` for inference (eval mode) with a dynamic batch dimension; return the ExportedProgram."""
    return None
'''
