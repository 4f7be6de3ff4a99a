"""The gRPC backend: generated tools forward each call over a ``grpcio`` channel (the
``[grpc]`` extra).

Rules:
1. The channel is a ``grpc.aio.Channel`` (calls awaited on the event loop) or a sync
   ``grpc.Channel`` (each call's result, and each ``next`` of a stream, awaited in a
   worker thread). A tool call cancelled (or timed out) cancels its gRPC call on both:
   no worker thread stays blocked on a call nobody awaits. Calls
   go to ``/<package.Service>/<Method>`` with the messages' own serializers; no stub
   module (``_pb2_grpc``) is needed.
2. A tool's timeout is the call's deadline; ``metadata`` (fixed pairs) goes with every
   call. The pairs are checked when the backend is made (``TypeError``/``ValueError``),
   not at each call: a sequence of ``(key, value)``; a key is lowercase ``[0-9a-z_.-]``
   and not ``grpc-`` reserved; a ``-bin`` key's value is bytes, any other value
   printable ASCII (gRPC's header rules).
3. A status error (``grpc.RpcError``) becomes :class:`~.runtime.RpcFailure`: the code's
   name, the details text, and the rich status's details (the
   ``grpc-status-details-bin`` trailer, a ``google.rpc.Status``) as proto JSON, each
   ``{"@type", ...}``; a detail whose type is not in the default descriptor pool is
   ``{"@type", "value": <base64>}``. A trailer that does not parse is ignored.
4. ``grpcio`` is imported when a :class:`GrpcChannel` is made, never by the rest of the
   package.
"""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator, Sequence
from typing import Any, cast

import anyio.to_thread
from google.protobuf import any_pb2, descriptor_pb2, descriptor_pool, json_format, message_factory
from google.protobuf.message import DecodeError, Message

from mcpkit.experimental.protogen.runtime import RpcFailure
from mcpkit.experimental.protogen.schema import to_json
from mcpkit.server import Context

__all__ = ["GrpcChannel", "status_details"]

_END = object()
_status: list[type[Message]] = []


def _status_class() -> type[Message]:
    """``google.rpc.Status`` in a private pool (no googleapis-common-protos needed, and
    no clash with it in the default pool)."""
    if not _status:
        pool = descriptor_pool.DescriptorPool()
        pool.AddSerializedFile(any_pb2.DESCRIPTOR.serialized_pb)
        fdp = descriptor_pb2.FileDescriptorProto(
            name="mcpkit/protogen/rpc_status.proto",
            package="google.rpc",
            syntax="proto3",
            dependency=["google/protobuf/any.proto"],
        )
        msg = fdp.message_type.add(name="Status")
        f = descriptor_pb2.FieldDescriptorProto
        msg.field.add(name="code", number=1, type=f.TYPE_INT32, label=f.LABEL_OPTIONAL)
        msg.field.add(name="message", number=2, type=f.TYPE_STRING, label=f.LABEL_OPTIONAL)
        msg.field.add(
            name="details",
            number=3,
            type=f.TYPE_MESSAGE,
            label=f.LABEL_REPEATED,
            type_name=".google.protobuf.Any",
        )
        pool.Add(fdp)
        found = pool.FindMessageTypeByName("google.rpc.Status")
        _status.append(message_factory.GetMessageClass(found))
    return _status[0]


def status_details(trailer: bytes) -> list[dict[str, Any]]:
    """Rule 3: the details of a serialized ``google.rpc.Status``."""
    status = _status_class()()
    try:
        status.ParseFromString(trailer)
    except DecodeError:
        return []
    out: list[dict[str, Any]] = []
    details: list[Message] = getattr(status, "details")  # noqa: B009 - a dynamic class
    for detail in details:
        packed = any_pb2.Any()
        packed.ParseFromString(detail.SerializeToString())
        try:
            out.append(dict(to_json(packed)))
        except (TypeError, KeyError, json_format.Error):
            encoded = base64.b64encode(packed.value).decode("ascii")
            out.append({"@type": packed.type_url, "value": encoded})
    return out


def _serialize(message: Message) -> bytes:
    return message.SerializeToString()


def _failure(exc: Any) -> RpcFailure:
    code = exc.code()
    name = getattr(code, "name", str(code))
    details: list[dict[str, Any]] = []
    trailers = exc.trailing_metadata() or ()
    for key, value in trailers:
        if key == "grpc-status-details-bin" and isinstance(value, bytes):
            details = status_details(value)
    return RpcFailure(name, exc.details() or "", details)


