"""Demo fixtures for the 2026-07-28 conformance scenarios (SEP-2575, SEP-2322, SEP-2243).

They also work on handshake-era sessions: input requests become live reverse calls.

Rules:
1. Input keys (``user_name``, ``capital_question``, ...) and texts are the ones the
   conformance scenarios expect; do not rename them.
2. ``test_input_required_result_capabilities`` asks only for inputs the client declared.
3. The trigger tools really change the tool or prompt list, so list_changed is genuine.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from mcpkit.core.jsonrpc import dumps
from mcpkit.core.shapes import JSON, as_object
from mcpkit.server.app import Server
from mcpkit.server.context import Context

_NAME_SCHEMA: JSON = {
    "type": "object",
    "properties": {"name": {"type": "string"}},
    "required": ["name"],
}


def _text(result: JSON) -> str:
    content = result.get("content", {})
    block = as_object(content)
    return str(block.get("text", "")) if block is not None else str(content)


def _elicit(message: str, schema: JSON) -> JSON:
    return {
        "method": "elicitation/create",
        "params": {"mode": "form", "message": message, "requestedSchema": schema},
    }


def _sample(text: str, max_tokens: int) -> JSON:
    return {
        "method": "sampling/createMessage",
        "params": {
            "messages": [{"role": "user", "content": {"type": "text", "text": text}}],
            "maxTokens": max_tokens,
        },
    }


_ROOTS: JSON = {"method": "roots/list", "params": {}}


def register(server: Server) -> None:
    @server.tool()
    async def test_input_required_result_elicitation(ctx: Context) -> str:
        """Asks for the user's name (MRTR elicitation)."""
        answer = await ctx.elicit("What is your name?", _NAME_SCHEMA, key="user_name")
        return f"Hello, {answer.get('content', {}).get('name', 'stranger')}!"

    @server.tool()
    async def test_input_required_result_sampling(ctx: Context) -> str:
        """Asks the client's model a question (MRTR sampling)."""
        answer = await ctx.sample(
            [
                {
                    "role": "user",
                    "content": {"type": "text", "text": "What is the capital of France?"},
                }
            ],
            max_tokens=100,
            key="capital_question",
        )
        return f"The model said: {answer.text or ''}"

    @server.tool()
    async def test_input_required_result_list_roots(ctx: Context) -> str:
        """Asks for the client's roots (MRTR roots/list)."""
        roots = await ctx.list_roots(key="client_roots")
        return "Roots: " + ", ".join(r.uri for r in roots)

    @server.tool()
    async def test_input_required_result_request_state(ctx: Context) -> str:
        """Asks for a confirmation; the answer travels back with requestState."""
        answer = await ctx.elicit(
            "Please confirm",
            {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]},
            key="confirm",
        )
        ok = answer.get("action") == "accept" and answer.get("content", {}).get("ok") is True
        return "state-ok" if ok else "state-not-confirmed"

    @server.tool()
    async def test_input_required_result_tampered_state(ctx: Context) -> str:
        """Like the request-state fixture; a tampered requestState must be refused."""
        await ctx.elicit(
            "Please confirm",
            {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]},
            key="confirm",
        )
        return "state-ok"

    @server.tool()
    async def test_input_required_result_multiple_inputs(ctx: Context) -> str:
        """Asks for a name, a generated greeting and the roots in one round."""
        answers = await ctx.request_input(
            {
                "user_name": _elicit("What is your name?", _NAME_SCHEMA),
                "greeting": _sample("Generate a greeting", 50),
                "client_roots": _ROOTS,
            }
        )
        name = answers["user_name"].get("content", {}).get("name", "stranger")
        roots = answers["client_roots"].get("roots", [])
        return f"{_text(answers['greeting'])} {name} ({len(roots)} roots)"

    @server.tool()
    async def test_input_required_result_multi_round(ctx: Context) -> str:
        """Two rounds: a name, then a favourite colour."""
        first = await ctx.elicit("Step 1: What is your name?", _NAME_SCHEMA, key="step1")
        second = await ctx.elicit(
            "Step 2: What is your favorite color?",
            {"type": "object", "properties": {"color": {"type": "string"}}, "required": ["color"]},
            key="step2",
        )
        name = first.get("content", {}).get("name", "?")
        color = second.get("content", {}).get("color", "?")
        return f"{name} likes {color}"

    @server.tool()
    async def test_input_required_result_capabilities(ctx: Context) -> str:
        """Asks only for inputs the client declared (sampling, elicitation or roots)."""
        if ctx.client_supports("sampling"):
            answer = await ctx.sample(
                [{"role": "user", "content": {"type": "text", "text": "Say hello"}}],
                max_tokens=20,
                key="hello",
            )
            return answer.text or ""
        if ctx.client_supports("elicitation"):
            answer = await ctx.elicit("What is your name?", _NAME_SCHEMA, key="user_name")
            return dumps(answer.get("content", {})).decode()
        if ctx.client_supports("roots"):
            return str(len(await ctx.list_roots(key="client_roots")))
        return "the client declared no input capability"

    @server.prompt()
    async def test_input_required_result_prompt(ctx: Context) -> str:
        """A prompt that first asks which context to use (MRTR on prompts/get)."""
        answer = await ctx.elicit(
            "What context should the prompt use?",
            {
                "type": "object",
                "properties": {"context": {"type": "string"}},
                "required": ["context"],
            },
            key="user_context",
        )
        return f"Use this context: {answer.get('content', {}).get('context', '')}"

    @server.tool()
    async def test_missing_capability(ctx: Context) -> str:
        """Needs sampling; a client without it gets -32021."""
        answer = await ctx.sample(
            [{"role": "user", "content": {"type": "text", "text": "Hello"}}], max_tokens=10
        )
        return answer.text or ""

    @server.tool()
    async def test_streaming_elicitation(ctx: Context) -> str:
        """Needs user input; on 2026-07-28 that is an input_required result, never a
        request on the response stream."""
        answer = await ctx.elicit("What is your name?", _NAME_SCHEMA, key="user_name")
        return f"Hello, {answer.get('content', {}).get('name', 'stranger')}!"

    @server.tool()
    async def test_logging_tool(ctx: Context) -> str:
        """Logs at info; nothing is sent unless the request set a log level."""
        await ctx.info("test_logging_tool started")
        await ctx.info("test_logging_tool finished")
        return "logged"

    def _dynamic_tool() -> str:
        """A tool that test_trigger_tool_change adds and removes."""
        return "dynamic"

    @server.tool()
    def test_trigger_tool_change() -> str:
        """Adds or removes a tool, so the tool list really changes."""
        if "dynamic_tool" in server.tools:
            server.remove_tool("dynamic_tool")
            return "removed dynamic_tool"
        server.add_tool(_dynamic_tool, name="dynamic_tool")
        return "added dynamic_tool"

    def _dynamic_prompt() -> str:
        """A prompt that test_trigger_prompt_change adds and removes."""
        return "dynamic"

    @server.tool()
    def test_trigger_prompt_change() -> str:
        """Adds or removes a prompt, so the prompt list really changes."""
        if "dynamic_prompt" in server.prompts:
            server.remove_prompt("dynamic_prompt")
            return "removed dynamic_prompt"
        server.prompt(name="dynamic_prompt")(_dynamic_prompt)
        return "added dynamic_prompt"

    @server.tool()
    def test_x_mcp_header(
        region: Annotated[
            str,
            Field(
                description="Mirrored as the Mcp-Param-Region header",
                json_schema_extra={"x-mcp-header": "Region"},
            ),
        ],
        query: str = "",
    ) -> str:
        """A tool whose 'region' argument travels in the Mcp-Param-Region header too."""
        return f"region={region} query={query}"
