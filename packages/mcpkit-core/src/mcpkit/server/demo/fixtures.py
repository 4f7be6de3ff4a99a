"""The fixtures the official conformance suite's server scenarios call.

Names and payloads follow the suite's scenario descriptions
(``@modelcontextprotocol/conformance``); they are test data, not showcase features.

Rules:
1. Payload text is exactly what the scenarios expect; do not reword it.
2. Fixtures that need client input use the era-neutral context API, so they work on
   handshake-era sessions (live reverse calls) and on 2026-07-28 (MRTR) alike.
"""

from __future__ import annotations

import base64
from typing import Any

import anyio

from mcpkit.core.jsonrpc import dumps
from mcpkit.core.shapes import JSON
from mcpkit.server.app import Server
from mcpkit.server.context import Context
from mcpkit.server.tools import ToolError

PNG_1PX = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC"
)
WAV_TINY = "UklGRiwAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQgAAACAgICAgICAgA=="


def register(server: Server) -> None:
    @server.tool()
    def test_simple_text() -> str:
        """Returns simple text content."""
        return "This is a simple text response for testing."

    @server.tool()
    def test_image_content():
        """Returns image content."""
        return {"type": "image", "data": PNG_1PX, "mimeType": "image/png"}

    @server.tool()
    def test_audio_content():
        """Returns audio content."""
        return {"type": "audio", "data": WAV_TINY, "mimeType": "audio/wav"}

    @server.tool()
    def test_embedded_resource():
        """Returns an embedded resource."""
        return {
            "type": "resource",
            "resource": {
                "uri": "test://embedded-resource",
                "mimeType": "text/plain",
                "text": "This is an embedded resource content.",
            },
        }

    @server.tool()
    def test_multiple_content_types():
        """Returns text, image and an embedded resource."""
        return [
            {"type": "text", "text": "Multiple content types test:"},
            {"type": "image", "data": PNG_1PX, "mimeType": "image/png"},
            {
                "type": "resource",
                "resource": {
                    "uri": "test://mixed-content-resource",
                    "mimeType": "application/json",
                    "text": dumps({"test": "data", "value": 123}).decode(),
                },
            },
        ]

    @server.tool()
    async def test_tool_with_logging(ctx: Context) -> str:
        """Sends three info log messages while running."""
        await ctx.info("Tool execution started")
        await anyio.sleep(0.05)
        await ctx.info("Tool processing data")
        await anyio.sleep(0.05)
        await ctx.info("Tool execution completed")
        return "Tool with logging executed successfully"

    @server.tool()
    def test_error_handling() -> str:
        """Always fails with a tool error."""
        raise ToolError("This tool intentionally returns an error for testing")

    @server.tool()
    async def test_tool_with_progress(ctx: Context) -> str:
        """Reports progress 0, 50, 100 of 100."""
        for step in (0, 50, 100):
            await ctx.report_progress(step, 100)
            if step < 100:
                await anyio.sleep(0.05)
        return "Tool with progress executed successfully"

    @server.tool()
    async def test_sampling(prompt: str, ctx: Context) -> str:
        """Asks the client's LLM to answer a prompt."""
        result = await ctx.sample(
            [{"role": "user", "content": {"type": "text", "text": prompt}}], max_tokens=100
        )
        return f"LLM response: {result.text or ''}"

    @server.tool()
    async def test_elicitation(message: str, ctx: Context) -> str:
        """Asks the user for a username and an email."""
        result = await ctx.elicit(
            message,
            {
                "type": "object",
                "properties": {
                    "username": {"type": "string", "description": "User's response"},
                    "email": {"type": "string", "description": "User's email address"},
                },
                "required": ["username", "email"],
            },
        )
        content = dumps(result.get("content", {})).decode()
        return f"User response: action={result.get('action')}, content={content}"

    @server.tool()
    async def test_elicitation_sep1034_defaults(ctx: Context) -> str:
        """Elicits with defaults for every primitive type (SEP-1034)."""
        result = await ctx.elicit(
            "Please review and update the form fields with defaults",
            {
                "type": "object",
                "properties": {
                    "name": {"type": "string", "description": "User name", "default": "John Doe"},
                    "age": {"type": "integer", "description": "User age", "default": 30},
                    "score": {"type": "number", "description": "User score", "default": 95.5},
                    "status": {
                        "type": "string",
                        "description": "User status",
                        "enum": ["active", "inactive", "pending"],
                        "default": "active",
                    },
                    "verified": {
                        "type": "boolean",
                        "description": "Verification status",
                        "default": True,
                    },
                },
            },
        )
        return (
            f"Elicitation completed: action={result.get('action')}, "
            f"content={dumps(result.get('content', {})).decode()}"
        )

    @server.tool()
    async def test_elicitation_sep1330_enums(ctx: Context) -> str:
        """Elicits with the five enum schema variants (SEP-1330)."""
        result = await ctx.elicit(
            "Please select options from the enum fields",
            {
                "type": "object",
                "properties": {
                    "untitledSingle": {
                        "type": "string",
                        "description": "Choose an option",
                        "enum": ["option1", "option2", "option3"],
                    },
                    "titledSingle": {
                        "type": "string",
                        "description": "Choose a titled option",
                        "oneOf": [
                            {"const": "value1", "title": "First Option"},
                            {"const": "value2", "title": "Second Option"},
                            {"const": "value3", "title": "Third Option"},
                        ],
                    },
                    "legacyEnum": {
                        "type": "string",
                        "description": "Choose a legacy option",
                        "enum": ["opt1", "opt2", "opt3"],
                        "enumNames": ["Option One", "Option Two", "Option Three"],
                    },
                    "untitledMulti": {
                        "type": "array",
                        "description": "Choose multiple options",
                        "items": {"type": "string", "enum": ["option1", "option2", "option3"]},
                    },
                    "titledMulti": {
                        "type": "array",
                        "description": "Choose multiple titled options",
                        "items": {
                            "anyOf": [
                                {"const": "value1", "title": "First Choice"},
                                {"const": "value2", "title": "Second Choice"},
                                {"const": "value3", "title": "Third Choice"},
                            ]
                        },
                    },
                },
            },
        )
        return (
            f"Elicitation completed: action={result.get('action')}, "
            f"content={dumps(result.get('content', {})).decode()}"
        )

    def _json_schema_2020_12(**arguments: Any) -> str:
        return f"Received: {dumps(arguments).decode()}"

    server.add_tool(
        _json_schema_2020_12,
        name="json_schema_2020_12_tool",
        description="Tool with JSON Schema 2020-12 features",
        input_schema={
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "$defs": {
                "address": {
                    "$anchor": "addressDef",
                    "type": "object",
                    "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
                }
            },
            "properties": {
                "name": {"type": "string"},
                "address": {"$ref": "#/$defs/address"},
                "contactMethod": {"type": "string", "enum": ["phone", "email"]},
                "phone": {"type": "string"},
                "email": {"type": "string"},
            },
            "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
            "if": {
                "properties": {"contactMethod": {"const": "phone"}},
                "required": ["contactMethod"],
            },
            "then": {"required": ["phone"]},
            "else": {"required": ["email"]},
            "additionalProperties": False,
        },
    )

    @server.prompt()
    def test_simple_prompt() -> str:
        """A simple prompt without arguments."""
        return "This is a simple prompt for testing."

    @server.prompt()
    def test_prompt_with_arguments(arg1: str, arg2: str) -> str:
        """A prompt with two required arguments."""
        return f"Prompt with arguments: arg1='{arg1}', arg2='{arg2}'"

    @server.prompt()
    def test_prompt_with_embedded_resource(resourceUri: str) -> list[JSON]:
        """A prompt embedding a resource."""
        return [
            {
                "role": "user",
                "content": {
                    "type": "resource",
                    "resource": {
                        "uri": resourceUri,
                        "mimeType": "text/plain",
                        "text": "Embedded resource content for testing.",
                    },
                },
            },
            {
                "role": "user",
                "content": {"type": "text", "text": "Please process the embedded resource above."},
            },
        ]

    @server.prompt()
    def test_prompt_with_image() -> list[JSON]:
        """A prompt with an image."""
        return [
            {
                "role": "user",
                "content": {"type": "image", "data": PNG_1PX, "mimeType": "image/png"},
            },
            {
                "role": "user",
                "content": {"type": "text", "text": "Please analyze the image above."},
            },
        ]

    @server.completion(prompt="test_prompt_with_arguments")
    def complete_test_args(argument: str, value: str, context: dict[str, str]) -> list[str]:
        options = ["paris", "park", "party", "pasta"]
        return [o for o in options if o.startswith(value)]

    @server.resource(
        "test://static-text", mime_type="text/plain", description="A static text resource"
    )
    def static_text() -> str:
        return "This is the content of the static text resource."

    @server.resource(
        "test://static-binary", mime_type="image/png", description="A static binary resource"
    )
    def static_binary() -> bytes:
        return base64.b64decode(PNG_1PX)  # bytes: one base64 blob

    @server.resource(
        "test://watched-resource",
        mime_type="text/plain",
        description="A resource that can be subscribed to",
    )
    def watched_resource() -> str:
        return "Watched resource content."

    @server.resource(
        "test://template/{id}/data",
        mime_type="application/json",
        description="A resource template with an id parameter",
    )
    def template_data(id: str) -> str:
        return dumps({"id": id, "templateTest": True, "data": f"Data for ID: {id}"}).decode()

    @server.tool()
    async def test_reconnection(ctx: Context) -> str:
        """Closes its SSE connection mid-call (SEP-1699); the result is delivered when
        the client reconnects with Last-Event-ID."""
        await ctx.close_stream(retry_ms=500)
        await anyio.sleep(0.1)
        return "Reconnection test completed successfully"
