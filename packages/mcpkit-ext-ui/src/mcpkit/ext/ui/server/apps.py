"""``AppsExtension``: MCP Apps on an mcpkit server in one object.

Spec: ``apps-2026-01-26.mdx`` (SEP-1865): §Extension Identifier, §UI Resource Format,
§Resource Discovery, §Graceful Degradation.

Rules:
1. ``AppsExtension(server)`` installs, once per server: the ``io.modelcontextprotocol/ui``
   capability entry (spec version and stability; :mod:`.capability` rule 3), the list
   filter of :mod:`.listing`, and the startup check of :mod:`.startup`.
2. :meth:`AppsExtension.tool` registers a core tool whose ``_meta`` holds ``ui``
   (``resourceUri``, ``visibility``) and, with a view, the deprecated flat
   ``ui/resourceUri`` (:class:`~.meta.UiToolMeta`), merged into any ``meta=`` given
   (the UI keys win). Its results always carry text (:mod:`.fallback`). Every other
   option is core's ``@server.tool`` option.
3. :meth:`AppsExtension.resource` registers a static ``ui://`` resource (URI checked,
   :mod:`.meta` rule 1) with MIME type ``text/html;profile=mcp-app``; its ``_meta.ui``
   (:class:`~.meta.UiResourceMeta`) is sent both on ``resources/list`` and on every
   ``resources/read`` contents entry. Exactly one source: ``html`` (a string, or a
   zero-argument function returning one, called on each read) or ``path`` (a
   single-file app, read on each read so edits show without a restart). Its options
   are checked at registration (:mod:`.resource_options`): ``csp``, ``permissions``,
   ``prefers_border``, ``domain``, and core's and installed extensions' resource
   options (``all_of_scopes``), each error naming the resource, the option, the
   allowed values and the closest.
4. Registration mistakes (a bad URI, a bad origin, a bad visibility, no or two
   sources, an ``html=`` function that needs arguments, a ``text=`` renderer that does
   not take the result alone: :func:`mcpkit.server.agreement.check_call_shape`) raise
   ``ValueError``/``TypeError`` at registration, never on a request; an app tool's
   error names the tool, and a misspelt option of :meth:`AppsExtension.tool` names it,
   the closest option and every option (its own, core's and the installed
   extensions'), not ``server.tool()`` with core's alone.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, Unpack, cast, overload

from mcpkit.core.extensions import Extension, Stability
from mcpkit.core.shapes import JSON
from mcpkit.ext.ui.server.capability import RESOURCE_MIME_TYPE, apps_extension
from mcpkit.ext.ui.server.fallback import TextRenderer, with_text_fallback
from mcpkit.ext.ui.server.html import read_app
from mcpkit.ext.ui.server.listing import app_list_filter
from mcpkit.ext.ui.server.meta import (
    ResourceCsp,
    ResourcePermissions,
    ToolVisibility,
    UiToolMeta,
    check_ui_uri,
)
from mcpkit.ext.ui.server.resource_options import OWN, resource_meta
from mcpkit.ext.ui.server.startup import view_rules, views_section
from mcpkit.server.agreement import check_call_shape
from mcpkit.server.forms import check_options, decorate, name_of
from mcpkit.server.inspection import add_inspect_source
from mcpkit.server.names import declare_rules
from mcpkit.server.tools import ToolOptions

if TYPE_CHECKING:
    from mcpkit.server.app import Server
    from mcpkit.server.resources import Resource
    from mcpkit.server.tools import Tool

__all__ = ["AppsExtension"]

F = TypeVar("F", bound=Callable[..., Any])
_INSTALLED = "_mcpkit_ext_ui_installed"
_WHERE = "AppsExtension.tool"
_OWN = dict.fromkeys(("resource_uri", "visibility", "text"), "AppsExtension.tool")
"""Rule 4: the decorator's own options, listed with core's in a misspelt option's error."""


