"""``mcpkit.ext.otel`` needs only ``opentelemetry-api``: in a fresh interpreter where the
SDK and every exporter are made unimportable, the package imports, instruments a server
and a client, and a call goes through (spans and metrics are the API's no-ops)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

PROGRAM = textwrap.dedent(
    """
    import sys
    from importlib.abc import MetaPathFinder

    BLOCKED = ("opentelemetry.sdk", "opentelemetry.exporter", "opentelemetry.proto")

    class Block(MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name.startswith(BLOCKED):
                raise ImportError(f"{name} is blocked: only opentelemetry-api may be used")
            return None

    sys.meta_path.insert(0, Block())
    try:
        import opentelemetry.sdk  # noqa: F401
    except ImportError:
        pass
    else:
        raise SystemExit("the blocker does not work")

    import anyio
    from mcpkit.client import Client
    from mcpkit.ext.otel import instrument
    from mcpkit.server import Server

    server = Server("s")

    @server.tool()
    async def echo(text: str) -> str:
        return text

    async def main() -> None:
        instrument(server)
        client = Client(server)
        instrument(client)
        async with client:
            result = await client.call_tool("echo", {"text": "ok"})
        assert result.content[0].text == "ok"

    anyio.run(main)
    loaded = sorted(m for m in sys.modules if m.startswith(BLOCKED))
    assert not loaded, loaded
    print("imported and served with opentelemetry-api only")
    """
)


def test_imports_and_serves_with_the_api_only() -> None:
    done = subprocess.run(
        [sys.executable, "-c", PROGRAM], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "imported and served with opentelemetry-api only" in done.stdout


def test_instrument_refuses_what_is_not_an_mcpkit_server_or_client() -> None:
    import pytest

    from mcpkit.ext.otel import instrument

    with pytest.raises(TypeError, match="takes an mcpkit Server or Client, not object"):
        instrument(object())  # type: ignore[arg-type]
