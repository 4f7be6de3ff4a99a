"""The mcpkit conformance client: what the official harness runs in ``client`` mode.

Usage (the harness appends the mock server's URL)::

    uv run python conformance/client.py <server-url>

Environment (set by ``@modelcontextprotocol/conformance``):
- ``MCP_CONFORMANCE_SCENARIO``: the scenario name (picks the steps below);
- ``MCP_CONFORMANCE_CONTEXT``: JSON with scenario inputs (e.g. ``toolCalls``), optional;
- ``MCP_CONFORMANCE_PROTOCOL_VERSION``: the wire the mock speaks (0.2.0 alphas), optional.

Rules:
1. Every scenario connects with the client's default, adaptive mode: ``server/discover``
   first, ``initialize`` when the server is not modern. Nothing here pins an era.
2. The client declares sampling, elicitation (form) and roots, so every input request a
   mock sends has a handler. Elicitation accepts, leaving values to the schema defaults
   (SEP-1034) and answering booleans without a default with ``true``.
3. Exit status 0 when every step succeeded, 1 otherwise (the error goes to stderr).
4. ``auth/*`` scenarios connect with ``auth=`` an ``OAuthProvider`` (mcpkit-ext-auth,
   imported only for them): the authorization code grant through the headless redirect
   handler (the mocks consent on their own), the CIMD URL the suite expects, and the
   pre-registered ``client_id``/``client_secret`` when the scenario's context gives them.
   The extension scenarios' grants come from :data:`EXTENSION_GRANTS`.
5. ``auth/*`` clients lower their own CPU priority (``os.nice``) before importing
   anything heavy. ``--suite all`` runs every scenario at once, and some 25 auth clients
   importing the OAuth and crypto libraries (0.5-0.9 s of CPU each) on a two-core
   machine would otherwise starve the timing-checked scenarios beside them
   (``sse-retry``: reconnect within the server's ``retry`` delay, seen 465 ms late).
   Only scheduling changes: what each client sends is the same.
"""

from __future__ import annotations

import json
import logging
import os
import sys
from collections.abc import Awaitable, Callable
from typing import Any

if os.environ.get("MCP_CONFORMANCE_SCENARIO", "").startswith("auth/"):
    os.nice(10)  # rule 5

import anyio

from mcpkit.client import Client

JSON = dict[str, Any]
Steps = Callable[[Client, JSON], Awaitable[None]]


async def sample(params: Any) -> JSON:
    return {
        "role": "assistant",
        "content": {"type": "text", "text": "This is a conformance test response."},
        "model": "mcpkit-conformance",
        "stopReason": "endTurn",
    }


async def elicit(params: Any) -> JSON:
    content: JSON = {}
    for name, prop in params.requested_schema.properties.items():
        if getattr(prop, "default", None) is None and getattr(prop, "type", None) == "boolean":
            content[name] = True
    return {"action": "accept", "content": content}


async def list_only(client: Client, context: JSON) -> None:
    await client.list_tools()


async def tools_call(client: Client, context: JSON) -> None:
    names = {t.name for t in await client.list_tools()}
    if "add_numbers" in names:
        await client.call_tool("add_numbers", {"a": 5, "b": 3})


async def call_listed(client: Client, context: JSON, only: set[str] | None = None) -> None:
    for tool in await client.list_tools():
        if only is None or tool.name in only:
            await client.call_tool(tool.name, {})


async def elicitation_defaults(client: Client, context: JSON) -> None:
    await call_listed(client, context, {"test_client_elicitation_defaults"})


async def sse_retry(client: Client, context: JSON) -> None:
    await call_listed(client, context, {"test_reconnection"})


async def request_state(client: Client, context: JSON) -> None:
    await call_listed(client, context)


async def standard_headers(client: Client, context: JSON) -> None:
    await call_listed(client, context)
    for resource in await client.list_resources():
        await client.read_resource(str(resource.uri))
    for prompt in await client.list_prompts():
        await client.get_prompt(prompt.name)


async def custom_headers(client: Client, context: JSON) -> None:
    await client.list_tools()
    for call in context.get("toolCalls") or []:
        await client.call_tool(call["name"], call.get("arguments") or {})


async def invalid_tool_headers(client: Client, context: JSON) -> None:
    for tool in await client.list_tools():
        await client.call_tool(tool.name, {"region": "us-west1"})


async def schema_preservation(client: Client, context: JSON) -> None:
    tools = {t.name: t for t in await client.list_tools()}
    focal = tools.get("json_schema_2020_12_tool")
    if focal is not None and "json_schema_echo" in tools:
        await client.call_tool("json_schema_echo", {"schema": focal.input_schema})


async def auth_flow(client: Client, context: JSON) -> None:
    await call_listed(client, context, {"test-tool"})


SCENARIOS: dict[str, Steps] = {
    "initialize": list_only,
    "tools_call": tools_call,
    "elicitation-sep1034-client-defaults": elicitation_defaults,
    "sse-retry": sse_retry,
    "request-metadata": list_only,
    "sep-2322-client-request-state": request_state,
    "http-standard-headers": standard_headers,
    "http-custom-headers": custom_headers,
    "http-invalid-tool-headers": invalid_tool_headers,
    "json-schema-ref-no-deref": list_only,
    "json-schema-2020-12-preservation": schema_preservation,
}


