"""Core never imports an extension or the auth stack (issue 12).

This test environment has PyJWT and cryptography installed (the official ``mcp`` SDK in
the ``test`` group pulls them), so what it checks is the import side: importing every
module of core's packages, and running the ``mcpkit`` command, loads none of them. That
none is *installed* with core alone is checked by ``tools/check_isolation.py`` in the nox
``build`` session.
"""

from __future__ import annotations

import json
import subprocess
import sys

FORBIDDEN = ("authlib", "joserfc", "jwt", "cryptography")

WALK = """
import importlib, json, pkgutil, sys
for name in ("mcpkit.core", "mcpkit.server", "mcpkit.client", "mcpkit.cli"):
    package = importlib.import_module(name)
    for info in pkgutil.walk_packages(package.__path__, name + "."):
        if not info.name.endswith("__main__"):
            importlib.import_module(info.name)
loaded = sorted(sys.modules)
print(json.dumps(loaded))
"""

CLI = """
import json, sys
from mcpkit.cli.main import build_parser
from mcpkit.cli.plugins import load_plugins
build_parser(load_plugins()).parse_args(["ls", "x"])
print(json.dumps(sorted(sys.modules)))
"""


def loaded_by(code: str) -> list[str]:
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    return json.loads(out.stdout)


def offending(modules: list[str]) -> list[str]:
    return [
        m
        for m in modules
        if m.split(".")[0] in FORBIDDEN or m == "mcpkit.ext" or m.startswith("mcpkit.ext.")
    ]


def test_importing_all_of_core_loads_no_auth_stack_and_no_extension() -> None:
    modules = loaded_by(WALK)
    assert "mcpkit.cli.plugins" in modules
    assert "mcpkit.server.http" in modules
    assert offending(modules) == []


def test_the_cli_with_its_plugin_hook_loads_no_auth_stack() -> None:
    modules = loaded_by(CLI)
    assert "mcpkit.cli.inspect" in modules
    assert offending(modules) == []
