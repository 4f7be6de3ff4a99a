"""The ui extension's ``mcpkit`` commands, through core's ``mcpkit.cli`` plugin hook.

Rules:
1. The plugin adds one lazy subcommand, ``mcpkit ui-demo``, which serves the example
   MCP App (:mod:`mcpkit.ext.ui.demo`); its module is imported only when the command is
   used (core's :class:`~mcpkit.cli.plugins.LazyCommand`). Core never imports this
   module: the ``mcpkit.cli`` entry point of this distribution names it.
"""

from __future__ import annotations

from mcpkit.cli.plugins import CliPlugin, LazyCommand

__all__ = ["plugin"]

plugin = CliPlugin(
    commands=(
        LazyCommand(
            "ui-demo",
            "serve the example MCP App (a bar chart view; stdio, or --transport http)",
            "mcpkit.ext.ui.demo.cli",
        ),
    ),
)
"""The ``mcpkit.cli`` entry point of mcpkit-ext-ui (``ui = "mcpkit.ext.ui.cli:plugin"``)."""
