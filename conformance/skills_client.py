"""The mcpkit skills host the conformance harness runs for the ``sep-2640-client-*``
scenarios (``client`` mode; the harness appends the mock server's URL).

Usage: ``python conformance/skills_client.py <server-url>`` with
``MCP_CONFORMANCE_SCENARIO`` set by the harness.

Rules:
1. The host connects with mcpkit's default adaptive client, labels the server
   ``conformance`` (a host-chosen label) and lists its skills with
   :class:`mcpkit.ext.skills.host.SkillRegistry`: nothing is read on connect or list.
2. ``sep-2640-client-no-prefetch``: the host lists and stops (no skill is loaded).
3. ``sep-2640-client-verify-*`` (and any other scenario): the host loads every listed
   skill: it reads ``SKILL.md`` verified against the entry, and only when that passes
   reads the skill's other files. A verification failure is reported on stderr and the
   skill is not used; exit status 0 (refusing tampered content is the right outcome).
4. Exit status 1 for anything else that fails (the error on stderr).
"""

from __future__ import annotations

import os
import sys

import anyio

from mcpkit.client import Client
from mcpkit.ext.skills.client import SkillVerificationError, server_supports_skills
from mcpkit.ext.skills.host import SkillRegistry

LABEL = "conformance"


async def run(url: str, scenario: str) -> None:
    async with Client(url) as client:
        if not server_supports_skills(client):
            raise RuntimeError("the server did not declare io.modelcontextprotocol/skills")
        registry = SkillRegistry()
        entries = await registry.add_server(LABEL, client)
        if scenario == "sep-2640-client-no-prefetch":
            return
        for entry in entries:
            try:
                await registry.read(LABEL, entry.uri, entry.uri)
                for file in entry.files or ():
                    if file.uri != entry.uri:
                        await registry.read(LABEL, entry.uri, file.uri)
            except SkillVerificationError as exc:
                print(f"skills host: not loading {entry.uri}: {exc}", file=sys.stderr)


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print("usage: skills_client.py <server-url>", file=sys.stderr)
        return 2
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    try:
        anyio.run(run, argv[-1], scenario)
    except Exception as exc:
        print(f"skills host: scenario {scenario!r} failed: {exc!r}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
