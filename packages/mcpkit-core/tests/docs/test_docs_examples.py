"""Every Python example in the README and ``docs/`` runs, and does what the text says.

Each ```python block starts with ``# docs-example: NAME``; the block is executed in a
fresh namespace and ``CHECKS[NAME]`` then exercises what it defined (usually a
``server``) through the in-process test peer. A block without a marker, or with a name
that has no check, fails the suite, so an example cannot be added without being run.
"""

from __future__ import annotations

import json
import re
import sys
import tomllib
from collections.abc import Awaitable, Callable
from importlib.metadata import EntryPoint
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

import pytest
from peer import connect

sys.path.insert(0, str(Path(__file__).resolve().parents[4] / "tools"))
from docs_blocks import block as docs_block
from stdio_process import mcpkit_argv, spawn

from mcpkit.client import Client
from mcpkit.client.memory import MemoryTransport
from mcpkit.core import Extension
from mcpkit.core.jsonrpc import INVALID_PARAMS, RESOURCE_NOT_FOUND_LEGACY, JSONRPCError
from mcpkit.server import Server

pytestmark = [pytest.mark.anyio, pytest.mark.lowest]

ROOT = Path(__file__).resolve().parents[4]
DOC_FILES = (
    "README.md",
    "docs/architecture.md",
    "docs/extensions.md",
    "docs/protocol-eras.md",
    "docs/server.md",
)
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.DOTALL | re.MULTILINE)
MARKER = re.compile(r"^# docs-example: ([\w-]+)\n")

JSON = dict[str, Any]
Check = Callable[[dict[str, Any]], Awaitable[None]]


def blocks(language: str) -> list[tuple[str, str]]:
    """``(file, code)`` for every fenced block of ``language`` in the docs."""
    found: list[tuple[str, str]] = []
    for name in DOC_FILES:
        text = (ROOT / name).read_text("utf-8")
        found += [(name, code) for lang, code in FENCE.findall(text) if lang == language]
    return found


def python_examples() -> list[tuple[str, str, str]]:
    out: list[tuple[str, str, str]] = []
    for file, code in blocks("python"):
        m = MARKER.match(code)
        out.append((file, m.group(1) if m else "", code))
    return out


def run_example(name: str, code: str) -> dict[str, Any]:
    # a real module, so that what needs its defining module (dataclasses) finds it
    module = ModuleType(f"docs_example_{name.replace('-', '_')}")
    sys.modules[module.__name__] = module
    exec(compile(code, f"<docs-example {name}>", "exec"), module.__dict__)
    return module.__dict__


# -- checks, one per example -----------------------------------------------------------------


async def check_readme_notes(ns: dict[str, Any]) -> None:
    async with connect(ns["server"]) as peer:
        tools = (await peer.request("tools/list"))["tools"]
        saved = await peer.call_tool("save_note", {"title": "todo", "body": "buy milk"})
        read = await peer.request("resources/read", {"uri": "notes://todo"})
        with pytest.raises(JSONRPCError) as missing:
            await peer.request("resources/read", {"uri": "notes://nope"})
        logs = peer.received("notifications/message")
    save = next(t for t in tools if t["name"] == "save_note")
    assert save["inputSchema"]["properties"]["title"]["description"] == "Short title"
    assert save["outputSchema"]["required"] == ["title", "total"]
    assert saved["structuredContent"] == {"title": "todo", "total": 1}
    assert read["contents"][0]["text"] == "buy milk"
    assert missing.value.code == RESOURCE_NOT_FOUND_LEGACY
    assert logs == [{"level": "info", "data": "saved 'todo'"}]


async def check_capability(ns: dict[str, Any]) -> None:
    async with connect(ns["server"]) as peer:
        answered = {k: peer.init_result[k] for k in ("capabilities", "_meta")}
    documented = json.loads(docs_block("docs/extensions.md", "extensions-capability-json"))
    assert answered == documented
    # the shorter sample above it, in the page's prose, is a part of the same answer
    sample = json.loads(
        "{" + docs_block("docs/extensions.md", "extensions-capability-sample") + "}"
    )
    search = "com.example/search"
    assert sample["capabilities"]["extensions"] == {
        search: answered["capabilities"]["extensions"][search]
    }
    assert sample["_meta"]["io.mcpkit/extensions"] == {
        search: answered["_meta"]["io.mcpkit/extensions"][search]
    }


