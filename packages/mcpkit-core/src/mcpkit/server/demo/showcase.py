"""Showcase tools, prompts and resources of the demo server.

Rules:
1. Every tool is useful to a person trying mcpkit by hand: ``echo``, ``sleep`` (with
   progress), ``add``, ``weather`` (structured output), ``now``.
2. Long-running work reports progress to the client, never to stdout.
"""

from __future__ import annotations

import datetime as dt
from typing import Annotated

import anyio
from pydantic import Field
from typing_extensions import TypedDict

from mcpkit.server.app import Server
from mcpkit.server.context import Context


class Weather(TypedDict):
    city: str
    temperature_c: float
    conditions: str


_CITIES = {"paris": (18.5, "sunny"), "tokyo": (22.0, "cloudy"), "oslo": (4.0, "snow")}


def register(server: Server) -> None:
    @server.tool(annotations={"readOnlyHint": True})
    def echo(text: Annotated[str, Field(description="Text to send back")]) -> str:
        """Return the text unchanged."""
        return text

    @server.tool()
    async def sleep(
        seconds: Annotated[float, Field(ge=0, le=300, description="How long to sleep, in s")],
        ctx: Context,
    ) -> str:
        """Sleep for a while, reporting progress about ten times; cancellable."""
        steps = 10
        for i in range(steps):
            await ctx.report_progress(i, steps, f"slept {seconds * i / steps:.1f} s")
            await anyio.sleep(seconds / steps)
        await ctx.report_progress(steps, steps, "done")
        return f"slept {seconds} s"

    @server.tool(annotations={"readOnlyHint": True})
    def add(a: float, b: float) -> float:
        """Add two numbers."""
        return a + b

    @server.tool(annotations={"readOnlyHint": True})
    def weather(city: Annotated[str, Field(description="paris, tokyo or oslo")]) -> Weather:
        """Current (made-up) weather for a city, as structured output."""
        temp, cond = _CITIES.get(city.lower(), (15.0, "unknown"))
        return {"city": city, "temperature_c": temp, "conditions": cond}

    @server.tool(annotations={"readOnlyHint": True})
    def now() -> str:
        """The server's current UTC time in ISO 8601."""
        return dt.datetime.now(dt.UTC).isoformat()

    @server.prompt(title="Summarize a text")
    def summarize(text: str, style: str = "concise") -> str:
        """Ask the model to summarize a text."""
        return f"Summarize the following text in a {style} style:\n\n{text}"

    @server.completion(prompt="summarize")
    def complete_style(argument: str, value: str, context: dict[str, str]) -> list[str]:
        options = ["concise", "detailed", "bullet points", "eli5"]
        return [o for o in options if o.startswith(value)] if argument == "style" else []

    @server.resource("demo://readme", mime_type="text/markdown", title="About the demo")
    def readme() -> str:
        """What this server offers."""
        return (
            "# mcpkit demo\n\nTools: echo, sleep, add, weather, now.\n"
            "Resource template: demo://greeting/{name}.\n"
        )

    @server.resource("demo://greeting/{name}", mime_type="text/plain")
    def greeting(name: str) -> str:
        """A greeting for anyone."""
        return f"Hello, {name}!"
