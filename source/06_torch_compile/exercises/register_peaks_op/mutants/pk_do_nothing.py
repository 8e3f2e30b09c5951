"""Returns legacy_peaks itself: no op is registered."""
KIND = "do-nothing"
NOTE = "The answer does not do the work the statement asks for yet: it returns a placeholder (the legacy function itself) instead of a registered custom op."
CELL = "register_peaks_op"
FAILS = ["test_peaks_values", "test_peaks_opcheck", "test_peaks_compiled"]
SOURCE = '''
def register_peaks_op(name: str = "ch6::peaks"):
    """Register legacy_peaks as the custom op `name`, with a fake whose output size is data-dependent; return it."""
    return legacy_peaks
'''