async def check_method_namespace(ns: dict[str, Any]) -> None:
    async with connect(ns["server"]) as peer:
        hits = await peer.request("com.example/search", {"query": "mc"})
        with pytest.raises(JSONRPCError) as bad:
            await peer.request("com.example/search", {})
        caps = peer.init_result["capabilities"]
        meta = peer.init_result["_meta"]
    assert hits == {"hits": ["Model Context Protocol"]}
    assert bad.value.code == INVALID_PARAMS
    assert caps["extensions"] == {"com.example/search": {}}
    assert meta["io.mcpkit/extensions"] == {"com.example/search": {"stability": "stable"}}


async def check_notifications(ns: dict[str, Any]) -> None:
    server: Server = ns["server"]
    speaks = {"extensions": {ns["EVENTS"]: {}}}
    async with connect(server, capabilities=speaks) as fan, connect(server) as plain:
        await fan.call_tool("deploy", {"version": "1.2"})
        await plain.call_tool("deploy", {"version": "1.3"})
        await fan.notify("notifications/com.example/ack", {"version": "1.2"})
        ns["announce_maintenance"]("22:00")
        maintenance = await fan.wait_for("notifications/com.example/maintenance")
        await plain.request("ping")
        await fan.request("ping")
        plain_saw = [m for m, _ in plain.notifications if "com.example" in m]
        deployed = fan.received("notifications/com.example/deployed")
    assert deployed == [{"version": "1.2"}]
    assert maintenance == [{"at": "22:00"}]
    assert plain_saw == []
    assert ns["acknowledged"] == [{"version": "1.2"}]


async def check_meta_middleware(ns: dict[str, Any]) -> None:
    async with connect(ns["server"]) as peer:
        traced = await peer.request(
            "tools/call",
            {"name": "whoami", "arguments": {}, "_meta": {"com.example/traceId": "t-1"}},
        )
        fresh = await peer.call_tool("whoami")
        logs = peer.received("notifications/message")
    assert traced["_meta"] == {"com.example/traceId": "t-1"}
    assert traced["content"][0]["text"] == "trace t-1"
    assert fresh["_meta"]["com.example/traceId"] != "t-1"
    assert logs[0] == {
        "level": "info",
        "data": "looking up the trace",
        "_meta": {"com.example/region": "eu-1"},
    }


async def check_package(ns: dict[str, Any]) -> None:
    speaks = {"extensions": {"com.example/glossary": {}}}
    async with connect(ns["server"], capabilities=speaks) as peer:
        found = await peer.request("com.example/glossary/define", {"term": "MCP"})
        missing = await peer.request("com.example/glossary/define", {"term": "xyz"})
        caps = peer.init_result["capabilities"]
        meta = peer.init_result["_meta"]
        misses = peer.received("notifications/com.example/glossary/miss")
    assert found == {
        "definition": "Model Context Protocol",
        "_meta": {"com.example/glossary/version": 1},
    }
    assert missing["definition"] is None
    assert misses == [{"term": "xyz"}]
    about = {"specVersion": "2026-01-15", "stability": "experimental"}
    assert caps["extensions"] == {"com.example/glossary": {"terms": 1}}
    assert meta["io.mcpkit/extensions"] == {"com.example/glossary": about}


async def check_server_extension(ns: dict[str, Any]) -> None:
    await ns["main"]()


async def check_extension_eras(ns: dict[str, Any]) -> None:
    for era, listed in (("legacy", False), ("modern", True)):
        async with Client(ns["server"], mode=era) as client:
            assert client.server_supports_extension("com.example/streams") is listed


