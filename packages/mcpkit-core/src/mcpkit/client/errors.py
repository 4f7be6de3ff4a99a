"""Errors the client raises on its own, as opposed to errors the server sent.

An error response from the server is raised as :class:`~mcpkit.core.jsonrpc.JSONRPCError`
with the server's code, message and data, unchanged. Everything here is local: the
transport failed, the server's answer broke a rule the client checks, or a bound was hit.
None of these carry a JSON-RPC code, so they can never be mistaken for the peer's errors
(2026-07-28 ``basic/index`` §Error Codes: local errors have no assigned codes).

Rules:
1. Every local failure is a :class:`ClientError`; catch that to handle them all.
2. Messages name the method, the value and the rule that failed.
3. A failure of the transport itself (an ``OSError``, an ``httpx2`` error) never reaches
   the caller as is: it becomes a :class:`TransportConnectError` when the transport could
   not be opened at all (command missing, connection refused), a
   :class:`RequestTimeoutError` when a transport-level wait ran out, else a
   :class:`TransportClosedError`; the original stays reachable as ``__cause__``.
4. An HTTP 401, or a 403 carrying a ``WWW-Authenticate`` challenge (or no JSON-RPC error),
   that no HTTP plugin resolved fails the exchange at once with :class:`HTTPAuthError`,
   naming the status and the challenge; it is never taken for a protocol answer.
5. A message from the server larger than ``max_message_bytes`` fails the exchange that
   carried it with :class:`MessageTooLargeError` (HTTP; on stdio the line is discarded
   and the request ends at its timeout).
6. An error whose fix is a client argument says it as a
   :class:`~mcpkit.core.remedies.Remedy` apart from the problem (``problem``,
   ``remedy``), with the ``mcpkit`` flags where core has them, so the CLI shows flags,
   not constructor arguments (:mod:`mcpkit.core.remedies`).
"""

from __future__ import annotations

from typing import Any

from mcpkit.core import engine
from mcpkit.core.remedies import Remedied, Remedy, explain

__all__ = [
    "ClientError",
    "HTTPAuthError",
    "HTTPStatusError",
    "InputRoundsExceededError",
    "InvalidResponseError",
    "MessageTooLargeError",
    "ProtocolViolationError",
    "RequestTimeoutError",
    "SessionExpiredError",
    "ToolOutputError",
    "TransportClosedError",
    "TransportConnectError",
    "UnsupportedServerError",
    "local_error",
]


class ClientError(Exception):
    """A failure detected by the client itself (rule 1)."""


class TransportClosedError(ClientError, engine.PeerClosedError):
    """The transport ended (process exited, stream closed) before an answer arrived.
    Also a :class:`~mcpkit.core.engine.PeerClosedError` (and a ``ConnectionError``)."""


class TransportConnectError(TransportClosedError):
    """The transport could not be opened: the command is missing or not executable, the
    connection was refused, the host is unknown, connecting timed out (rule 3). Also a
    ``ConnectionError``."""


class RequestTimeoutError(ClientError, engine.RequestTimeoutError):
    """No answer within the request's timeout (seconds); the server was told to cancel.
    Also a :class:`~mcpkit.core.engine.RequestTimeoutError` (and a ``TimeoutError``)."""


class HTTPStatusError(ClientError):
    """An HTTP exchange ended with a status and a body that carry no JSON-RPC answer.

    ``status`` is the HTTP status code; ``body`` the first bytes of the response body
    as text (for diagnostics only).
    """

    def __init__(self, method: str, status: int, body: str = "") -> None:
        snippet = body.strip().replace("\n", " ")[:200]
        super().__init__(
            f"{method}: HTTP {status} without a JSON-RPC response"
            + (f": {snippet}" if snippet else "")
        )
        self.method = method
        self.status = status
        self.body = body


class RedirectError(HTTPStatusError):
    """A 307/308 redirect the HTTP transport does not follow (http rule 13): to another
    origin (scheme, host or port), without a ``Location``, or one more than
    ``max_redirects`` in one exchange. ``location`` is where it pointed ("" if nowhere)."""

    def __init__(self, method: str, status: int, location: str, why: str) -> None:
        super().__init__(method, status)
        where = location or "(no Location)"
        self.args = (f"{method}: HTTP {status} redirect to {where} not followed: {why}",)
        self.location = location


