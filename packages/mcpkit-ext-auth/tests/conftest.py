"""Shared by every test area: pytest puts this directory on ``sys.path``, so
:mod:`loopback` is importable from each area's helpers."""
