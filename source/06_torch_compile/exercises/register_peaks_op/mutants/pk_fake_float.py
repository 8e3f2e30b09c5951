"""The fake uses new_dynamic_size but keeps the input's float dtype instead of int64."""
KIND = "edge-case"
NOTE = "The fake must describe the real output exactly: the op returns int64 indices, so a fake with the input's float dtype gives the wrong metadata."
CELL = "register_peaks_op"
FAILS = ["test_peaks_opcheck", "test_peaks_compiled"]
#: the reference solution with these lines changed (old, new)
CHANGES = [
('''
        count = torch.library.get_ctx().new_dynamic_size()      # an unbacked size: only the data knows it
        return x.new_empty((count,), dtype=torch.int64)
''', '''
        return x.new_empty((torch.library.get_ctx().new_dynamic_size(),))
'''),
]
