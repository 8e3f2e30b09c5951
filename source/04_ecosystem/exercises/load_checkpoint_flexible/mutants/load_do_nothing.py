"""Do-nothing: loads nothing and returns an empty LoadReport; every grade cell of Exercise 4.3 must fail."""
KIND = "do-nothing"
NOTE = "The answer does not do the work the statement asks for yet: nothing is loaded and the report is empty."
CELL = "load_checkpoint_flexible"
FAILS = ["test_load_plain", "test_load_ddp", "test_load_lightning", "test_load_head_mismatch", "test_load_unseen_formats",
         "test_load_contract"]
SOURCE = '''
def load_checkpoint_flexible(model: nn.Module, checkpoint: dict) -> LoadReport:
    """Load a plain / DDP / Lightning / different-head checkpoint into `model`; return what was loaded, skipped, missing."""
    return LoadReport()
'''
