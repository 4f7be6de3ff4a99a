"""Every answer a handler receives from ``ctx.elicit`` / ``sample`` / ``list_roots`` is valid.

The check itself is :func:`mcpkit.core.answers.answer_problems` (shared with the client);
this module turns a failed check into the server's error, the same on both eras.

Rules:
1. An answer is checked against the request it answers before the handler sees it:
   handshake era, each live reply as it arrives; 2026-07-28, each ``inputResponses`` /
   ``requestState`` answer for a key the handler asks for, before any missing key is
   requested again; an extension's ``input_provider`` (e.g. a task's), each answer it
   returns.
2. A failed check raises :class:`InputResponseError`, a
   :class:`~mcpkit.core.jsonrpc.JSONRPCError` with code -32602 and
   ``data = {"inputKey", "method", "problems"}``. A handler may catch it. Uncaught, in a
   tool on the handshake era it becomes a tool error (``isError: true``, the message as
   text): the tool's request itself was valid. Everywhere else it is the request's
   -32602 error response: on 2026-07-28 the bad answer is part of the request's params
   (SEP-2322 §Error Handling; conformance ``input-required-result-validate-input``).
3. Keys nobody asks for are never checked (they are ignored, SEP-2322), and a key that
   is asked for but not answered is requested again (``input_required``), not an error.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mcpkit.core.answers import answer_problems
from mcpkit.core.jsonrpc import INVALID_PARAMS, JSONRPCError
from mcpkit.core.shapes import JSON

__all__ = ["InputResponseError", "check_answer"]


class InputResponseError(JSONRPCError):
    """The client's answer to an input request does not match what was asked (rule 2).

    ``key`` is the input key (MRTR ``inputRequests`` key, or the key ``ctx`` chose),
    ``method`` the input request's method, ``problems`` readable messages each naming a
    JSON path (``content.name: 5 is not of type 'string'``). Code -32602.
    """

    def __init__(self, key: str, method: str, problems: list[str]) -> None:
        super().__init__(
            INVALID_PARAMS,
            f"Invalid params: the client's answer to {method} (input {key!r}) does not "
            f"match the request: {'; '.join(problems)}",
            {"inputKey": key, "method": method, "problems": problems},
        )
        self.key = key
        self.method = method
        self.problems = problems


def check_answer(key: str, request: Mapping[str, Any], answer: Any) -> JSON:
    """``answer`` when it is a valid result of ``request`` (``{"method", "params"}``);
    raises :class:`InputResponseError` (-32602) otherwise (rule 1)."""
    method = str(request.get("method", ""))
    problems = answer_problems(method, request.get("params"), answer)
    if problems:
        raise InputResponseError(key, method, problems)
    return answer
