"""Reports nothing, whatever the setup."""
CELL = "preflight"
KIND = "do-nothing"
NOTE = "The answer does not do the work the statement asks for yet: it returns a placeholder (an empty list) without checking anything."
FAILS = ["test_preflight_clean", "test_preflight_loader", "test_preflight_bn", "test_preflight_unused"]
SOURCE = '''
def preflight(model, loader, distributed):
    return []
'''
