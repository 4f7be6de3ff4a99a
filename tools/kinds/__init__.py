"""One module per fault kind checked by ``tools/check_kinds.py`` (see its rules)."""
