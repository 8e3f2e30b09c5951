"""The fake says one index per input element (x's length): the shape differs from the real output."""
KIND = "wrong-value"
NOTE = "The number of peaks depends on the values, not on the input's shape: no formula in the input's length describes it, so the fake needs a size that only the data decides."
CELL = "register_peaks_op"
FAILS = ["test_peaks_opcheck", "test_peaks_compiled"]
#: the reference solution with these lines changed (old, new)
CHANGES = [
('''
        count = torch.library.get_ctx().new_dynamic_size()      # an unbacked size: only the data knows it
        return x.new_empty((count,), dtype=torch.int64)
''', '''
        return x.new_empty((x.shape[0],), dtype=torch.int64)
'''),
]
