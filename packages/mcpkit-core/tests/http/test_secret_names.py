"""One shared secret, one reader: every component that needs the deployment's secret
takes ``MCPKIT_SECRET`` / ``MCPKIT_SECRET_FILE`` through
:func:`mcpkit.server.replication.load_secret`; the older ``MCPKIT_STATE_SECRET`` still
works and warns once per process (issue 26)."""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import pytest

from mcpkit.core.jsonrpc import JSONRPCError
from mcpkit.server import Server, replication
from mcpkit.server.mrtr import RequestStateSealer
from mcpkit.server.replicas import apply_shared_secret
from mcpkit.server.replication import SecretError, load_secret

ROOT = Path(__file__).resolve().parents[4]
HEX = "0123456789abcdef" * 4  # 64 hex digits: 32 bytes
NAMES = ("MCPKIT_SECRET", "MCPKIT_SECRET_FILE", "MCPKIT_STATE_SECRET")


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in NAMES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(replication, "_legacy_warned", False, raising=False)


def opens(a: RequestStateSealer, b: RequestStateSealer) -> bool:
    """``b`` opens what ``a`` sealed (the two share one key)."""
    sealed = a.seal(method="tools/call", digest="d", principal=None, answers={"k": {}})
    try:
        b.open(sealed, method="tools/call", digest="d", principal=None)
    except JSONRPCError:
        return False
    return True


def test_the_request_state_sealer_reads_mcpkit_secret(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MCPKIT_SECRET", HEX)
    sealer = RequestStateSealer()
    assert sealer.configured
    assert opens(sealer, RequestStateSealer(bytes.fromhex(HEX)))
    assert Server("s").sealer.configured


def test_the_request_state_sealer_reads_the_secret_file(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    secret = tmp_path / "secret"
    secret.write_text("a long enough passphrase, read from a file\n")
    monkeypatch.setenv("MCPKIT_SECRET_FILE", str(secret))
    sealer = RequestStateSealer()
    assert sealer.configured
    assert opens(sealer, RequestStateSealer(b"a long enough passphrase, read from a file"))


def test_the_sealer_does_not_use_a_placeholder_from_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Importing the server still works (a single process runs, with a warning); multi-
    replica mode refuses to start, naming the problem."""
    monkeypatch.setenv("MCPKIT_SECRET", "k" * 40)
    with pytest.warns(RuntimeWarning, match="MCPKIT_SECRET is a placeholder"):
        server = Server("s")
    assert not server.sealer.configured
    assert not opens(server.sealer, RequestStateSealer(b"k" * 40))
    with pytest.raises(SecretError, match=r"\(--workers 2\): the shared secret from MCPKIT_SECRET"):
        apply_shared_secret(server, None, why="--workers 2")


def test_no_secret_means_a_random_unconfigured_key() -> None:
    sealer = RequestStateSealer()
    assert not sealer.configured
    assert not opens(sealer, RequestStateSealer())


def test_the_older_name_still_works_and_warns_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MCPKIT_STATE_SECRET", HEX)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        first = RequestStateSealer()
        assert load_secret() == bytes.fromhex(HEX)
        RequestStateSealer()
    assert first.configured
    assert opens(first, RequestStateSealer(bytes.fromhex(HEX)))
    said = [str(w.message) for w in caught if issubclass(w.category, FutureWarning)]
    assert len(said) == 1, said
    assert "MCPKIT_STATE_SECRET" in said[0]
    assert "set MCPKIT_SECRET" in said[0]


def test_the_new_names_win_over_the_older_one_without_a_warning(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("MCPKIT_STATE_SECRET", "ab" * 32)
    monkeypatch.setenv("MCPKIT_SECRET", HEX)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert load_secret() == bytes.fromhex(HEX)
        assert opens(RequestStateSealer(), RequestStateSealer(bytes.fromhex(HEX)))
    assert not [w for w in caught if issubclass(w.category, FutureWarning)]


def test_no_other_module_reads_the_secret_variables() -> None:
    """Every package's source: the names are read in ``replication.py`` only (other
    modules import its constants); so a new reader cannot drift from rule 1."""
    readers: list[str] = []
    sources = [*ROOT.glob("packages/*/src/**/*.py"), *ROOT.glob("experimental/*/src/**/*.py")]
    assert len(sources) > 50
    quoted = re.compile(r"""["'](MCPKIT_SECRET|MCPKIT_SECRET_FILE|MCPKIT_STATE_SECRET)["']""")
    for path in sources:
        if path.name == "replication.py" and path.parent.name == "server":
            continue
        if quoted.search(path.read_text("utf-8")):
            readers.append(str(path.relative_to(ROOT)))
    assert readers == []


def test_the_docs_name_only_the_new_names() -> None:
    pages = [ROOT / "README.md", *ROOT.glob("docs/**/*.md")]
    naming = [str(p.relative_to(ROOT)) for p in pages if "MCPKIT_STATE_SECRET" in p.read_text()]
    assert naming == []


def test_a_placeholder_secret_is_refused_with_the_documented_message(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """docs/server.md, "Mistakes caught at start-up", shows the message raised."""
    monkeypatch.setenv("MCPKIT_SECRET", "k" * 40)
    with pytest.raises(SecretError) as refused:
        load_secret()
    assert f"`{refused.value}`" in (ROOT / "docs" / "server.md").read_text("utf-8")