class HTTPAuthError(HTTPStatusError, Remedied):
    """HTTP 401 or 403 that no HTTP plugin (``Client(auth=...)``) resolved: the server wants
    credentials, or other ones (rule 4; 2025-11-25 and 2026-07-28 ``basic/authorization``
    §Error Handling). ``status`` is 401 or 403; ``challenge`` the ``WWW-Authenticate``
    header value (``""`` when absent), e.g. ``Bearer resource_metadata="...", scope="..."``.
    """

    def __init__(self, method: str, status: int, challenge: str = "", body: str = "") -> None:
        what = "authorization required" if status == 401 else "forbidden"
        self.problem = f"{method}: HTTP {status} ({what})" + (
            f"; WWW-Authenticate: {challenge[:300]}" if challenge else ""
        )
        self.remedy = Remedy(
            python="pass Client(url, auth=...) with credentials the server accepts",
            cli="send credentials the server accepts: --header 'Authorization: Bearer TOKEN'",
        )
        self.option = ""
        ClientError.__init__(self, explain(self, "python"))
        self.method = method
        self.status = status
        self.body = body
        self.challenge = challenge


class MessageTooLargeError(HTTPStatusError, Remedied):
    """A JSON body or SSE event from the server is larger than ``max_message_bytes``;
    it was not buffered further (rule 5). ``status`` is the HTTP status it came with,
    ``limit`` the bound in bytes."""

    def __init__(self, method: str, status: int, limit: int, what: str = "response body") -> None:
        self.problem = (
            f"{method}: {what} from the server larger than {limit} bytes; not read further"
        )
        self.remedy = Remedy(python="raise the client's max_message_bytes if it is expected")
        self.option = ""
        ClientError.__init__(self, explain(self, "python"))
        self.method = method
        self.status = status
        self.body = ""
        self.limit = limit


class SessionExpiredError(HTTPStatusError):
    """HTTP 404 for a request carrying ``MCP-Session-Id``: the server ended the session
    (2025-11-25 ``basic/transports`` §Session Management, rule 4). The client starts a
    new session and retries once."""


class UnsupportedServerError(ClientError):
    """The server speaks no protocol version this client supports, in the mode asked."""


class ProtocolViolationError(ClientError):
    """The server's answer breaks a protocol rule (e.g. an unknown ``resultType``,
    an ``InputRequiredResult`` on a method that may not return one)."""


class InvalidResponseError(ProtocolViolationError, engine.InvalidResponseError):
    """The server answered with a malformed JSON-RPC response (engine rule 7)."""


def local_error(exc: Exception) -> ClientError | None:
    """The :class:`ClientError` for an engine-level failure (rule 1), or None when
    ``exc`` is not one. The original stays reachable as ``__cause__``."""
    if isinstance(exc, ClientError):
        return None
    for engine_type, client_type in (
        (engine.RequestTimeoutError, RequestTimeoutError),
        (engine.PeerClosedError, TransportClosedError),
        (engine.InvalidResponseError, InvalidResponseError),
    ):
        if isinstance(exc, engine_type):
            return client_type(str(exc))
    return None


class InputRoundsExceededError(ClientError, Remedied):
    """The server kept answering ``input_required`` past the client's bound on MRTR
    rounds (SEP-2322)."""

    def __init__(self, method: str, rounds: int) -> None:
        self.problem = f"{method}: server still asked for input after {rounds} rounds; giving up"
        self.remedy = Remedy(python=f"the client's max_input_rounds is {rounds}")
        self.option = ""
        ClientError.__init__(self, explain(self, "python"))
        self.method = method
        self.rounds = rounds


class ToolOutputError(ClientError):
    """A successful ``tools/call`` result does not match the tool's ``outputSchema``
    (2025-11-25 ``server/tools`` §Output Schema). ``errors`` lists the failures;
    ``result`` is the raw result."""

    def __init__(self, tool: str, errors: list[str], result: Any = None) -> None:
        super().__init__(
            f"tools/call {tool!r}: structuredContent does not match outputSchema: "
            + "; ".join(errors)
        )
        self.tool = tool
        self.errors = errors
        self.result = result
