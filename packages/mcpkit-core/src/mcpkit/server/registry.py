"""Registering tools, prompts, resources and completions on a server
(:mod:`mcpkit.server.app` rules 2, 5 and 10).

Rules:
1. Registering a name twice replaces the earlier entry; every change of the tools,
   prompts or resources publishes the matching ``list_changed`` notification.
2. Registration forms are checked when the decorator runs (:mod:`mcpkit.server.forms`);
   the options go through the server's :class:`~mcpkit.server.options.OptionRegistry`.
3. :class:`Registrations` holds the registries only; the server
   (:class:`~mcpkit.server.base.ServerBase`) creates them.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any, Literal, TypeVar, overload

from mcpkit.core.shapes import JSON
from mcpkit.server.completions import Completer
from mcpkit.server.forms import RESOURCE_FORM, check_callable, decorate, resource_uri
from mcpkit.server.hub import LIST_CHANGED, Change, NotificationHub
from mcpkit.server.options import OptionRegistry
from mcpkit.server.prompts import Prompt, PromptOptions
from mcpkit.server.resources import Resource, ResourceOptions, ResourceTemplate
from mcpkit.server.tools import Tool, ToolOptions

if TYPE_CHECKING:
    from typing_extensions import Unpack

__all__ = ["Registrations"]

F = TypeVar("F", bound=Callable[..., Any])


class Registrations:
    """The tools, prompts, resources, templates and completions of a server, and the
    decorators that fill them (rules 1-3)."""

    tools: dict[str, Tool]
    prompts: dict[str, Prompt]
    resources: dict[str, Resource]
    templates: list[ResourceTemplate]
    completers: dict[tuple[str, str], Completer]
    options: OptionRegistry
    """Core's decorator options and the extensions' (``Server.add_options``)."""
    hub: NotificationHub
    _tool_defs: list[JSON] | None

    # -- registration: tools, prompts, resources, completions -------------------------
    @overload
    def tool(self, fn: F, /) -> F: ...
    @overload
    def tool(
        self, name: str | None = None, /, **options: Unpack[ToolOptions]
    ) -> Callable[[F], F]: ...
    @overload
    def tool(
        self, /, *, name: str | None = None, **options: Unpack[ToolOptions]
    ) -> Callable[[F], F]: ...
    def tool(
        self, target: Any = None, /, *extra: Any, name: str | None = None, **options: Any
    ) -> Any:
        """Register a typed tool: ``@server.tool``, ``@server.tool()``,
        ``@server.tool("name", title=...)``. The options
        (:class:`~mcpkit.server.tools.ToolOptions`): ``title``, ``description``,
        ``annotations``, ``icons``, ``meta``, ``input_schema``, ``output_schema``,
        ``structured_output``, ``execution``, ``extra``. Returns the function unchanged.
        A wrong form raises ``TypeError`` (rule 10)."""
        return decorate(
            "tool", target, extra, name, lambda fn, n: self.add_tool(fn, name=n, **options)
        )

    def add_tool(
        self, fn: Callable[..., Any], *, name: str | None = None, **options: Unpack[ToolOptions]
    ) -> Tool:
        """Register ``fn`` as a tool (the options of :meth:`tool`); returns the ``Tool``."""
        tool: Tool = self.options.register("tool", fn, name, options, partial(Tool, fn))
        self.tools[tool.name] = tool
        self._tool_defs = None
        self.notify_list_changed("tools")
        return tool

    def remove_tool(self, name: str) -> None:
        if self.tools.pop(name, None) is not None:
            self._tool_defs = None
            self.notify_list_changed("tools")

    def tool_definitions(self) -> list[JSON]:
        if self._tool_defs is None:
            self._tool_defs = [t.definition for t in self.tools.values()]
        return self._tool_defs

    @overload
    def prompt(self, fn: F, /) -> F: ...
    @overload
    def prompt(
        self, name: str | None = None, /, **options: Unpack[PromptOptions]
    ) -> Callable[[F], F]: ...
    @overload
    def prompt(
        self, /, *, name: str | None = None, **options: Unpack[PromptOptions]
    ) -> Callable[[F], F]: ...
    def prompt(
        self, target: Any = None, /, *extra: Any, name: str | None = None, **options: Any
    ) -> Any:
        """Register a prompt: ``@server.prompt``, ``@server.prompt()``,
        ``@server.prompt("name", title=...)``. The options
        (:class:`~mcpkit.server.prompts.PromptOptions`): ``title``, ``description``,
        ``arguments`` (explicit list), ``icons``, ``meta``. Returns the function
        unchanged; a wrong form raises ``TypeError`` (rule 10)."""
        return decorate(
            "prompt", target, extra, name, lambda fn, n: self.add_prompt(fn, name=n, **options)
        )

    def add_prompt(
        self, fn: Callable[..., Any], *, name: str | None = None, **options: Unpack[PromptOptions]
    ) -> Prompt:
        """Register ``fn`` as a prompt (the options of :meth:`prompt`)."""
        p: Prompt = self.options.register("prompt", fn, name, options, partial(Prompt, fn))
        self.prompts[p.name] = p
        self.notify_list_changed("prompts")
        return p

    def remove_prompt(self, name: str) -> None:
        if self.prompts.pop(name, None) is not None:
            self.notify_list_changed("prompts")

    @overload
    def resource(
        self, uri: str, /, *, name: str | None = None, **options: Unpack[ResourceOptions]
    ) -> Callable[[F], F]: ...
    @overload
    def resource(
        self, *, uri: str, name: str | None = None, **options: Unpack[ResourceOptions]
    ) -> Callable[[F], F]: ...
    def resource(
        self, *args: Any, uri: str | None = None, name: str | None = None, **options: Any
    ) -> Any:
        """Register a resource at ``uri``, or a resource template when ``uri`` contains an
        RFC 6570 expression (``{id}``): ``@server.resource("file:///notes",
        mime_type=...)``. The options (:class:`~mcpkit.server.resources.ResourceOptions`):
        ``title``, ``description``, ``mime_type``, ``size`` (static only),
        ``annotations``, ``icons``, ``meta``. The URI is required: a bare
        ``@server.resource`` raises ``TypeError`` (rule 10)."""
        at = resource_uri(args, uri)

        def register(fn: F) -> F:
            check_callable("resource", fn, RESOURCE_FORM)
            self.add_resource(fn, at, name=name, **options)
            return fn

        return register

    def add_resource(
        self,
        fn: Callable[..., Any],
        uri: str,
        *,
        name: str | None = None,
        **options: Unpack[ResourceOptions],
    ) -> Resource | ResourceTemplate:
        """Register ``fn`` as the reader of ``uri`` (a template when ``uri`` holds an
        RFC 6570 expression); the options of :meth:`resource`."""
        if "{" in uri:
            options.pop("size", None)
            make: Any = partial(ResourceTemplate, fn, uri_template=uri)
        else:
            make = partial(Resource, fn, uri=uri)
        added: Resource | ResourceTemplate = self.options.register(
            "resource", fn, name, options, make, uri
        )
        if isinstance(added, ResourceTemplate):
            self.templates = [t for t in self.templates if t.matcher.template != uri]
            self.templates.append(added)
        else:
            self.resources[uri] = added
        self.notify_list_changed("resources")
        return added

    def remove_resource(self, uri: str) -> None:
        before = len(self.resources) + len(self.templates)
        self.resources.pop(uri, None)
        self.templates = [t for t in self.templates if t.matcher.template != uri]
        if len(self.resources) + len(self.templates) != before:
            self.notify_list_changed("resources")

    @overload
    def completion(self, *, prompt: str) -> Callable[[F], F]: ...
    @overload
    def completion(self, *, resource: str) -> Callable[[F], F]: ...
    def completion(
        self, *args: Any, prompt: str | None = None, resource: str | None = None
    ) -> Callable[[F], F]:
        """Decorator registering ``fn(argument, value, context) -> list[str]`` as the
        completion handler for a prompt's or a resource template's arguments (T3):
        ``@server.completion(prompt="name")`` or ``@server.completion(resource="uri")``.
        Any other form raises ``TypeError`` (rule 10)."""
        form = '@server.completion(prompt="name") or @server.completion(resource="uri")'
        if args or (prompt is None) == (resource is None):
            raise TypeError(f"server.completion needs exactly one of prompt= or resource=: {form}")
        key = ("ref/prompt", prompt) if prompt is not None else ("ref/resource", resource or "")

        def register(fn: F) -> F:
            check_callable("completion", fn, form)
            self.completers[key] = Completer(fn)
            return fn

        return register

    # -- notifications ---------------------------------------------------------------
    def notify_list_changed(self, kind: Literal["tools", "prompts", "resources"]) -> None:
        """Publish ``notifications/<kind>/list_changed`` to every listener."""
        if self.hub is not None:  # pyright: ignore[reportUnnecessaryComparison] - during __init__
            self.hub.publish(Change(LIST_CHANGED[kind]))

    def notify_resource_updated(self, uri: str) -> None:
        """Publish ``notifications/resources/updated`` for ``uri`` to its subscribers."""
        self.hub.publish(Change("notifications/resources/updated", uri, {"uri": uri}))