async def check_list_filter(ns: dict[str, Any]) -> None:
    root = SimpleNamespace(subject="root")
    ui = [Extension("com.example/ui")]
    for era in ("legacy", "modern"):
        async with Client(ns["server"], mode=era) as client:
            assert [t.name for t in await client.list_tools()] == ["echo"]
            with pytest.raises(JSONRPCError) as hidden:
                await client.call_tool("delete_everything", {})
            assert hidden.value.code == INVALID_PARAMS
            assert "unknown tool" in str(hidden.value)
            assert "delete_everything" not in str(hidden.value).split("known tools:")[1]
        async with Client(ns["server"], mode=era, extensions=ui) as client:
            assert [t.name for t in await client.list_tools()] == ["show_chart", "echo"]
        async with Client(MemoryTransport(ns["server"], principal=root), mode=era) as client:
            assert "delete_everything" in [t.name for t in await client.list_tools()]
            done = await client.call_tool("delete_everything", {})
            assert done.content[0].text == "gone"  # type: ignore[union-attr]


async def check_negotiation_helpers(ns: dict[str, Any]) -> None:
    ext = [ns["EXTENSION"]]
    for era in ("legacy", "modern"):
        async with Client(ns["server"], mode=era, extensions=ext) as client:
            assert ns["server_supports"](client)
            speaks = await client.call_tool("define", {"term": "mcp"})
        async with Client(ns["server"], mode=era) as client:
            plain = await client.call_tool("define", {"term": "mcp"})
        assert speaks.content[0].text == "mcp: see the glossary"  # type: ignore[union-attr]
        assert plain.content[0].text == "mcp"  # type: ignore[union-attr]


async def check_eras_book_table(ns: dict[str, Any]) -> None:
    await ns["main"]()
    # One booking per era: on 2026-07-28 the handler ran three times (two input rounds),
    # but the side effect after the last input ran once.
    assert ns["kitchen_calls"] == [4, 4]


async def check_cli_plugin(ns: dict[str, Any]) -> None:
    import argparse

    from mcpkit.cli.inspect import client_config
    from mcpkit.cli.main import build_parser
    from mcpkit.cli.plugins import ENTRY_POINT_GROUP, CliError, LoadedPlugin

    # the page's entry point (pyproject.toml) names the group the CLI loads and the
    # example's plugin object, loaded as the CLI loads it
    toml = tomllib.loads(docs_block("docs/extensions.md", "extensions-cli-entry-point"))
    ((group, points),) = toml["project"]["entry-points"].items()
    assert group == ENTRY_POINT_GROUP
    module_name = points["glossary"].split(":")[0]
    sys.modules[module_name] = sys.modules[ns["__name__"]]
    try:
        target = EntryPoint("glossary", points["glossary"], group).load()
    finally:
        del sys.modules[module_name]
    assert target is ns["plugin"]
    loaded = LoadedPlugin("glossary", "glossary-cli", ns["plugin"])
    parser = build_parser([loaded])
    define = parser.parse_args(["define", "mcp"])
    assert define.handler(define) == 0
    url = "http://127.0.0.1:9/mcp"  # kind-ok: fixed-port parsed only, never served
    args = parser.parse_args(["ls", url, "--glossary-key", "k1", "--header", "X-A: b"])
    config = client_config(args, [loaded])
    assert config.headers == {"X-A": "b", "X-Glossary-Key": "k1"}
    assert config.auth is None
    stdio = parser.parse_args(["ls", "python server.py", "--glossary-key", "k1"])
    with pytest.raises(CliError, match="needs an http"):
        client_config(stdio, [loaded])
    plain = client_config(parser.parse_args(["ls", url]), [loaded])
    assert plain.headers == {}
    assert isinstance(parser.parse_args(["ls", url]), argparse.Namespace)


# -- docs/server.md ----------------------------------------------------------------------------


async def check_server_decorators(ns: dict[str, Any]) -> None:
    server: Server = ns["server"]
    assert ns["count_books"]() == 2  # the decorators return the function
    async with connect(server) as peer:
        tools = {t["name"]: t for t in (await peer.request("tools/list"))["tools"]}
        counted = await peer.call_tool("count_books")
        found = await peer.call_tool("find", {"title": "du"})
        prompt = await peer.request(
            "prompts/get", {"name": "review", "arguments": {"title": "Emma"}}
        )
        read = await peer.request("resources/read", {"uri": "library://books/2"})
        completed = await peer.request(
            "completion/complete",
            {
                "ref": {"type": "ref/resource", "uri": "library://books/{book_id}"},
                "argument": {"name": "book_id", "value": "1"},
            },
        )
    assert tools["count_books"]["description"] == "How many books the library holds."
    assert tools["find"]["title"] == "Find a book"
    assert tools["find"]["annotations"] == {"readOnlyHint": True}
    assert tools["find"]["inputSchema"]["properties"]["title"]["description"] == "Part of the title"
    assert counted["structuredContent"] == {"result": 2}
    assert found["content"] == [{"type": "text", "text": "Dune"}]  # list[str]: text blocks
    assert prompt["messages"][0]["content"]["text"] == "Write a short review of Emma."
    assert read["contents"] == [
        {"uri": "library://books/2", "mimeType": "text/plain", "text": "Emma"}
    ]
    assert completed["completion"]["values"] == ["1"]
    with pytest.raises(TypeError, match="needs the resource's URI"):
        server.resource(ns["book"])  # type: ignore[call-overload]  # the table's wrong form


