"""Does nothing: returns x itself, uncut."""
KIND = "do-nothing"
NOTE = "The answer does not do the work the statement asks for yet: it returns x as it is, with no window dimension, and checks no argument."
CELL = "sliding_windows"
FAILS = ["test_sliding_windows_values", "test_sliding_windows_view", "test_sliding_windows_layouts",
         "test_sliding_windows_edge_cases"]
SOURCE = '''
def sliding_windows(x, size, step):
    return x
'''