_KEY_CHARS = frozenset("0123456789abcdefghijklmnopqrstuvwxyz_.-")


def _checked_metadata(metadata: Any) -> tuple[tuple[str, str | bytes], ...]:
    """Rule 2: ``metadata`` as gRPC will take it, or ``TypeError``/``ValueError`` now."""
    kind = type(cast(object, metadata)).__name__
    if isinstance(metadata, str | bytes | dict) or not isinstance(metadata, Sequence):
        raise TypeError(
            f"metadata must be a sequence of (key, value) pairs, not {kind}"
            " (e.g. [('authorization', 'Bearer ...')])"
        )
    pairs: list[tuple[str, str | bytes]] = []
    for pair in cast(Sequence[Any], metadata):
        if not isinstance(pair, tuple) or len(cast(tuple[Any, ...], pair)) != 2:
            raise TypeError(f"metadata entry {pair!r} is not a (key, value) pair")
        key, value = cast(tuple[Any, Any], pair)
        if not isinstance(key, str) or not key or not set(key) <= _KEY_CHARS:
            raise ValueError(f"metadata key {key!r}: gRPC keys are lowercase [0-9a-z_.-]")
        if key.startswith("grpc-"):
            raise ValueError(f"metadata key {key!r}: keys starting 'grpc-' are gRPC's own")
        if key.endswith("-bin"):
            if not isinstance(value, bytes):
                raise TypeError(f"metadata key {key!r} ends in -bin: its value must be bytes")
        elif not isinstance(value, str) or not all(" " <= c <= "~" for c in value):
            raise ValueError(f"metadata value of {key!r} must be printable ASCII text")
        pairs.append((key, value))
    return tuple(pairs)


class GrpcChannel:
    """The backend forwarding to a gRPC server over ``channel`` (rules 1-3)."""

    has_deadlines = True
    """The tool's timeout is the call's deadline (``runtime`` rule 3)."""

    def __init__(self, channel: Any, metadata: Sequence[tuple[str, str]] = ()) -> None:
        import grpc
        import grpc.aio

        if not isinstance(channel, grpc.Channel | grpc.aio.Channel):
            raise TypeError(
                f"forwarding needs a grpc.Channel or grpc.aio.Channel, not "
                f"{type(channel).__name__} (e.g. grpc.aio.insecure_channel('host:port'))"
            )
        self.grpc = grpc
        self.channel = channel
        self.is_aio = isinstance(channel, grpc.aio.Channel)
        self.metadata = _checked_metadata(metadata)
        # kind-ok: unbounded-table one entry per generated method, never a peer value
        self._calls: dict[tuple[str, str, bool], Any] = {}

    def _callable(self, service: str, method: str, response: type[Message], stream: bool) -> Any:
        key = (service, method, stream)
        call = self._calls.get(key)
        if call is None:
            make = self.channel.unary_stream if stream else self.channel.unary_unary
            call = make(
                f"/{service}/{method}",
                request_serializer=_serialize,
                response_deserializer=response.FromString,
            )
            self._calls[key] = call
        return call

    async def unary(
        self,
        service: str,
        method: str,
        request: Message,
        response: type[Message],
        ctx: Context[Any],
        timeout_s: float | None,
    ) -> Message:
        call = self._callable(service, method, response, False)
        try:
            if self.is_aio:
                return await call(request, timeout=timeout_s, metadata=self.metadata or None)
            future = call.future(request, timeout=timeout_s, metadata=self.metadata or None)
            try:
                return await anyio.to_thread.run_sync(future.result, abandon_on_cancel=True)
            finally:
                future.cancel()  # cancelled here: the gRPC call ends too (a no-op once done)
        except self.grpc.RpcError as exc:
            raise _failure(exc) from None

    async def stream(
        self,
        service: str,
        method: str,
        request: Message,
        response: type[Message],
        ctx: Context[Any],
        timeout_s: float | None,
    ) -> AsyncIterator[Message]:
        call = self._callable(service, method, response, True)
        try:
            if self.is_aio:
                async for item in call(request, timeout=timeout_s, metadata=self.metadata or None):
                    yield item
                return
            iterator = call(request, timeout=timeout_s, metadata=self.metadata or None)
            try:
                while (
                    item := await anyio.to_thread.run_sync(
                        next, iterator, _END, abandon_on_cancel=True
                    )
                ) is not _END:
                    yield cast(Message, item)
            finally:
                iterator.cancel()  # cancelled or closed early: the gRPC call ends too
        except self.grpc.RpcError as exc:
            raise _failure(exc) from None
