"""``mcpkit run app.py --auth-provider ...``: the flags and the config file reach the
proxy through the auth plugin's ``configure_server`` hook, and every misconfiguration
stops start-up with one line naming the flag."""

from __future__ import annotations

import sys
from pathlib import Path

import httpx2
import pytest
from fake_idp import CLIENT_ID, CLIENT_SECRET, FakeIdP
from loopback import serve_at

sys.path.insert(0, str(Path(__file__).resolve().parents[4] / "tools"))
from docs_blocks import block

from mcpkit.cli.main import build_parser
from mcpkit.cli.plugins import CliError, configure_server, load_plugins
from mcpkit.server import Server

pytestmark = pytest.mark.anyio

# The ports below are never bound or contacted: configure_server only reads the flags.
PORT = "8000"  # kind-ok: fixed-port a flag value only, nothing listens on it
NOWHERE = "http://127.0.0.1:1"  # kind-ok: fixed-port an issuer URL that is never contacted

ENV = "MCPKIT_AUTH_CLIENT_SECRET"


def configure(argv: list[str], server: Server | None = None) -> Server:
    plugins = load_plugins()
    args = build_parser(plugins).parse_args(["run", "app.py", "--transport", "http", *argv])
    server = server or Server("cli")
    configure_server(plugins, args, server)
    return server


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--auth-provider", "gogle", "--auth-client-id", "x"], "did you mean 'google'"),
        (["--auth-provider", "google"], "--auth-client-id is required"),
        (["--auth-provider", "oidc", "--auth-client-id", "x"], "needs --auth-issuer"),
        (
            ["--auth-provider", "keycloak", "--auth-client-id", "x", "--auth-realm", "r"],
            "needs --auth-base-url",
        ),
        (["--auth-provider", "okta", "--auth-client-id", "x"], "needs --auth-domain"),
        (
            ["--auth-provider", "google", "--auth-client-id", "x", "--port", "0"],
            "--auth-public-url is required",
        ),
        (
            [
                "--auth-provider",
                "google",
                "--auth-client-id",
                "x",
                "--auth-public-url",
                "http://mcp.example.com",
            ],
            "https://",
        ),
        (
            [
                "--auth-provider",
                "entra",
                "--auth-client-id",
                "x",
                "--auth-tenant",
                "a/b",
                "--port",
                PORT,
            ],
            "tenant",
        ),
        (
            [
                "--auth-provider",
                "google",
                "--auth-client-id",
                "x",
                "--port",
                PORT,
                "--redis",
                NOWHERE.replace("http", "redis"),
            ],
            "MCPKIT_AUTH_SECRET",
        ),
    ],
)
def test_misconfiguration_fails_at_start_up(
    argv: list[str], message: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ENV, "s3cret")
    with pytest.raises(CliError, match=message.replace("?", r"\?")):
        configure(argv)


def test_the_secret_never_comes_from_a_flag(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV, raising=False)
    with pytest.raises(CliError, match=f"environment variable {ENV}"):
        configure(["--auth-provider", "google", "--auth-client-id", "x", "--port", PORT])


def test_config_file_unknown_key_names_the_closest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ENV, "s3cret")
    conf = tmp_path / "proxy.toml"
    conf.write_text('provider = "google"\nclient_idd = "x"\n')
    with pytest.raises(CliError, match="did you mean 'client_id'"):
        configure(["--auth-config", str(conf)])


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('upstream_scopes = "read:user"', "upstream_scopes must be an array"),
        ('scopes = ["mcp read"]', "scopes must be an array"),
        ("scopes = [1]", "scopes must be an array"),
        ("client_secret_env = 5", "client_secret_env must be a non-empty string"),
        ('public_url = ""', "public_url must be a non-empty string"),
    ],
)
def test_config_file_values_of_the_wrong_type_fail_at_start_up(
    line: str, message: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ENV, "s3cret")
    conf = tmp_path / "proxy.toml"
    conf.write_text(f'provider = "github"\nclient_id = "x"\n{line}\n')
    with pytest.raises(CliError, match=message):
        configure(["--auth-config", str(conf), "--port", PORT])


def test_stdio_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV, "s3cret")
    plugins = load_plugins()
    args = build_parser(plugins).parse_args(
        ["run", "app.py", "--auth-provider", "google", "--auth-client-id", "x"]
    )
    with pytest.raises(CliError, match="--transport http"):
        configure_server(plugins, args, Server("cli"))


async def test_a_config_file_protects_the_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PROXY_SECRET", CLIENT_SECRET)
    idp = FakeIdP()
    async with serve_at(idp.app) as idp_base:
        conf = tmp_path / "proxy.toml"
        conf.write_text(
            f'provider = "oidc"\nissuer = "{idp_base}"\nclient_id = "{CLIENT_ID}"\n'
            'client_secret_env = "PROXY_SECRET"\nscopes = ["mcp"]\n'
        )
        server = configure(["--auth-config", str(conf), "--auth-public-url", NOWHERE])
        async with (
            serve_at(lambda _b: server.http_app("/mcp")) as base,
            httpx2.AsyncClient() as http,
        ):
            bare = await http.post(
                base + "/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "ping"}
            )
            assert bare.status_code == 401
            meta = (await http.get(base + "/.well-known/oauth-authorization-server")).json()
            assert meta["issuer"] == NOWHERE
            assert meta["scopes_supported"] == ["mcp"]


def test_a_plugin_fault_in_configure_server_fails_closed() -> None:
    from mcpkit.cli.plugins import CliPlugin, LoadedPlugin

    def broken(args: object, server: object) -> None:
        raise RuntimeError("boom")

    plugin = LoadedPlugin("x", "x-dist", CliPlugin(configure_server=broken))
    args = build_parser([]).parse_args(["run", "app.py"])
    with pytest.raises(CliError, match="plugin 'x' \\(x-dist\\): RuntimeError: boom"):
        configure_server([plugin], args, Server("cli"))


async def test_the_documented_config_file_configures_keycloak(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KEYCLOAK_SECRET", "kc-secret")
    conf = tmp_path / "proxy.toml"
    conf.write_text(block("docs/extensions/auth.md", "idp-proxy-toml"))
    server = configure(["--auth-config", str(conf)])
    app = server.http_app("/mcp")
    # lifespan off: the start-up discovery would go to sso.example.com
    async with serve_at(lambda _b: app, lifespan="off") as base, httpx2.AsyncClient() as http:
        meta = (await http.get(base + "/.well-known/oauth-authorization-server")).json()
        prm = (await http.get(base + "/.well-known/oauth-protected-resource/mcp")).json()
    assert meta["issuer"] == "https://mcp.example.com"
    assert meta["scopes_supported"] == ["notes:read", "notes:write"]
    assert prm["resource"] == "https://mcp.example.com/mcp"
    assert prm["authorization_servers"] == ["https://mcp.example.com"]