async def check_server_sync(ns: dict[str, Any]) -> None:
    import threading

    seen: dict[str, str] = {}
    server: Server = ns["server"]
    for name in ("slow_lookup", "add"):
        binding = server.tools[name].binding
        original = binding.fn

        def spy(*args: Any, __fn: Any = original, __name: str = name, **kwargs: Any) -> Any:
            seen[__name] = threading.current_thread().name
            return __fn(*args, **kwargs)

        binding.fn = spy
    async with connect(server) as peer:
        looked_up = await peer.call_tool("slow_lookup", {"key": "ab"})
        added = await peer.call_tool("add", {"a": 2, "b": 3})
    assert looked_up["content"][0]["text"] == "AB"
    assert added["structuredContent"] == {"result": 5}
    assert seen["slow_lookup"].startswith("mcpkit-sync")  # a worker thread
    assert seen["add"] == threading.current_thread().name  # the event loop's thread


async def check_server_caller(ns: dict[str, Any]) -> None:
    async with connect(ns["server"]) as alice, connect(ns["server"]) as bob:
        kept = await alice.call_tool("remember", {"note": "alice's"})
        assert kept["content"][0]["text"] == "kept"
        theirs = await bob.call_tool("recall", {})
        mine = await alice.call_tool("recall", {})
    assert theirs["content"][0]["text"] == "nothing"  # another connection, another caller
    assert mine["content"][0]["text"] == "alice's"
    assert len(ns["notes"]) == 1


async def check_server_parts_agree(ns: dict[str, Any]) -> None:
    assert "variable {title} is not a parameter" in ns["refused"]
    assert "rename the parameter 'name' to 'title'" in ns["refused"]
    assert [t.matcher.template for t in ns["server"].templates] == ["notes://{title}{?lang}"]
    async with connect(ns["server"]) as peer:
        plain = await peer.request("resources/read", {"uri": "notes://todo"})
        french = await peer.request("resources/read", {"uri": "notes://todo?lang=fr"})
    assert plain["contents"][0]["text"] == "todo (en)"
    assert french["contents"][0]["text"] == "todo (fr)"


HTTP_HELPERS = str(Path(__file__).resolve().parents[1] / "http")


async def check_server_http_headers(ns: dict[str, Any]) -> None:
    import importlib

    sys.path.insert(0, HTTP_HELPERS)
    mcp_http: Any = importlib.import_module("http_helpers").mcp_http  # real uvicorn, port 0

    from mcpkit.client import HttpTransport

    async with Client(ns["server"]) as local:
        here = await local.call_tool("tenant", {})
    assert here.content[0].text == "local: no HTTP request"  # type: ignore[union-attr]
    sent = {"X-Tenant": "acme", "Authorization": "Bearer t"}
    async with (
        mcp_http(ns["server"]) as (_, url, _endpoint),
        Client(HttpTransport(url, headers=sent)) as client,
    ):
        tenant = await client.call_tool("tenant", {})
        bearer = await client.call_tool("has_bearer", {})
    assert tenant.content[0].text == "acme"  # type: ignore[union-attr]
    assert bearer.structured_content == {"result": True}


