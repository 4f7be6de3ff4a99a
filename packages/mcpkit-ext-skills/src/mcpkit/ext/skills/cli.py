"""The skills extension's ``mcpkit`` command, through core's ``mcpkit.cli`` plugin hook.

Rules:
1. The plugin adds one lazy subcommand, ``mcpkit skills`` (``serve``, ``ls``,
   ``verify``, ``pull``: :mod:`mcpkit.ext.skills.commands`), imported only when used
   (core's :class:`~mcpkit.cli.plugins.LazyCommand`). Core never imports this module:
   the ``mcpkit.cli`` entry point of this distribution names it.
"""

from __future__ import annotations

from mcpkit.cli.plugins import CliPlugin, LazyCommand

__all__ = ["plugin"]

plugin = CliPlugin(
    commands=(
        LazyCommand(
            "skills",
            "Agent Skills over MCP: serve a directory, list, verify or pull a server's skills",
            "mcpkit.ext.skills.commands",
        ),
    ),
)
"""The ``mcpkit.cli`` entry point of mcpkit-ext-skills
(``skills = "mcpkit.ext.skills.cli:plugin"``)."""