CIMD_URL = "https://conformance-test.local/client-metadata.json"
"""The client metadata URL the suite's CIMD scenarios expect (``basic-cimd.ts``)."""
# kind-ok: fixed-port a redirect URI, matched and never fetched
REDIRECT_URI = "http://localhost:3000/callback"

GrantFactory = Callable[[JSON], Any]
EXTENSION_GRANTS: dict[str, GrantFactory] = {}
"""Scenario name -> ``factory(context) -> Grant`` for the extension scenarios
(client credentials, enterprise-managed, DPoP, workload identity)."""


def auth_for(scenario: str, context: JSON) -> Any:
    """Rule 4: the ``auth=`` object for an ``auth/*`` scenario (None for the others)."""
    if not scenario.startswith("auth/"):
        return None
    from mcpkit.ext.auth.client import (
        AuthorizationCode,
        ClientRegistration,
        HeadlessRedirect,
        OAuthProvider,
    )

    registration = None
    if isinstance(context.get("client_id"), str):
        registration = ClientRegistration(
            client_id=context["client_id"], client_secret=context.get("client_secret")
        )
    factory = EXTENSION_GRANTS.get(scenario)
    grant = factory(context) if factory else AuthorizationCode(HeadlessRedirect(REDIRECT_URI))
    return OAuthProvider(
        grant,
        registration=registration,
        client_metadata_url=CIMD_URL,
        client_metadata={"client_name": "mcpkit-conformance-client"},
        dpop=getattr(grant, "dpop", None) or dpop_for(scenario),
    )


# -- auth grants (helper "auth-grants"): the extension scenarios' grants and DPoP -------
# SEP-1046 client credentials, SEP-990 enterprise-managed authorization, SEP-1933
# workload identity take their inputs from MCP_CONFORMANCE_CONTEXT; the SEP-1932 DPoP
# scenarios run the authorization code grant with DPoP-bound tokens.
def _client_credentials(context: JSON) -> Any:
    from mcpkit.ext.auth.client.grants import ClientCredentials

    if "private_key_pem" in context:
        return ClientCredentials(
            context["client_id"],
            private_key=context["private_key_pem"],
            signing_alg=context.get("signing_algorithm"),
        )
    return ClientCredentials(context["client_id"], client_secret=context["client_secret"])


def _enterprise_managed(context: JSON) -> Any:
    from mcpkit.ext.auth.client.grants import EnterpriseManagedAuthorization

    return EnterpriseManagedAuthorization(
        idp_token_endpoint=context["idp_token_endpoint"],
        id_token=context["idp_id_token"],
        idp_client_id=context.get("idp_client_id"),
        client_id=context["client_id"],
        client_secret=context.get("client_secret"),
    )


def _workload_identity(context: JSON) -> Any:
    from mcpkit.ext.auth.client.grants import WorkloadIdentity

    return WorkloadIdentity(context["valid_jwt"], client_id=context.get("client_id"))


EXTENSION_GRANTS.update(
    {
        "auth/client-credentials-jwt": _client_credentials,
        "auth/client-credentials-basic": _client_credentials,
        "auth/enterprise-managed-authorization": _enterprise_managed,
        "auth/cross-app-access-complete-flow": _enterprise_managed,  # 0.1.16's name
        "auth/wif-jwt-bearer": _workload_identity,
    }
)
DPOP_SCENARIOS = frozenset({"auth/dpop", "auth/dpop-nonce"})


def dpop_for(scenario: str) -> Any:
    """A fresh DPoP key (ES256) for the DPoP scenarios, else None."""
    if scenario not in DPOP_SCENARIOS:
        return None
    from mcpkit.ext.auth.client.dpop import DPoPKey

    return DPoPKey()


async def run(url: str, scenario: str, context: JSON) -> None:
    steps = SCENARIOS.get(scenario)
    if steps is None:
        steps = auth_flow if scenario.startswith("auth/") else list_only
    auth = auth_for(scenario, context)
    async with Client(
        url,
        client_info={"name": "mcpkit-conformance-client", "version": "1.0.0"},
        sampling=sample,
        elicitation=elicit,
        roots=[{"uri": "file:///tmp/mcpkit-conformance", "name": "conformance"}],
        # auth/*: the login runs inside the first request (the probe), so the probe gets no
        # bound of its own (every auth mock answers it); entering stays bounded by
        # timeout_s, under the harness's 30 s.
        timeout_s=28.0 if auth is not None else 20.0,
        probe_timeout_s=None if auth is not None else 10.0,
        auth=auth,
    ) as client:
        await steps(client, context)


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print("usage: client.py <server-url>", file=sys.stderr)
        return 2
    logging.basicConfig(level=os.environ.get("MCPKIT_LOG", "WARNING"), stream=sys.stderr)
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    raw = os.environ.get("MCP_CONFORMANCE_CONTEXT")
    context: JSON = json.loads(raw) if raw else {}
    try:
        anyio.run(run, argv[-1], scenario, context)
    except Exception as exc:
        print(f"conformance client: scenario {scenario!r} failed: {exc!r}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
