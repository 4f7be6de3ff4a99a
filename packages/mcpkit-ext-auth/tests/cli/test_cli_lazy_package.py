"""``mcpkit.ext.auth`` stays cheap to import (the package's rule 1), while its public names
still work: ``mcpkit`` imports the CLI plugin on every start."""

from __future__ import annotations

import subprocess
import sys

import pytest

import mcpkit.ext.auth as auth_package


def test_public_names_load_on_first_access() -> None:
    from mcpkit.ext.auth.server import AuthSettings, protect

    assert auth_package.AuthSettings is AuthSettings
    assert auth_package.protect is protect
    assert {"AuthSettings", "protect", "principal"} <= set(auth_package.__all__)
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        auth_package.nothing  # noqa: B018  # pyright: ignore[reportAttributeAccessIssue]


def test_importing_the_package_and_its_cli_plugin_loads_no_auth_stack() -> None:
    code = (
        "import sys, mcpkit.ext.auth, mcpkit.ext.auth.cli, mcpkit.cli.main; "
        "print(sorted({m.split('.')[0] for m in sys.modules} "
        "& {'authlib', 'joserfc', 'jwt', 'cryptography'}))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert out.stdout.strip() == "[]"
