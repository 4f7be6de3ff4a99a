"""``mcpkit ls`` and ``mcpkit call``: look at and poke a server from the shell.

Usage::

    mcpkit ls http://127.0.0.1:8765/mcp
    mcpkit ls "npx -y @modelcontextprotocol/server-everything"
    mcpkit call http://127.0.0.1:8765/mcp add '{"a": 1, "b": 2}'

Rules:
1. The target is a URL (``http://``/``https://``: Streamable HTTP) or a command line, split
   like a shell would but run without one (stdio). The client's adaptive mode picks the
   era unless ``--mode`` pins it.
2. ``ls`` prints the server's identity and era, then tools, prompts, resources and
   resource templates as aligned tables; a kind the server does not offer is skipped.
3. ``call`` prints each content block (text as is, other blocks summarised) and the
   ``structuredContent`` as JSON; a tool error exits with status 1, bad ``json-args`` or
   a failed connection with status 2. ``--json`` prints the raw result instead.
4. A spawned server's stderr is captured and shown only when something fails
   (``--stderr`` passes it through).
5. Diagnostics go to stderr; results to stdout.
6. Plugins (:mod:`mcpkit.cli.plugins`) add options to both commands and turn them into
   headers or an ``auth`` object for the HTTP transport; ``--header`` values are applied
   first, so a plugin sees (and may override) them. A plugin's :class:`CliError` exits
   with status 2.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from mcpkit.cli.plugins import ClientConfig, CliError, LoadedPlugin

if TYPE_CHECKING:
    from mcpkit.client import Client

__all__ = ["add_client_commands", "client_config", "run_client_command"]

JSON = dict[str, Any]


def add_client_commands(sub: Any, plugins: Sequence[LoadedPlugin] = ()) -> None:
    """Register ``ls`` and ``call`` on the ``mcpkit`` subparsers object, each with the
    options ``plugins`` add (rule 6)."""
    ls = sub.add_parser("ls", help="list a server's tools, prompts and resources")
    _add_target_options(ls)
    call = sub.add_parser("call", help="call one tool and print its result")
    _add_target_options(call)
    for plugin in plugins:
        for parser in (ls, call):
            plugin.call("add_client_options", parser)
    call.add_argument("tool", help="tool name")
    call.add_argument("arguments", nargs="?", default="{}", help="tool arguments as a JSON object")
    call.add_argument("--json", action="store_true", help="print the raw result as JSON")


def _add_target_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("target", help="server URL (http[s]://...) or command line (stdio)")
    p.add_argument(
        "--mode",
        choices=("adaptive", "legacy", "modern"),
        default="adaptive",
        help="protocol era: probe (default), handshake era only, 2026-07-28 only",
    )
    p.add_argument(
        "--header",
        action="append",
        default=[],
        metavar="NAME:VALUE",
        help="extra HTTP header (repeatable)",
    )
    p.add_argument("--timeout", type=float, default=60.0, help="seconds per request (default 60)")
    p.add_argument("--stderr", action="store_true", help="pass a spawned server's stderr through")


def client_config(args: argparse.Namespace, plugins: Sequence[LoadedPlugin] = ()) -> ClientConfig:
    """The :class:`ClientConfig` of ``--header`` and every plugin's options (rule 6);
    raises :class:`CliError` for a malformed header or a plugin's refusal."""
    config = ClientConfig(args.target)
    for item in args.header:
        name, sep, value = item.partition(":")
        if not sep:
            raise CliError(f"--header {item!r} must look like 'Name: value'")
        config.headers[name.strip()] = value.strip()
    for plugin in plugins:
        before = config.auth
        plugin.call("configure_client", args, config)
        if config.auth is not before:
            if config.set_by is not None:
                raise CliError(
                    f"plugins {config.set_by} and {plugin.label} both set the authorization; "
                    "use one of their options"
                )
            config.set_by = plugin.label
    if not config.is_http and (config.auth is not None or len(config.headers) > 0):
        raise CliError("headers and authorization need an http(s):// target")
    return config


def _transport(args: argparse.Namespace, config: ClientConfig) -> Any:
    import shlex

    if config.is_http:
        from mcpkit.client import HttpTransport

        return HttpTransport(args.target, headers=config.headers)
    from mcpkit.client import StdioTransport

    argv = shlex.split(args.target)
    if not argv:
        raise SystemExit("mcpkit: empty command")
    return StdioTransport(argv[0], argv[1:], stderr="inherit" if args.stderr else "capture")


def _first_line(text: str | None) -> str:
    return (text or "").strip().splitlines()[0] if (text or "").strip() else ""


def _table(title: str, headers: Sequence[str], rows: list[list[str]]) -> str:
    width = shutil.get_terminal_size((120, 20)).columns
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]
    last = max(10, width - sum(widths[:-1]) - 2 * (len(widths) - 1))
    widths[-1] = min(widths[-1], last)

    def fmt(cells: Sequence[str]) -> str:
        out: list[str] = []
        for i, cell in enumerate(cells):
            text = cell if len(cell) <= widths[i] else cell[: widths[i] - 1] + "…"
            out.append(text.ljust(widths[i]))
        return "  ".join(out).rstrip()

    lines = [f"{title} ({len(rows)})", fmt(headers), fmt(["-" * w for w in widths])]
    lines += [fmt(r) for r in rows]
    return "\n".join(lines)


