"""Typed handler APIs on the server (issue 13 §2): ``ctx.elicit(message, Model)`` with a
pydantic model, a dataclass or a TypedDict; ``ctx.sample()`` and ``ctx.list_roots()``
returning models that still read like the dicts they were. Every round trip runs on
both eras against a real mcpkit server and client in memory: the handshake era sends a
live ``elicitation/create``, 2026-07-28 an MRTR input request."""

from __future__ import annotations

import dataclasses
import datetime
import enum
from typing import Any, Literal

import pytest
from pydantic import AnyUrl, BaseModel, Field
from typing_extensions import TypedDict

from mcpkit.client import Client
from mcpkit.core.forms import Elicited, form_schema
from mcpkit.core.jsonrpc import INVALID_PARAMS, JSONRPCError
from mcpkit.core.types import (
    CreateMessageRequestParams,
    CreateMessageResult,
    ElicitRequestedSchema,
    ElicitRequestFormParams,
    ElicitResult,
    Root,
    TextContent,
)
from mcpkit.server import Server
from mcpkit.server.context import Context

pytestmark = pytest.mark.anyio
JSON = dict[str, Any]
MODES = ["legacy", "modern"]


class Seat(enum.Enum):
    WINDOW = "window"
    AISLE = "aisle"


class Booking(BaseModel):
    name: str = Field(min_length=1, max_length=40, description="Who books")
    party: int = Field(2, ge=1, le=12)
    day: datetime.date
    at: datetime.datetime | None = None
    site: AnyUrl | None = None
    seat: Seat = Seat.WINDOW
    size: Literal["s", "m", "l"] = "m"
    extras: list[Literal["cake", "wine"]] = Field(default_factory=list, max_length=2)
    vip: bool = False
    rating: float = Field(3.0, ge=0, le=5)


@dataclasses.dataclass
class Contact:
    email: str
    newsletter: bool = True


class Survey(TypedDict):
    score: int
    comment: str


def test_form_schema_of_a_model_is_the_restricted_vocabulary() -> None:
    schema = form_schema(Booking)
    ElicitRequestedSchema.model_validate(schema)  # the spec's own shape
    props = schema["properties"]
    assert schema["required"] == ["name", "day"]
    assert props["name"] == {
        "description": "Who books",
        "maxLength": 40,
        "minLength": 1,
        "title": "Name",
        "type": "string",
    }
    assert props["party"] | {} == {
        "default": 2,
        "minimum": 1,
        "maximum": 12,
        "title": "Party",
        "type": "integer",
    }
    assert props["day"]["format"] == "date"
    assert props["at"] == {"format": "date-time", "type": "string", "title": "At"}
    assert props["site"]["format"] == "uri"
    assert props["seat"]["enum"] == ["window", "aisle"]
    assert props["seat"]["default"] == "window"
    assert props["size"]["enum"] == ["s", "m", "l"]
    assert props["extras"] == {
        "items": {"type": "string", "enum": ["cake", "wine"]},
        "maxItems": 2,
        "title": "Extras",
        "type": "array",
    }
    assert props["vip"] == {"default": False, "title": "Vip", "type": "boolean"}
    assert props["rating"]["type"] == "number"


def test_form_schema_of_dataclass_and_typeddict() -> None:
    assert form_schema(Contact) == {
        "type": "object",
        "properties": {
            "email": {"title": "Email", "type": "string"},
            "newsletter": {"default": True, "title": "Newsletter", "type": "boolean"},
        },
        "required": ["email"],
    }
    assert form_schema(Survey)["required"] == ["score", "comment"]


def test_titled_choices_pass_through() -> None:
    class Pick(BaseModel):
        tier: Literal["a", "b"] = Field(
            json_schema_extra={
                "oneOf": [{"const": "a", "title": "Gold"}, {"const": "b", "title": "Silver"}]
            }
        )

    prop = form_schema(Pick)["properties"]["tier"]
    assert prop["oneOf"] == [{"const": "a", "title": "Gold"}, {"const": "b", "title": "Silver"}]
    assert "enum" not in prop
    ElicitRequestedSchema.model_validate(form_schema(Pick))


@dataclasses.dataclass
class Inner:
    x: int


class Nested(BaseModel):
    inner: Inner


class Union_(BaseModel):
    value: int | str


class Numbers(BaseModel):
    values: list[int]


class Strict(BaseModel):
    n: int = Field(gt=0)


class Patterned(BaseModel):
    code: str = Field(pattern="^[A-Z]+$")


