"""Reports nothing, whatever the setup."""
CELL = "preflight"
KIND = "do-nothing"
FAILS = ["test_preflight_clean", "test_preflight_loader", "test_preflight_bn", "test_preflight_unused"]
SOURCE = '''
def preflight(model, loader, distributed):
    return []
'''