class AppsExtension:
    """MCP Apps for ``server`` (rule 1); pass no server to install later with
    :meth:`install` (or hand it to ``Server(extensions=[...])`` for the capability
    alone). ``strict``: hide every UI tool from clients without MCP Apps
    (:mod:`.listing` rule 3; default lenient). ``stability``: advertised stability."""

    def __init__(
        self,
        server: Server | None = None,
        *,
        strict: bool = False,
        stability: Stability = Stability.STABLE,
    ) -> None:
        self.strict = strict
        self.stability = stability
        self._server: Server | None = None
        if server is not None:
            self.install(server)

    def extension(self) -> Extension:
        """The advertised ``capabilities.extensions`` entry (``ExtensionProvider``)."""
        return apps_extension(self.stability)

    @property
    def server(self) -> Server:
        """The server installed on; ``RuntimeError`` before :meth:`install`."""
        if self._server is None:
            raise RuntimeError(
                "AppsExtension is not installed: AppsExtension(server) or .install(server)"
            )
        return self._server

    def install(self, server: Server) -> None:
        """Rule 1: advertise, filter lists, check views at startup (once per server)."""
        self._server = server
        server.add_extension(self)
        if getattr(server, _INSTALLED, False):
            return
        setattr(server, _INSTALLED, True)
        server.add_list_filter(app_list_filter(strict=self.strict))
        declare_rules(server, partial(view_rules, server))  # startup rule 2
        add_inspect_source(server, views_section)  # mcpkit inspect (startup rule 3)

    # -- app tools -----------------------------------------------------------------
    @overload
    def tool(self, fn: F, /) -> F: ...
    @overload
    def tool(
        self,
        name: str | None = None,
        /,
        *,
        resource_uri: str | None = None,
        visibility: Sequence[ToolVisibility] = ("model", "app"),
        text: TextRenderer | None = None,
        **options: Unpack[ToolOptions],
    ) -> Callable[[F], F]: ...
    @overload
    def tool(
        self,
        /,
        *,
        name: str | None = None,
        resource_uri: str | None = None,
        visibility: Sequence[ToolVisibility] = ("model", "app"),
        text: TextRenderer | None = None,
        **options: Unpack[ToolOptions],
    ) -> Callable[[F], F]: ...
    def tool(
        self,
        target: Any = None,
        /,
        *extra: Any,
        name: str | None = None,
        resource_uri: str | None = None,
        visibility: Sequence[ToolVisibility] = ("model", "app"),
        text: TextRenderer | None = None,
        **options: Any,
    ) -> Any:
        """Register an app tool (rule 2): ``@ui.tool``, ``@ui.tool()``,
        ``@ui.tool("name", resource_uri="ui://chart/view", visibility=["model", "app"])``.
        ``resource_uri``: the ``ui://`` view rendering its results (None: none).
        ``visibility``: ``"model"`` and/or ``"app"`` (spec default both). ``text``:
        ``(return value) -> str``, the text hosts without MCP Apps show
        (:mod:`.fallback`). Other options: core's ``ToolOptions``. Returns the function
        unchanged; ``ValueError`` for a bad URI or visibility."""
        ui = {"resource_uri": resource_uri, "visibility": visibility, "text": text}
        return decorate(
            "tool",
            target,
            extra,
            name,
            lambda fn, n: self._add(fn, n, ui, options),
            "AppsExtension.tool",
        )

    def _add(self, fn: Callable[..., Any], name: str | None, ui: JSON, options: Any) -> Tool:
        """Rule 4: the decorator's options checked, naming it and the tool."""
        server = self.server
        check_options("tool", options, {**_OWN, **server.options.names("tool")}, _WHERE)
        tool_name = name_of("tool", fn, name)
        try:
            ui_meta = UiToolMeta(ui["resource_uri"], ui["visibility"])
        except ValueError as exc:
            raise ValueError(f"tool {tool_name!r}: {exc}") from None
        return self.add_tool(fn, name=tool_name, ui_meta=ui_meta, text=ui["text"], **options)

    def add_tool(
        self,
        fn: Callable[..., Any],
        *,
        name: str | None = None,
        ui_meta: UiToolMeta | None = None,
        text: TextRenderer | None = None,
        **options: Unpack[ToolOptions],
    ) -> Tool:
        """Register ``fn`` as an app tool described by ``ui_meta`` (default: no view,
        both visibilities); returns core's ``Tool`` (rule 2)."""
        names = self.server.options.names("tool")
        check_options("tool", options, names, "AppsExtension.add_tool")
        ui_meta = ui_meta if ui_meta is not None else UiToolMeta()
        tool_name = name_of("tool", fn, name)
        meta: JSON = dict(options.get("meta") or {})
        meta.update(ui_meta.to_meta())
        options["meta"] = meta
        if text is not None:  # rule 4
            check_call_shape(f"ui.tool({tool_name!r}, text=...)", text, ("result",))
        wrapper, attach = with_text_fallback(fn, tool_name, text)
        tool = self.server.add_tool(wrapper, name=tool_name, **options)
        attach(tool)
        return tool

    # -- UI resources --------------------------------------------------------------
    def resource(
        self,
        uri: str,
        *,
        html: str | Callable[[], str] | None = None,
        path: str | Path | None = None,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        csp: ResourceCsp | Mapping[str, Sequence[str]] | None = None,
        permissions: ResourcePermissions | Mapping[str, bool] | None = None,
        domain: str | None = None,
        prefers_border: bool | None = None,
        **options: Any,
    ) -> Resource:
        """Serve a view at ``uri`` (rule 3). ``html`` or ``path`` is the content;
        ``name`` defaults to the URI without ``ui://``; ``csp`` (a ``ResourceCsp`` or a
        mapping of its wire names), ``permissions``, ``domain`` and ``prefers_border``
        form ``_meta.ui`` (:class:`~.meta.UiResourceMeta`); other options are core's
        ``server.resource`` options and installed extensions' (``all_of_scopes``).
        Returns core's ``Resource``; a bad option raises at once, naming the resource,
        the option, the allowed values and the closest (:mod:`.resource_options`)."""
        check_ui_uri(uri)
        where = f"ui.resource({uri!r})"
        names = {**OWN, **self.server.options.names("resource")}
        names.pop("mime_type", None)  # a view's MIME type is fixed
        check_options("resource", options, names, "AppsExtension.resource")
        if (html is None) == (path is None):
            raise TypeError(f"{where} needs exactly one of html= or path=")
        given = {"name": name, "title": title, "description": description}
        ui = resource_meta(
            where, csp=csp, permissions=permissions, domain=domain,
            prefers_border=prefers_border, **given,
        ).to_wire()  # fmt: skip
        meta: JSON | None = dict(options.pop("meta", None) or {})
        if ui:
            meta["ui"] = ui
        meta = meta or None
        if path is not None:
            source = Path(path)
            if not source.is_file():
                raise ValueError(f"ui.resource({uri!r}): {source} is not a file")

            def content() -> str:
                return read_app(source)
        elif callable(html):
            check_call_shape(f"ui.resource({uri!r}, html=...)", html, ())  # rule 4
            content = html
        else:
            assert html is not None  # exactly one of html= and path= (checked above)
            fixed = html

            def content() -> str:
                return fixed

        def read() -> JSON:
            entry: JSON = {"uri": uri, "mimeType": RESOURCE_MIME_TYPE, "text": content()}
            if meta is not None:
                entry["_meta"] = meta
            return entry

        added = self.server.add_resource(
            read,
            uri,
            name=name if name is not None else uri[len("ui://") :],
            title=title,
            description=description,
            mime_type=RESOURCE_MIME_TYPE,
            meta=meta,
            **options,
        )
        return cast("Resource", added)  # a static URI (checked above) is a Resource