async def check_server_returns(ns: dict[str, Any]) -> None:
    async with connect(ns["server"]) as peer:
        stock = await peer.call_tool("stock")
        prices = await peer.call_tool("prices")
        read = await peer.request("resources/read", {"uri": "shop://stock"})
    assert stock["structuredContent"] == {"type": "fruit", "name": "apple", "count": 3}
    assert json.loads(stock["content"][0]["text"]) == stock["structuredContent"]
    assert prices == {"content": [{"type": "text", "text": "[1.5,2.25]"}], "isError": False}
    entry = read["contents"][0]
    assert entry["mimeType"] == "application/json"
    assert json.loads(entry["text"]) == {"fruit": "pear", "count": 7}


async def check_server_content(ns: dict[str, Any]) -> None:
    async with connect(ns["server"]) as peer:
        chart = await peer.call_tool("chart")
        export = await peer.call_tool("export")
    assert chart["content"][0] == {"type": "text", "text": "Sales by month:"}
    assert chart["content"][1]["type"] == "image"
    assert chart["content"][1]["mimeType"] == "image/png"
    assert export["content"] == [
        {
            "type": "resource",
            "resource": {
                "uri": "file:///sales.csv",
                "mimeType": "text/csv",
                "text": "month,sales\njan,3\n",
            },
        }
    ]


async def check_typed_wire(ns: dict[str, Any]) -> None:
    async with connect(ns["server"]) as peer:
        (tool,) = (await peer.request("tools/list"))["tools"]
        sunny = await peer.call_tool("forecast", {"city": "Lisbon"})
        unknown = await peer.call_tool("forecast", {"city": "Atlantis"})
    assert "outputSchema" not in tool
    assert sunny == {
        "content": [{"type": "text", "text": "Sunny in Lisbon"}],
        "structuredContent": {"city": "Lisbon", "sky": "sunny"},
    }
    assert unknown["isError"] is True
    assert ns["first_text"](sunny) == "Sunny in Lisbon"
    assert ns["first_text"]({"content": [{"type": "image", "data": "", "mimeType": "x/y"}]}) == ""


async def check_server_lifespan(ns: dict[str, Any]) -> None:
    server: Server = ns["server"]
    async with connect(server) as peer:
        state = server.lifespan_state
        motd = await peer.call_tool("motd")
    assert motd["content"] == [{"type": "text", "text": "hello"}]
    assert state.open is False  # closed at shutdown
    assert server.lifespan_state is None


async def check_extension_options(ns: dict[str, Any]) -> None:
    assert ns["audited"] == {"purge": "high"}
    assert ns["mistake"] == (
        "tool 'purge': audit_level='hihg': 'hihg' is not one of 'low', 'high' "
        "(did you mean 'high'?)"
    )
    async with connect(ns["server"]) as peer:
        tools = (await peer.request("tools/list"))["tools"]
    assert [t["name"] for t in tools] == ["purge"]
    assert "audit_level" not in tools[0]


async def check_server_errors(ns: dict[str, Any]) -> None:
    import logging

    mcpkit_logger = logging.getLogger("mcpkit")
    try:
        assert mcpkit_logger.level == logging.WARNING
        assert len(mcpkit_logger.handlers) == 1
        async with connect(ns["server"]) as peer:
            refused = await peer.call_tool("divide", {"a": 1, "b": 0})
            crashed = await peer.call_tool("read_config")
    finally:  # the example configured the process's logging: undo it for later tests
        mcpkit_logger.handlers.clear()
        mcpkit_logger.setLevel(logging.NOTSET)
    assert refused["content"] == [{"type": "text", "text": "b must not be zero"}]
    text = crashed["content"][0]["text"]
    assert crashed["isError"] is True
    assert "secret.conf" not in text
    assert re.search(r"error id [0-9a-f]{8}", text)


async def check_server_names(ns: dict[str, Any]) -> None:
    from mcpkit.server.names import late_bound_rules

    text = " ".join((ROOT / "docs/server.md").read_text("utf-8").split())
    documented = re.search(r"`message` is `([^`]+)`", text)
    assert documented is not None
    assert ns["message"] == documented.group(1)  # the sample is what the code says
    assert [r.name for r in late_bound_rules(ns["server"])] == ["export"]


async def check_limits_checked(ns: dict[str, Any]) -> None:
    text = " ".join((ROOT / "docs/server.md").read_text("utf-8").split())
    assert f"`ValueError: {ns['message']}`" in text  # the table's sample is what the code says
    cache_limits = ns["CacheLimits"]
    with pytest.raises(ValueError, match=r"^CacheLimits.max_entries: must be a positive integer"):
        cache_limits(max_entries=0)
    with pytest.raises(ValueError, match=r"^CacheLimits.rate_per_s: .*, or None, got inf"):
        cache_limits(rate_per_s=float("inf"))


