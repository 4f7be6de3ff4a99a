"""Library errors at the shell speak flags, not constructor arguments (issue 26).

:mod:`mcpkit.cli.errors` words an error for ``mcpkit``: the problem, then the fix a CLI
plugin knows (its own flags), else core's flag, never the Python advice; a refused
option value is named by its flag. The real ``mcpkit ls`` against a protected server is
in mcpkit-ext-auth's tests/cli/test_cli_token.py.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pytest
from cli_helpers import CONNECT, mcpkit

from mcpkit.cli.errors import cli_message, option_flags
from mcpkit.cli.plugins import CliPlugin, LoadedPlugin
from mcpkit.client.errors import HTTPAuthError, InputRoundsExceededError, MessageTooLargeError
from mcpkit.core.remedies import OptionError, explain


def test_a_401_in_code_says_the_constructor_and_at_the_shell_a_flag() -> None:
    exc = HTTPAuthError("initialize", 401, 'Bearer resource_metadata="https://x/.wk"')
    assert str(exc).endswith("; pass Client(url, auth=...) with credentials the server accepts")
    text = cli_message(exc)
    assert text.startswith("initialize: HTTP 401 (authorization required); WWW-Authenticate: ")
    assert text.endswith("--header 'Authorization: Bearer TOKEN'")
    assert "Client(" not in text


def test_a_plugins_explanation_replaces_cores_and_a_failing_one_is_skipped(
    capsys: pytest.CaptureFixture[str],
) -> None:
    def broken(exc: BaseException, args: argparse.Namespace) -> str | None:
        raise RuntimeError("oops")

    def knows(exc: BaseException, args: argparse.Namespace) -> str | None:
        return "use --sign-in" if isinstance(exc, HTTPAuthError) else None

    plugins = [
        LoadedPlugin("a", "dist-a", CliPlugin(explain_error=broken)),
        LoadedPlugin("b", "dist-b", CliPlugin(explain_error=knows)),
    ]
    text = cli_message(HTTPAuthError("tools/list", 401), argparse.Namespace(), plugins)
    assert text == "tools/list: HTTP 401 (authorization required); use --sign-in"
    assert "plugin 'a' (dist-a) failed in explain_error: RuntimeError: oops" in (
        capsys.readouterr().err
    )
    other = cli_message(ValueError("plain"), argparse.Namespace(), plugins)
    assert other == "ValueError: plain"


@pytest.mark.parametrize(
    ("exc", "python_words"),
    [
        (MessageTooLargeError("tools/call", 200, 1024), "max_message_bytes"),
        (InputRoundsExceededError("tools/call", 8), "max_input_rounds"),
    ],
)
def test_client_arguments_are_named_in_code_only(exc: Exception, python_words: str) -> None:
    assert python_words in str(exc)
    assert python_words not in cli_message(exc)
    assert cli_message(exc) == explain(exc, "cli")


def test_a_refused_option_is_named_by_its_flag() -> None:
    def add_arguments(p: argparse.ArgumentParser) -> None:
        p.add_argument("--issuer-path", default="")
        p.add_argument("-v", "--verbose", action="store_true")

    flags = option_flags(add_arguments)
    assert flags == {"issuer_path": "--issuer-path", "verbose": "--verbose"}
    exc = OptionError("start with '/'", option="issuer_path")
    assert isinstance(exc, ValueError)
    assert str(exc) == "issuer_path: start with '/'"
    assert cli_message(exc, flags=flags) == "--issuer-path: start with '/'"


def test_a_request_that_times_out_names_the_timeout_flag(tmp_path: Path) -> None:
    """Core's own flags for core's errors: a request past --timeout says --timeout."""
    server = tmp_path / "stuck.py"
    server.write_text(
        "import anyio\nfrom mcpkit.server import Server\nserver = Server('stuck')\n"
        "@server.tool()\nasync def wait() -> str:\n    await anyio.sleep_forever()\n    return ''\n"
    )
    target = f"{sys.executable} -m mcpkit.cli.main run {server} --shutdown-grace 0"
    out = mcpkit("call", target, "wait", "--timeout", "0.5", *CONNECT)
    assert out.returncode == 2
    assert "no response within 0.5 s; give it longer with --timeout SECONDS (now 0.5)" in (
        out.stderr
    )


def test_option_flags_finds_options_added_through_groups() -> None:
    """Rule 2 without argparse's private action list: options a command adds through an
    argument group or a mutually exclusive group are found too, by their longest flag."""

    def add(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("target")
        parser.add_argument("-p", "--port", type=int)
        group = parser.add_argument_group("tls")
        group.add_argument("--cert-file", dest="cert_file")
        either = parser.add_mutually_exclusive_group()
        either.add_argument("-v", "--verbose", action="store_true")
        either.add_argument("--quiet", action="store_true")

    assert option_flags(add) == {
        "port": "--port",
        "cert_file": "--cert-file",
        "verbose": "--verbose",
        "quiet": "--quiet",
    }
