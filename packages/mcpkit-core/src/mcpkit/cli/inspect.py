"""``mcpkit ls``, ``call``, ``read`` and ``prompt``: look at and poke a server from the shell.

Usage::

    mcpkit ls http://127.0.0.1:8765/mcp
    mcpkit ls "npx -y @modelcontextprotocol/server-everything"
    mcpkit call http://127.0.0.1:8765/mcp add a=1 b=2
    mcpkit read http://127.0.0.1:8765/mcp demo://readme
    mcpkit prompt http://127.0.0.1:8765/mcp greet name=Ada

Rules:
1. The target is a URL (``http://``/``https://``: Streamable HTTP) or a command line, split
   like a shell would but run without one (stdio). The client's adaptive mode picks the
   era unless ``--mode`` pins it.
2. ``ls`` prints the server's identity and era, then tools, prompts, resources,
   resource templates and extensions as aligned tables; a kind the server does not offer
   is skipped. An extension's row shows its settings object as sent and the spec version
   and stability the server gave in the result's ``_meta["io.mcpkit/extensions"]``
   (:meth:`~mcpkit.client.Client.server_extension`; empty when it gave none).
3. ``call`` with ``key=value`` arguments reads the tool's schema from ``tools/list``;
   when another tool's entry is malformed it goes on with the ones that parsed
   (:mod:`mcpkit.client.parsing` rule 2). ``call`` prints the result once
   (:mod:`mcpkit.cli.render` rule 3); a tool error exits with status 1; bad
   arguments, a protocol error or a failed connection with status 2.
   Arguments are one JSON object or ``key=value`` words read by the tool's
   ``inputSchema`` (:mod:`mcpkit.cli.arguments`). ``--json`` prints the raw result
   instead (``read`` and ``prompt`` too).
4. A spawned server's stderr is captured and shown only when something fails
   (``--stderr`` passes it through); a server that exits is reported with its exit
   status and the last lines of its stderr (:class:`~mcpkit.client.stdio.ServerExitedError`).
5. Diagnostics go to stderr; results to stdout. Progress and log notifications the
   server sends while a command runs are printed on stderr as they arrive (logs at
   ``--log-level`` and above, default ``info``).
6. Plugins (:mod:`mcpkit.cli.plugins`) add options to these commands and turn them
   into headers or an ``auth`` object for the HTTP transport; ``--header`` values are
   applied first, so a plugin sees (and may override) them. A plugin's
   :class:`CliError` exits with status 2.
7. Connecting (starting the process, the era probe and the handshake) is bounded as a
   whole by ``--connect-timeout`` seconds (default 10; a plugin may raise it, e.g. for
   an interactive login); each later request by ``--timeout`` (default 60).
8. Elicitation is answered interactively on a terminal and cancelled otherwise
   (:mod:`mcpkit.cli.elicit`); sampling is not offered.
9. A library error is worded for the shell (:func:`mcpkit.cli.errors.cli_message`): its
   problem, then the fix in flags (a plugin's, e.g. ``--auth``, else core's: a request
   that timed out names ``--timeout``), never a constructor argument.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from mcpkit.cli.flags import seconds
from mcpkit.cli.plugins import ClientConfig, CliError, CliPlugin, LoadedPlugin
from mcpkit.core.shapes import as_object

if TYPE_CHECKING:
    from mcpkit.client import Client

__all__ = ["CLIENT_COMMANDS", "add_client_commands", "client_config", "run_client_command"]

CLIENT_COMMANDS = ("ls", "call", "read", "prompt")
DEFAULT_CONNECT_TIMEOUT_S = 10.0
LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")


def add_client_commands(sub: Any, plugins: Sequence[LoadedPlugin] = ()) -> None:
    """Register ``ls``, ``call``, ``read`` and ``prompt`` on the ``mcpkit`` subparsers
    object, each with the options ``plugins`` add (rule 6)."""
    ls = sub.add_parser("ls", help="list a server's tools, prompts and resources")
    _add_target_options(ls)
    call = sub.add_parser("call", help="call one tool and print its result")
    _add_target_options(call)
    read = sub.add_parser("read", help="read one resource and print its contents")
    _add_target_options(read)
    prompt = sub.add_parser("prompt", help="get one prompt and print its messages")
    _add_target_options(prompt)
    for plugin in plugins:
        for parser in (ls, call, read, prompt):
            plugin.call("add_client_options", parser)
    call.add_argument("tool", help="tool name")
    call.add_argument(
        "arguments",
        nargs="*",
        help="tool arguments: key=value words (typed by the tool's schema) or one JSON object",
    )
    read.add_argument("uri", help="resource URI")
    prompt.add_argument("name", help="prompt name")
    prompt.add_argument("arguments", nargs="*", metavar="key=value", help="prompt arguments")
    for parser in (call, read, prompt):
        parser.add_argument("--json", action="store_true", help="print the raw result as JSON")


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
    p.add_argument(
        "--timeout", type=seconds(), default=60.0, help="seconds per request (default 60)"
    )
    p.add_argument(
        "--connect-timeout",
        type=seconds(),
        default=DEFAULT_CONNECT_TIMEOUT_S,
        metavar="SECONDS",
        dest="connect_timeout_s",
        help="seconds to start and reach the server, handshake included "
        f"(default {DEFAULT_CONNECT_TIMEOUT_S:g})",
    )
    p.add_argument("--stderr", action="store_true", help="pass a spawned server's stderr through")
    p.add_argument(
        "--log-level",
        choices=LOG_LEVELS,
        default="info",
        help="server log notifications shown on stderr from this level (default info)",
    )


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
        raise CliError("empty command")
    return StdioTransport(
        argv[0],
        argv[1:],
        stderr="inherit" if args.stderr else "capture",
        shutdown_timeout_s=1.0,
    )


async def _ls(client: Client) -> str:
    from mcpkit.cli.render import args_of, first_line, table

    caps = client.server_capabilities
    info = client.server_info
    out = [
        f"{info.get('name', '?')} {info.get('version', '')}".rstrip()
        + f"  (protocol {client.protocol_version}, {client.era} era)"
    ]
    if client.instructions:
        out.append(first_line(client.instructions))
    if "tools" in caps:
        tools = await client.list_tools()
        rows = [[t.name, args_of(t.input_schema), first_line(t.description)] for t in tools]
        out.append(table("Tools", ["NAME", "ARGUMENTS", "DESCRIPTION"], rows))
    if "prompts" in caps:
        prompts = await client.list_prompts()
        rows = [
            [
                p.name,
                ", ".join(f"{a.name}{'' if a.required else '?'}" for a in p.arguments or []),
                first_line(p.description),
            ]
            for p in prompts
        ]
        out.append(table("Prompts", ["NAME", "ARGUMENTS", "DESCRIPTION"], rows))
    if "resources" in caps:
        resources = await client.list_resources()
        rows = [[str(r.uri), r.name, r.mime_type or ""] for r in resources]
        out.append(table("Resources", ["URI", "NAME", "MIME TYPE"], rows))
        templates = await client.list_resource_templates()
        if templates:
            rows = [[t.uri_template, t.name, first_line(t.description)] for t in templates]
            out.append(table("Resource templates", ["URI TEMPLATE", "NAME", "DESCRIPTION"], rows))
    exts = as_object(caps.get("extensions"))
    if exts:
        ext_rows: list[list[str]] = []
        for ext_id in [str(i) for i in exts]:
            found = client.server_extension(ext_id)
            about = found.about() if found is not None else {}
            settings = json.dumps(dict(found.config) if found is not None else {})
            version, stability = about.get("specVersion", ""), about.get("stability", "")
            ext_rows.append([ext_id, version, stability, settings])
        headers = ["ID", "SPEC VERSION", "STABILITY", "SETTINGS"]
        out.append(table("Extensions", headers, ext_rows))
    return "\n\n".join(out)


async def _call(client: Client, args: argparse.Namespace) -> tuple[str, int]:
    from mcpkit.cli.arguments import parse_tool_arguments
    from mcpkit.cli.render import render_call

    schema: dict[str, Any] | None = None
    if any(not w.lstrip().startswith("{") for w in args.arguments):  # key=value: need types
        from mcpkit.client.parsing import MalformedResultError

        try:
            tools = await client.list_tools()
        except MalformedResultError as exc:  # rule 3: another tool's entry is malformed
            if not any(t.name == args.tool for t in exc.items):
                raise
            tools = exc.items
        tool = next((t for t in tools if t.name == args.tool), None)
        schema = tool.input_schema if tool is not None else None
    arguments = parse_tool_arguments(args.arguments, schema)

    async def on_progress(*_: Any) -> None:  # the receive middleware prints it (rule 5)
        return None

    result = await client.call_tool(args.tool, arguments, on_progress=on_progress)
    status = 1 if result.is_error else 0
    if args.json:
        return _raw(result), status
    return render_call(result), status


def _raw(result: Any) -> str:
    from mcpkit.core.types import to_wire

    return json.dumps(to_wire(result), indent=2, ensure_ascii=False)


async def _read(client: Client, args: argparse.Namespace) -> tuple[str, int]:
    from mcpkit.cli.render import render_read

    result = await client.read_resource(args.uri)
    return (_raw(result) if args.json else render_read(result)), 0


async def _prompt(client: Client, args: argparse.Namespace) -> tuple[str, int]:
    from mcpkit.cli.render import render_prompt

    arguments: dict[str, str] = {}
    for word in args.arguments:
        key, sep, value = word.partition("=")
        if not sep or not key:
            raise CliError(f"{word!r} is not key=value")
        arguments[key] = value
    result = await client.get_prompt(args.name, arguments)
    return (_raw(result) if args.json else render_prompt(result)), 0


def _show_notification(command: str, method: str, params: dict[str, Any]) -> None:
    """Rule 5: one stderr line per progress or log notification."""
    if method == "notifications/progress":
        total = params.get("total")
        amount = f"{params.get('progress')}" + (f"/{total}" if total is not None else "")
        message = params.get("message")
        sys.stderr.write(f"progress {amount}" + (f" {message}" if message else "") + "\n")
    elif method == "notifications/message":
        data = params.get("data")
        text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
        source = f" {params['logger']}" if params.get("logger") else ""
        sys.stderr.write(f"[{params.get('level', '?')}{source}] {text}\n")
    sys.stderr.flush()


async def _session(client: Client, args: argparse.Namespace) -> tuple[str, int]:
    from mcpkit.client.middleware import IncomingMessage

    async def observe(message: IncomingMessage, call_next: Any) -> Any:
        if message.request_id is None and message.method in (
            "notifications/progress",
            "notifications/message",
        ):
            _show_notification(args.command, message.method, message.params or {})
        return await call_next(message)

    client.add_receive_middleware(observe)
    if args.command == "ls":
        return await _ls(client), 0
    if client.era == "modern" or "logging" in client.server_capabilities:
        await client.set_log_level(args.log_level)
    if args.command == "call":
        return await _call(client, args)
    if args.command == "read":
        return await _read(client, args)
    return await _prompt(client, args)


def _failure(
    exc: BaseException,
    transport: Any,
    connect_s: float,
    connected: bool,
    args: argparse.Namespace,
    plugins: Sequence[LoadedPlugin],
) -> str:
    """Rules 4, 7 and 9: the message for a failed command."""
    from mcpkit.cli.errors import cli_message
    from mcpkit.client.errors import TransportClosedError

    if not connected and isinstance(exc, TimeoutError):
        what = "start and answer" if transport.kind == "stdio" else "answer"
        return f"the server did not {what} the handshake within {connect_s:g} s (--connect-timeout)"
    exit_error = getattr(transport, "exit_error", None)
    code = getattr(transport, "returncode", None)
    if isinstance(exc, TransportClosedError) and exit_error is None and code is not None:
        from mcpkit.client.stdio import ServerExitedError

        exit_error = ServerExitedError(transport.command, code, transport.stderr_tail())
    if isinstance(exc, TransportClosedError) and exit_error is not None:
        return str(exit_error)
    text = cli_message(exc, args, plugins)
    tail = getattr(transport, "stderr_text", "")
    if tail:
        text += "\n--- server stderr (tail) ---\n" + transport.stderr_tail()
    return text


def _explain(exc: BaseException, args: argparse.Namespace) -> str | None:
    """Rule 9: core's own flags for the errors core's options fix (plugins answer first)."""
    from mcpkit.client.errors import RequestTimeoutError

    if isinstance(exc, RequestTimeoutError):
        return f"give it longer with --timeout SECONDS (now {args.timeout:g})"
    return None


def run_client_command(args: argparse.Namespace, plugins: Sequence[LoadedPlugin] = ()) -> int:
    """Run ``ls``, ``call``, ``read`` or ``prompt`` (rules 1-8); returns the exit status."""
    import anyio

    from mcpkit.cli.elicit import elicitation_handler
    from mcpkit.client import Client
    from mcpkit.core.jsonrpc import JSONRPCError

    try:
        config = client_config(args, plugins)
        transport = _transport(args, config)
    except CliError as exc:
        print(f"mcpkit {args.command}: {exc}", file=sys.stderr)
        return 2
    connect_s = max(args.connect_timeout_s, config.connect_timeout_s or 0.0)  # rule 7
    connected = False

    async def go() -> tuple[str, int]:
        nonlocal connected
        # One deadline over the whole entry (rule 7), lifted once connected; the scope
        # encloses the client so its task groups nest inside it.
        with anyio.CancelScope(deadline=anyio.current_time() + connect_s) as entry:
            async with Client(
                transport,
                mode=args.mode,
                timeout_s=max(args.timeout, connect_s),
                probe_timeout_s=connect_s,
                auth=config.auth,
                elicitation=elicitation_handler(args.command),
            ) as client:
                connected = True
                entry.deadline = math.inf
                client.timeout_s = client.session.timeout_s = args.timeout
                return await _session(client, args)
        raise TimeoutError("connecting")

    try:
        text, status = anyio.run(go)
    except CliError as exc:
        print(f"mcpkit {args.command}: {exc}", file=sys.stderr)
        return 2
    except JSONRPCError as exc:
        print(f"mcpkit {args.command}: server error {exc.code}: {exc.message}", file=sys.stderr)
        return 2
    except Exception as exc:
        core = LoadedPlugin("mcpkit", "mcpkit-core", CliPlugin(explain_error=_explain))
        message = _failure(exc, transport, connect_s, connected, args, [*plugins, core])
        print(f"mcpkit {args.command}: {message}", file=sys.stderr)
        return 2
    print(text)
    if status:
        print(f"mcpkit call: tool {args.tool!r} reported an error", file=sys.stderr)
    return status