async def check_trace_context(ns: dict[str, Any]) -> None:
    trace_id = "4bf92f3577b34da6a3ce929d0e0e4736"
    assert await ns["main"]() == f"Oslo: trace {trace_id}"
    lines = ns["log"].lines
    assert f"server handled tools/call trace={trace_id}" in lines
    assert "server handled server/discover trace=-" in lines  # the handshake: no context
    ns["server"].set_tracer(None)  # passthrough alone: the handler still sees the caller
    assert await ns["main"]() == f"Oslo: trace {trace_id}"
    assert len(ns["log"].lines) == len(lines)


CHECKS: dict[str, Check] = {
    "trace-context": check_trace_context,
    "cli-plugin": check_cli_plugin,
    "eras-book-table": check_eras_book_table,
    "readme-notes": check_readme_notes,
    "capability": check_capability,
    "method-namespace": check_method_namespace,
    "notifications": check_notifications,
    "meta-middleware": check_meta_middleware,
    "package": check_package,
    "server-extension": check_server_extension,
    "extension-eras": check_extension_eras,
    "list-filter": check_list_filter,
    "negotiation-helpers": check_negotiation_helpers,
    "server-decorators": check_server_decorators,
    "server-returns": check_server_returns,
    "server-content": check_server_content,
    "typed-wire": check_typed_wire,
    "server-lifespan": check_server_lifespan,
    "server-sync": check_server_sync,
    "server-caller": check_server_caller,
    "server-parts-agree": check_server_parts_agree,
    "server-http-headers": check_server_http_headers,
    "server-errors": check_server_errors,
    "server-names": check_server_names,
    "limits-checked": check_limits_checked,
    "extension-options": check_extension_options,
}


# -- the tests ---------------------------------------------------------------------------------


EXAMPLES = python_examples()


def test_every_python_example_is_marked_and_checked() -> None:
    names = [name for _, name, _ in EXAMPLES]
    assert all(names), "a ```python block lacks its '# docs-example: NAME' marker"
    assert sorted(names) == sorted(CHECKS), "each example needs exactly one check"


@pytest.mark.parametrize(
    ("file", "name", "code"), EXAMPLES, ids=[f"{f}:{n}" for f, n, _ in EXAMPLES]
)
async def test_docs_example_runs_and_behaves_as_documented(file: str, name: str, code: str) -> None:
    namespace = run_example(name, code)
    await CHECKS[name](namespace)


async def test_readme_example_serves_over_stdio_with_mcpkit_run(tmp_path: Path) -> None:
    code = next(code for _, name, code in EXAMPLES if name == "readme-notes")
    (tmp_path / "notes.py").write_text(code, "utf-8")
    argv = mcpkit_argv("run", str(tmp_path / "notes.py") + ":server")
    async with spawn(argv, cwd=tmp_path) as proc:
        await proc.initialize()
        saved = await proc.call(
            1, "tools/call", {"name": "save_note", "arguments": {"title": "a", "body": "b"}}
        )
        read = await proc.call(2, "resources/read", {"uri": "notes://a"})
        await proc.close_stdin()
        assert await proc.wait_exit() == 0
    assert saved["result"]["structuredContent"] == {"title": "a", "total": 1}
    assert read["result"]["contents"][0]["text"] == "b"


async def test_readme_hand_typed_lines_work_against_the_demo() -> None:
    lines = next(code for file, code in blocks("json") if file == "README.md").splitlines()
    async with spawn(mcpkit_argv("demo", "--transport", "stdio")) as proc:
        for line in lines:
            await proc.write(line.encode() + b"\n")
        replies = {i: await proc.response(i) for i in (1, 2, 3)}
        await proc.close_stdin()
        assert await proc.wait_exit() == 0
    assert replies[1]["result"]["protocolVersion"] == "2025-11-25"
    assert "echo" in {t["name"] for t in replies[2]["result"]["tools"]}
    assert replies[3]["result"]["content"] == [{"type": "text", "text": "hello"}]
