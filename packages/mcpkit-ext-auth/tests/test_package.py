"""The package's public names: importing it loads no OAuth or crypto library, and every
exported name resolves to the object its module defines (package rule 1)."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

import mcpkit.ext.auth as auth

HEAVY = ("authlib", "jwt", "joserfc", "cryptography")


def test_import_loads_no_crypto_library() -> None:
    code = "import sys, mcpkit.ext.auth; print(','.join(m for m in %r if m in sys.modules))"
    done = subprocess.run(
        [sys.executable, "-c", code % (HEAVY,)], capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == ""


def test_every_exported_name_resolves_to_its_module_object() -> None:
    assert sorted(auth.__all__) == sorted(auth._WHERE)  # pyright: ignore[reportPrivateUsage]
    for name, module in auth._WHERE.items():  # pyright: ignore[reportPrivateUsage]
        assert getattr(auth, name) is getattr(importlib.import_module(module), name)
    assert set(auth.__all__) <= set(dir(auth))


def test_unknown_name_is_attribute_error() -> None:
    with pytest.raises(AttributeError, match="NoSuchName"):
        auth.NoSuchName  # type: ignore[attr-defined]  # noqa: B018
