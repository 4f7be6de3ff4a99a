"""Listing and access agree (issue 25 §6): ``hide_unauthorized`` lists exactly what the
scope rules let the caller use, for every rule shape (exact, URI template, method-wide)
and every kind of item (tools, prompts, resources, resource templates).

The property test drives the real endpoint in process (the ASGI app ``protect()``
builds, through httpx2's ASGI transport) with real JWTs signed by the development
authorization server and checked by the real :class:`JWTValidator`.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncGenerator, AsyncIterator, Iterator
from typing import Any

import anyio
import httpx2
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rs_helpers import DevIssuer, challenges, modern_call, modern_headers

from mcpkit.client import Client
from mcpkit.client.memory import MemoryTransport
from mcpkit.ext.auth.server import (
    AuthSettings,
    JWTValidator,
    StaticTokenValidator,
    protect,
)
from mcpkit.server import Server
from mcpkit.server.uritemplates import TemplateMatcher

pytestmark = pytest.mark.anyio

URL = "http://127.0.0.1/mcp"  # in process: never bound, only the token audience
TOOLS = ("t0", "t1", "t2")
PROMPTS = ("p0", "p1")
STATIC = ("file:///hr/salaries", "file:///hr/a", "file:///docs/x", "file:///readme")
TEMPLATES = ("file:///hr/{name}", "file:///docs/{name}", "file:///{dept}/{name}", "x:///{+path}")
RULE_TEMPLATES = (
    "file:///hr/{name}",
    "file:///hr/{id}",
    "file:///{d}/{n}",
    "file:///docs/{x}",
    "x:///{+p}",
    "x:///a/{b}",
)
METHODS = ("tools/call", "prompts/get", "resources/read", "resources/subscribe")
SCOPES = ("a", "b", "c")
LISTS = {
    "tools": ("tools/list", "tools", "name"),
    "prompts": ("prompts/list", "prompts", "name"),
    "resources": ("resources/list", "resources", "uri"),
    "resourceTemplates": ("resources/templates/list", "resourceTemplates", "uriTemplate"),
}


def catalogue() -> Server:
    """Every kind of item, each with a name and a description that must not leak."""
    server = Server("catalogue")
    for name in TOOLS:
        server.add_tool(lambda: "ok", name=name, description=f"tool {name}")
    for name in PROMPTS:
        server.add_prompt(lambda: "ok", name=name, description=f"prompt {name}")
    for i, uri in enumerate(STATIC):
        server.add_resource(lambda: "static", uri, name=f"r{i}", description=f"about {uri}")
    readers = (lambda name: name, lambda name: name, lambda dept, name: name, lambda path: path)
    for i, (template, read) in enumerate(zip(TEMPLATES, readers, strict=True)):
        server.add_resource(read, template, name=f"rt{i}", description=template)

    @server.completion(prompt="p0")
    def topics(argument: Any, value: Any, context: Any) -> list[str]:  # pyright: ignore[reportUnusedFunction]
        return ["mergers"]

    @server.completion(resource="file:///hr/{name}")
    def names(argument: Any, value: Any, context: Any) -> list[str]:  # pyright: ignore[reportUnusedFunction]
        return ["salaries"]

    return server


def _scopes() -> st.SearchStrategy[tuple[str, ...]]:
    return st.lists(st.sampled_from(SCOPES), max_size=2, unique=True).map(tuple)


_TARGET = st.one_of(
    st.tuples(st.just("tool"), st.sampled_from(TOOLS)),
    st.tuples(st.just("prompt"), st.sampled_from(PROMPTS)),
    st.tuples(st.just("resource"), st.sampled_from(STATIC)),  # exact
    st.tuples(st.just("resource"), st.sampled_from(RULE_TEMPLATES)),  # template
    st.tuples(st.just("method"), st.sampled_from(METHODS)),  # method-wide
)
RULE = st.tuples(_TARGET, _scopes(), _scopes()).filter(lambda r: bool(r[1] or r[2]))
VALUE = st.text(alphabet="abcxyz0-._~/ %é", min_size=1, max_size=12)


class Endpoint:
    """One protected catalogue served in process, called on 2026-07-28 (no session)."""

    def __init__(self, http: httpx2.AsyncClient, token: str) -> None:
        self.http = http
        self.token = token

    async def post(self, method: str, params: dict[str, Any], name: str | None = None) -> Any:
        return await self.http.post(
            URL,
            json=modern_call(1, method, params),
            headers=modern_headers(method, name, self.token),
        )

    async def listed(self, kind: str) -> dict[str, dict[str, Any]]:
        method, field, key = LISTS[kind]
        r = await self.post(method, {})
        assert r.status_code == 200, r.text
        return {item[key]: item for item in r.json()["result"][field]}

    async def usable(self, method: str, params: dict[str, Any], name: str) -> bool:
        r = await self.post(method, params, name)
        if r.status_code == 403:
            assert challenges(r)[0][1]["error"] == "insufficient_scope"
            return False
        assert r.status_code == 200, r.text
        assert "result" in r.json(), r.text
        return True


@contextlib.asynccontextmanager
async def endpoint(
    validator: JWTValidator, issuer: DevIssuer, rules: list[Any], scopes: tuple[str, ...]
) -> AsyncGenerator[Endpoint]:
    server = catalogue()
    auth = protect(
        server,
        AuthSettings(
            server_url=URL,
            authorization_servers=[issuer.url],
            required_scopes=["mcp"],
            hide_unauthorized=True,
        ),
        validator=validator,
    )
    for (kind, target), all_of, any_of in rules:
        auth.require(**{kind: target}, all_of=all_of, any_of=any_of)
    token = issuer.mint(aud=URL, scope=" ".join(("mcp", *scopes)))
    app = server.http_app("/mcp")
    transport = httpx2.ASGITransport(app=app)
    async with httpx2.AsyncClient(transport=transport, base_url="http://127.0.0.1") as http:
        yield Endpoint(http, token)


@pytest.fixture
async def validator(issuer: DevIssuer) -> AsyncIterator[JWTValidator]:
    v = JWTValidator(issuer=issuer.url, jwks_url=issuer.jwks_url, audience=[URL])
    yield v
    await v.aclose()


def _template_uris(template: str, values: list[str]) -> Iterator[str]:
    matcher = TemplateMatcher(template)
    for value in values:
        uri = matcher.expand(dict.fromkeys(matcher.variable_names, value))
        if matcher.match(uri) is not None:  # a URI this template serves
            yield uri


@settings(  # reproducible, and nothing written into the tree (as tests/fuzz does)
    max_examples=40,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    rules=st.lists(RULE, max_size=4),
    scopes=_scopes(),
    values=st.lists(VALUE, min_size=1, max_size=3),
)
async def test_what_is_listed_is_usable_and_what_is_refused_is_not_listed(
    issuer: DevIssuer,
    validator: JWTValidator,
    rules: list[Any],
    scopes: tuple[str, ...],
    values: list[str],
) -> None:
    async with endpoint(validator, issuer, rules, scopes) as ep:
        tools = await ep.listed("tools")
        for name in TOOLS:
            usable = await ep.usable("tools/call", {"name": name, "arguments": {}}, name)
            assert (name in tools) == usable, (name, rules, scopes)
        prompts = await ep.listed("prompts")
        for name in PROMPTS:
            usable = await ep.usable("prompts/get", {"name": name, "arguments": {}}, name)
            assert (name in prompts) == usable, (name, rules, scopes)
        resources = await ep.listed("resources")
        for uri in STATIC:
            usable = await ep.usable("resources/read", {"uri": uri}, uri)
            assert (uri in resources) == usable, (uri, rules, scopes)
        templates = await ep.listed("resourceTemplates")
        for template in TEMPLATES:
            probes = ["p", "mcpkit-probe." * 24, *values]
            reads = [
                await ep.usable("resources/read", {"uri": uri}, uri)
                for uri in _template_uris(template, probes)
            ]
            if template in templates:  # listed: some URI it serves is readable
                assert any(reads), (template, rules, scopes)
            else:  # hidden: every URI it serves is refused
                assert not any(reads), (template, rules, scopes, values)


async def test_a_resource_under_a_template_rule_is_not_listed(
    issuer: DevIssuer, validator: JWTValidator
) -> None:
    """The issue's instance: the list filter compared exact URIs only, so with a rule on
    ``file:///hr/{name}`` the resource ``file:///hr/salaries`` stayed listed, with its
    name and description, while reading it was 403."""
    rule = [(("resource", "file:///hr/{name}"), ("hr",), ())]
    async with endpoint(validator, issuer, rule, ()) as ep:
        resources = await ep.listed("resources")
        templates = await ep.listed("resourceTemplates")
        assert "file:///hr/salaries" not in resources
        assert "file:///hr/a" not in resources
        assert "file:///docs/x" in resources
        assert "file:///hr/{name}" not in templates
        assert "file:///{dept}/{name}" in templates  # covered in part: still listed
        body = (await ep.post("resources/list", {})).text
        assert "salaries" not in body
        assert not await ep.usable(
            "resources/read", {"uri": "file:///hr/salaries"}, "file:///hr/salaries"
        )
    async with endpoint(validator, issuer, rule, ("a",)) as ep:
        assert "file:///hr/salaries" not in await ep.listed("resources")
    async with endpoint(validator, issuer, rule, ()) as ep:
        ep.token = issuer.mint(aud=URL, scope="mcp hr")
        assert "file:///hr/salaries" in await ep.listed("resources")
        assert "file:///hr/{name}" in await ep.listed("resourceTemplates")


async def test_a_method_wide_rule_hides_what_that_method_uses(
    issuer: DevIssuer, validator: JWTValidator
) -> None:
    """A rule on ``tools/call`` refused every call while ``tools/list`` showed them all."""
    rule = [(("method", "tools/call"), ("run",), ())]
    async with endpoint(validator, issuer, rule, ()) as ep:
        assert await ep.listed("tools") == {}
        assert len(await ep.listed("prompts")) == len(PROMPTS)
        assert not await ep.usable("tools/call", {"name": "t0", "arguments": {}}, "t0")


@pytest.mark.parametrize("era", ["legacy", "modern"])
async def test_without_http_nothing_is_hidden_as_nothing_is_refused(era: Any) -> None:
    """Over stdio and in memory no scope rule applies (``protect`` rule 2), yet
    ``hide_unauthorized`` hid the tools a rule named, which made them unknown there."""
    server = catalogue()
    auth = protect(
        server,
        AuthSettings(server_url=URL, required_scopes=["mcp"], hide_unauthorized=True),
        validator=StaticTokenValidator({}),
    )
    auth.require(tool="t0", all_of=["admin"])
    auth.require(resource="file:///hr/{name}", all_of=["hr"])
    async with Client(MemoryTransport(server), mode=era) as client:
        tools = [t.name for t in await client.list_tools()]
        result = await client.call_tool("t0", {})
        resources = [r.uri for r in await client.list_resources()]
    assert "t0" in tools
    assert result.content[0].text == "ok"  # type: ignore[union-attr]
    assert "file:///hr/salaries" in resources


async def test_listen_needs_the_subscribe_rule_of_each_uri(
    issuer: DevIssuer, validator: JWTValidator
) -> None:
    """``subscriptions/listen`` honoured a ``resourceSubscriptions`` URI that
    ``resources/subscribe`` refuses (403), so a caller without the scopes learnt of every
    change to the resource. Listing filters nothing here (no ``hide_unauthorized``
    needed): the guard now holds listen to the subscribe rule."""
    rule = [(("resource", "file:///hr/{name}"), ("hr",), ())]
    listen = {"notifications": {"resourceSubscriptions": ["file:///docs/x", "file:///hr/a"]}}
    async with endpoint(validator, issuer, rule, ()) as ep:
        with anyio.fail_after(20):  # before, the stream opened and never ended
            r = await ep.post("subscriptions/listen", listen)
        assert r.status_code == 403, r.text
        assert challenges(r)[0][1]["scope"] == "mcp hr"


@pytest.mark.parametrize("rule_template", ["file:///hr/{name}", "file:///hr/{id}", "file:///{+p}"])
async def test_completing_a_hidden_template_is_refused_whatever_the_rule_names_its_variables(
    issuer: DevIssuer, validator: JWTValidator, rule_template: str
) -> None:
    """``completion/complete`` on ``ref/resource`` looked the template up as a URI: a
    rule spelled ``file:///hr/{id}`` (or ``{+p}``) hid the server's ``file:///hr/{name}``
    from the list, yet completing its arguments answered the values (here the file
    names under /hr/) to a caller without the scope."""
    rule = [(("resource", rule_template), ("hr",), ())]
    params = {
        "ref": {"type": "ref/resource", "uri": "file:///hr/{name}"},
        "argument": {"name": "name", "value": "s"},
    }
    async with endpoint(validator, issuer, rule, ()) as ep:
        assert "file:///hr/{name}" not in await ep.listed("resourceTemplates")
        r = await ep.post("completion/complete", params)
        assert r.status_code == 403, r.text
        assert challenges(r)[0][1]["scope"] == "mcp hr"
        assert "salaries" not in r.text
    async with endpoint(validator, issuer, rule, ("hr",)) as ep:
        assert "file:///hr/{name}" in await ep.listed("resourceTemplates")
        r = await ep.post("completion/complete", params)
        assert r.status_code == 200, r.text
        assert r.json()["result"]["completion"]["values"] == ["salaries"]


@pytest.mark.parametrize(
    ("method", "ref", "value"),
    [
        ("prompts/get", {"type": "ref/prompt", "name": "p0"}, "mergers"),
        ("resources/read", {"type": "ref/resource", "uri": "file:///hr/{name}"}, "salaries"),
    ],
)
async def test_a_method_wide_rule_refuses_completing_what_it_hides(
    issuer: DevIssuer, validator: JWTValidator, method: str, ref: dict[str, str], value: str
) -> None:
    """A method-wide rule on ``prompts/get`` (or ``resources/read``) hid every prompt
    (template) from the list, yet ``completion/complete`` on one answered its values."""
    rule = [(("method", method), ("x",), ())]
    params = {"ref": ref, "argument": {"name": "name", "value": ""}}
    async with endpoint(validator, issuer, rule, ()) as ep:
        r = await ep.post("completion/complete", params)
        assert r.status_code == 403, r.text
        assert challenges(r)[0][1]["scope"] == "mcp x"
        assert value not in r.text
    async with endpoint(validator, issuer, rule, ("x",)) as ep:
        r = await ep.post("completion/complete", params)
        assert r.json()["result"]["completion"]["values"] == [value], r.text


def test_the_probe_cache_is_bounded_in_entries_and_bytes() -> None:
    """Listed templates may come from a proxied upstream: what the policy keeps of them
    is bounded by count and by each template's length."""
    server = catalogue()
    auth = protect(
        server,
        AuthSettings(server_url=URL, hide_unauthorized=True),
        validator=StaticTokenValidator({}),
    )
    auth.require(resource="x:///{+p}", all_of=["x"])
    policy = auth.policy
    long = "x:///" + "a" * 100_000 + "{v}"
    assert not policy.permits(frozenset(), "resources/read", "resourceTemplates", long)
    for i in range(1_000):
        template = f"x:///{i}/{{v}}"
        assert not policy.permits(frozenset(), "resources/read", "resourceTemplates", template)
        assert policy.permits(frozenset({"x"}), "resources/read", "resourceTemplates", template)
    kept = policy._probes  # pyright: ignore[reportPrivateUsage]
    assert len(kept) <= 256
    assert sum(len(t) + sum(map(len, uris)) for t, uris in kept.items()) < 256 * 3 * 2048
    assert long not in kept