class Mapped(BaseModel):
    tags: dict[str, str]


class IntChoices(BaseModel):
    level: Literal[1, 2]


@pytest.mark.parametrize(
    ("model", "field", "why"),
    [
        (Nested, "inner", "a nested object"),
        (Union_, "value", "a union other than `X | None`"),
        (Numbers, "values", "a list of something other than string choices"),
        (Strict, "n", "exclusiveMinimum"),
        (Patterned, "code", "'pattern'"),
        (Mapped, "tags", "a nested object"),
        (IntChoices, "level", "an enum whose values are not all strings"),
    ],
)
def test_inexpressible_models_are_refused_naming_the_field(
    model: type[Any], field: str, why: str
) -> None:
    with pytest.raises(TypeError) as err:
        form_schema(model)
    assert f"{model.__name__}.{field}:" in str(err.value)
    assert why in str(err.value)


def test_a_non_form_type_is_refused() -> None:
    with pytest.raises(TypeError, match="pydantic model, a dataclass, a TypedDict"):
        form_schema(int)


def build() -> tuple[Server, list[JSON]]:
    server = Server("typed")
    sent: list[JSON] = []

    @server.tool()
    async def book(ctx: Context) -> str:
        answer = await ctx.elicit("Book a table", Booking, key="booking")
        assert isinstance(answer, Elicited)
        if answer.data is None:
            return f"{answer.action}: nothing"
        b = answer.data
        assert isinstance(b, Booking)
        assert isinstance(b.day, datetime.date)
        assert isinstance(b.seat, Seat)
        return (
            f"{answer.action}: {b.name} x{b.party} on {b.day.isoformat()} {b.seat.value} {b.extras}"
        )

    @server.tool()
    async def contact(ctx: Context) -> str:
        answer = await ctx.elicit("Contact?", Contact)
        assert answer.data is None or isinstance(answer.data, Contact)
        return repr(answer.data)

    @server.tool()
    async def survey(ctx: Context) -> str:
        answer = await ctx.elicit("How was it?", Survey)
        return repr(answer.data)

    @server.tool()
    async def nested(ctx: Context) -> str:
        await ctx.elicit("never sent", Nested)
        return "unreachable"

    @server.tool()
    async def think(ctx: Context) -> str:
        result = await ctx.sample("2+2?", max_tokens=5, system_prompt="be brief", temperature=0.5)
        assert isinstance(result, CreateMessageResult)
        legacy_read = result["content"]["text"]  # dict callers keep working
        return f"{result.text}|{legacy_read}|{result.get('model')}|{'model' in result}"

    @server.tool()
    async def roots(ctx: Context) -> str:
        found = await ctx.list_roots()
        assert all(isinstance(r, Root) for r in found)
        return ";".join(f"{r.uri}={r.name}/{r['uri']}/{r.get('name')}" for r in found)

    async def record(ctx: Context, *, call_next: Any) -> JSON:
        sent.append(dict(ctx.params))
        return await call_next(ctx)

    server.add_middleware(record)
    return server, sent


def elicitor(content: JSON | None, action: str = "accept", seen: list[Any] | None = None) -> Any:
    async def answer(params: ElicitRequestFormParams) -> ElicitResult:
        if seen is not None:
            seen.append(params)
        return ElicitResult(action=action, content=content)  # type: ignore[arg-type]

    return answer


@pytest.mark.parametrize("mode", MODES)
async def test_typed_elicit_accept_returns_the_model(mode: str) -> None:
    server, _ = build()
    seen: list[ElicitRequestFormParams] = []
    content = {"name": "Ada", "day": "2026-07-28", "seat": "aisle", "extras": ["cake"]}
    async with Client(server, mode=mode, elicitation=elicitor(content, seen=seen)) as client:  # type: ignore[arg-type]
        result = await client.call_tool("book")
    assert result.is_error is not True, result
    # SEP-1034: the client fills the defaults, the model sees them
    assert result.content[0].text == "accept: Ada x2 on 2026-07-28 aisle ['cake']"  # type: ignore[union-attr]
    sent = seen[0].requested_schema.model_dump(by_alias=True, exclude_none=True)
    assert sent["required"] == ["name", "day"]
    assert set(sent["properties"]) == set(Booking.model_fields)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("action", ["decline", "cancel"])
async def test_typed_elicit_decline_and_cancel_have_no_data(mode: str, action: str) -> None:
    server, _ = build()
    async with Client(server, mode=mode, elicitation=elicitor(None, action)) as client:
        result = await client.call_tool("book")
    assert result.content[0].text == f"{action}: nothing"  # type: ignore[union-attr]


