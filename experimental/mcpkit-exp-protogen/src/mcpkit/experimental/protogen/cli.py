"""The ``mcpkit protogen`` command, through core's ``mcpkit.cli`` plugin hook.

Rules:
1. The plugin adds one lazy subcommand, ``mcpkit protogen`` (:mod:`.command`), imported
   only when used; core never imports this module (the distribution's ``mcpkit.cli``
   entry point names it).
"""

from __future__ import annotations

from mcpkit.cli.plugins import CliPlugin, LazyCommand

__all__ = ["plugin"]

plugin = CliPlugin(
    commands=(
        LazyCommand(
            "protogen",
            "Generate MCP bindings from annotated .proto services (runs the bundled protoc)",
            "mcpkit.experimental.protogen.command",
        ),
    ),
)
"""The ``mcpkit.cli`` entry point of mcpkit-exp-protogen."""