def _args_of(schema: dict[str, Any]) -> str:
    props: Any = schema.get("properties")
    if not isinstance(props, dict):
        return ""
    required: Any = schema.get("required") or ()
    names = [f"{n}{'' if n in required else '?'}" for n in props]  # pyright: ignore
    return ", ".join(names)


async def _ls(client: Client) -> str:
    caps = client.server_capabilities
    info = client.server_info
    out = [
        f"{info.get('name', '?')} {info.get('version', '')}".rstrip()
        + f"  (protocol {client.protocol_version}, {client.era} era)"
    ]
    if client.instructions:
        out.append(_first_line(client.instructions))
    if "tools" in caps:
        tools = await client.list_tools()
        rows = [[t.name, _args_of(t.input_schema), _first_line(t.description)] for t in tools]
        out.append(_table("Tools", ["NAME", "ARGUMENTS", "DESCRIPTION"], rows))
    if "prompts" in caps:
        prompts = await client.list_prompts()
        rows = [
            [
                p.name,
                ", ".join(f"{a.name}{'' if a.required else '?'}" for a in p.arguments or []),
                _first_line(p.description),
            ]
            for p in prompts
        ]
        out.append(_table("Prompts", ["NAME", "ARGUMENTS", "DESCRIPTION"], rows))
    if "resources" in caps:
        resources = await client.list_resources()
        rows = [[str(r.uri), r.name, r.mime_type or ""] for r in resources]
        out.append(_table("Resources", ["URI", "NAME", "MIME TYPE"], rows))
        templates = await client.list_resource_templates()
        if templates:
            rows = [[t.uri_template, t.name, _first_line(t.description)] for t in templates]
            out.append(_table("Resource templates", ["URI TEMPLATE", "NAME", "DESCRIPTION"], rows))
    return "\n\n".join(out)


def _render_block(block: Any) -> str:
    kind = getattr(block, "type", "?")
    if kind == "text":
        return str(block.text)
    if kind in ("image", "audio"):
        return f"[{kind} {block.mime_type}, {len(block.data) * 3 // 4} bytes]"
    if kind == "resource_link":
        return f"[resource link {block.uri}]"
    if kind == "resource":
        inner = block.resource
        text = getattr(inner, "text", None)
        return f"[resource {inner.uri}]" + (f"\n{text}" if text else "")
    return json.dumps(block.model_dump(mode="json", by_alias=True), ensure_ascii=False)


async def _call(client: Client, args: argparse.Namespace) -> tuple[str, int]:
    from mcpkit.core.types import to_wire

    try:
        arguments: Any = json.loads(args.arguments)
    except json.JSONDecodeError as exc:
        raise _UsageError(f"json-args is not JSON: {exc}") from None
    if not isinstance(arguments, dict):
        raise _UsageError("json-args must be a JSON object, e.g. '{\"a\": 1}'")
    result = await client.call_tool(args.tool, arguments)  # pyright: ignore[reportUnknownArgumentType]
    status = 1 if result.is_error else 0
    if args.json:
        return json.dumps(to_wire(result), indent=2, ensure_ascii=False), status
    parts = [_render_block(b) for b in result.content]
    if result.structured_content is not None:
        parts.append(json.dumps(result.structured_content, indent=2, ensure_ascii=False))
    return "\n".join(parts), status


class _UsageError(Exception):
    pass


def run_client_command(args: argparse.Namespace, plugins: Sequence[LoadedPlugin] = ()) -> int:
    """Run ``ls`` or ``call`` (rules 1-6); returns the exit status."""
    import anyio

    from mcpkit.client import Client
    from mcpkit.core.jsonrpc import JSONRPCError

    try:
        config = client_config(args, plugins)
        transport = _transport(args, config)
    except CliError as exc:
        print(f"mcpkit {args.command}: {exc}", file=sys.stderr)
        return 2

    async def go() -> tuple[str, int]:
        connect = config.connect_timeout_s
        async with Client(
            transport,
            mode=args.mode,
            timeout_s=args.timeout if connect is None else max(args.timeout, connect),
            probe_timeout_s=10.0 if connect is None else connect,
            auth=config.auth,
        ) as client:
            if args.command == "ls":
                return await _ls(client), 0
            return await _call(client, args)

    try:
        text, status = anyio.run(go)
    except _UsageError as exc:
        print(f"mcpkit {args.command}: {exc}", file=sys.stderr)
        return 2
    except JSONRPCError as exc:
        print(f"mcpkit {args.command}: server error {exc.code}: {exc.message}", file=sys.stderr)
        return 2
    except Exception as exc:
        print(f"mcpkit {args.command}: {type(exc).__name__}: {exc}", file=sys.stderr)
        tail = getattr(transport, "stderr_text", "")
        if tail:
            print("--- server stderr (tail) ---\n" + tail[-4000:], file=sys.stderr)
        return 2
    print(text)
    if status:
        print(f"mcpkit call: tool {args.tool!r} reported an error", file=sys.stderr)
    return status
