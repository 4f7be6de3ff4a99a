"""The library service's implementation: one object that serves gRPC and, in process, MCP.

Import it after the generated modules are importable (``library.v1.library_pb2`` on
``sys.path``; ``demo.py`` arranges that).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from library.v1 import library_mcp
from library.v1 import library_pb2 as pb

BOOKS = {
    "b1": pb.Book(id="b1", title="Dune", genre=pb.GENRE_FICTION, year=1965),
    "b2": pb.Book(id="b2", title="Cosmos", genre=pb.GENRE_SCIENCE, year=1980),
    "b3": pb.Book(id="b3", title="Dune Messiah", genre=pb.GENRE_FICTION, year=1969),
}


class Library:
    """Async methods, grpcio's ``(request, context)`` shape."""

    async def SearchBooks(self, request: pb.SearchRequest, context: Any) -> pb.SearchResponse:
        found = [b for b in BOOKS.values() if request.query.lower() in b.title.lower()]
        if request.HasField("limit"):
            found = found[: request.limit]
        return pb.SearchResponse(books=found, total=len(found), query=request.query)

    async def Echo(self, request: pb.Everything, context: Any) -> pb.Everything:
        return request

    async def Count(self, request: pb.CountRequest, context: Any) -> AsyncIterator[pb.CountReply]:
        for n in range(1, request.n + 1):
            yield pb.CountReply(n=n)

    async def Borrow(self, request: pb.BorrowRequest, context: Any) -> pb.Book:
        book = BOOKS.get(request.book_id)
        if book is None:
            await _abort(context, "NOT_FOUND", f"no book {request.book_id!r}")
            raise AssertionError("abort returned")
        mcp = getattr(context, "mcp", None)  # in process only: the MCP request's context
        if mcp is not None and mcp.client_supports("elicitation"):
            answer = await library_mcp.elicit_loan_confirmation(mcp)
            if answer.message is None or not answer.message.confirmed:
                await _abort(context, "ABORTED", "the loan was not confirmed")
        return book

    async def GetBook(self, request: pb.GetBookRequest, context: Any) -> pb.Book:
        book = BOOKS.get(request.book_id)
        if book is None:
            await _abort(context, "NOT_FOUND", f"no book {request.book_id!r}")
        return book or pb.Book()

    async def Hours(self, request: pb.HoursRequest, context: Any) -> pb.HoursReply:
        return pb.HoursReply(hours={"mon": "9-17", "sat": "10-14"})

    async def Recommend(self, request: pb.RecommendRequest, context: Any) -> pb.RecommendReply:
        count = request.count if request.HasField("count") else 1
        return pb.RecommendReply(text=f"Recommend {count} {request.genre} book(s).")


class Completer:
    """Completion values for the completable fields."""

    def complete_get_book_book_id(self, value: str, context: Any) -> list[str]:
        return [i for i in sorted(BOOKS) if i.startswith(value)]

    def complete_recommend_genre(self, value: str, context: Any) -> list[str]:
        return [g for g in ("fiction", "science") if g.startswith(value)]


async def _abort(context: Any, code: str, details: str) -> None:
    """``context.abort``: a coroutine on a grpc.aio server, a plain call in process."""
    import inspect

    try:
        import grpc

        status: Any = getattr(grpc.StatusCode, code)
    except ImportError:
        status = code
    result = context.abort(status, details)
    if inspect.isawaitable(result):
        await result
