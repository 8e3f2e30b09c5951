"""Matches no_weight_decay() names with `in` instead of fnmatch: wildcard patterns such as 'blocks.*.scale' are missed."""
KIND = "edge-case"
NOTE = "The entries of no_weight_decay() are patterns, not only exact names: a wildcard entry covers many parameters, so an exact-name membership test misses them and they get decayed."
CELL = "make_optimizer"
FAILS = ["test_make_optimizer_decay_groups"]
#: the reference solution with these lines changed (old, new)
CHANGES = [
('''
        exempt = p.ndim <= 1 or name.endswith(".bias") or any(fnmatch.fnmatch(name, pat) for pat in no_wd)
''', '''
        exempt = p.ndim <= 1 or name.endswith(".bias") or name in no_wd
'''),
]