@pytest.mark.parametrize("mode", MODES)
async def test_typed_elicit_dataclass_and_typeddict(mode: str) -> None:
    server, _ = build()
    async with Client(server, mode=mode, elicitation=elicitor({"email": "a@b.c"})) as client:
        result = await client.call_tool("contact")
        assert result.content[0].text == "Contact(email='a@b.c', newsletter=True)"  # type: ignore[union-attr]
    answer = {"score": 4, "comment": "fine"}
    async with Client(server, mode=mode, elicitation=elicitor(answer)) as client:
        result = await client.call_tool("survey")
        assert result.content[0].text == "{'score': 4, 'comment': 'fine'}"  # type: ignore[union-attr]


@pytest.mark.parametrize("mode", MODES)
async def test_typed_elicit_answer_the_model_rejects_is_the_invalid_answer_error(
    mode: str,
) -> None:
    """The schema cannot say "a real calendar date": 2026-02-30 passes JSON Schema
    (``format`` is not asserted) but not the model. That is the same error path as any
    invalid answer (InputResponseError, -32602)."""
    server, _ = build()
    content = {"name": "Ada", "day": "2026-02-30"}
    async with Client(server, mode=mode, elicitation=elicitor(content)) as client:
        if mode == "legacy":
            result = await client.call_tool("book")
            assert result.is_error is True
            text = result.content[0].text  # type: ignore[union-attr]
        else:
            with pytest.raises(JSONRPCError) as err:
                await client.call_tool("book")
            assert err.value.code == INVALID_PARAMS
            assert err.value.data["inputKey"] == "booking"  # type: ignore[index]
            text = err.value.message
    assert "content.day:" in text
    assert "elicitation/create" in text


@pytest.mark.parametrize("mode", MODES)
async def test_an_inexpressible_model_fails_before_anything_is_sent(
    mode: str, caplog: pytest.LogCaptureFixture
) -> None:
    """The TypeError is the server author's bug: the operator's log names the field, the
    client gets the generic error with its id (server errors rule: no exception text)."""
    server, _ = build()
    seen: list[Any] = []
    with caplog.at_level("ERROR", logger="mcpkit.server"):
        async with Client(server, mode=mode, elicitation=elicitor({}, seen=seen)) as client:
            result = await client.call_tool("nested")
    assert result.is_error is True
    assert "error id" in result.content[0].text  # type: ignore[union-attr]
    assert "Nested.inner: a nested object" in caplog.text
    assert seen == []


@pytest.mark.parametrize("mode", MODES)
async def test_sample_returns_a_model_that_still_reads_like_a_dict(mode: str) -> None:
    server, _ = build()
    got: list[CreateMessageRequestParams] = []

    async def sample(params: CreateMessageRequestParams) -> CreateMessageResult:
        got.append(params)
        return CreateMessageResult(role="assistant", content=TextContent(text="4"), model="m1")

    async with Client(server, mode=mode, sampling=sample) as client:
        result = await client.call_tool("think")
    assert result.content[0].text == "4|4|m1|True"  # type: ignore[union-attr]
    params = got[0]
    assert params.system_prompt == "be brief"
    assert params.temperature == 0.5
    assert params.messages[0].role == "user"
    assert params.messages[0].content == TextContent(text="2+2?")


@pytest.mark.parametrize("mode", MODES)
async def test_list_roots_returns_root_models(mode: str) -> None:
    server, _ = build()
    roots = [Root(uri="file:///a", name="A"), "file:///b"]
    async with Client(server, mode=mode, roots=roots) as client:
        result = await client.call_tool("roots")
    assert result.content[0].text == "file:///a=A/file:///a/A;file:///b=None/file:///b/None"  # type: ignore[union-attr]


def test_create_message_text_of_block_lists() -> None:
    from mcpkit.core.types import ImageContent

    both = CreateMessageResult(
        role="assistant",
        content=[
            TextContent(text="a"),
            ImageContent(data="AA==", mime_type="image/png"),
            TextContent(text="b"),
        ],
        model="m",
    )
    assert both.text == "a\nb"
    image_only = CreateMessageResult(
        role="assistant", content=ImageContent(data="AA==", mime_type="image/png"), model="m"
    )
    assert image_only.text is None
    assert "stopReason" not in image_only
    with pytest.raises(KeyError):
        image_only["stopReason"]
