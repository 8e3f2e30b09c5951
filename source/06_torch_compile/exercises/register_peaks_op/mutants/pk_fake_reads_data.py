"""The fake calls legacy_peaks on the fake tensor, as if it had values."""
KIND = "contract"
NOTE = "Fake tensors have shape, dtype and device but no values: the fake cannot run the real computation; it can only describe the output."
CELL = "register_peaks_op"
FAILS = ["test_peaks_opcheck", "test_peaks_compiled"]
#: the reference solution with these lines changed (old, new)
CHANGES = [
('''
        count = torch.library.get_ctx().new_dynamic_size()      # an unbacked size: only the data knows it
        return x.new_empty((count,), dtype=torch.int64)
''', '''
        return legacy_peaks(x)
'''),
]
