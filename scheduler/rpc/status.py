"""Requests in, statuses out: decoding a request, the token check, and every failure as a status.

Every handler of a ``Service`` runs under :func:`guard` (or :func:`guard_stream`):
the token is checked first, a request is decoded and validated as the core's
pydantic model before the core sees it, and whatever ends the call becomes a
gRPC status. ``Abort`` carries a chosen status; the core's
``UnknownResourceManager`` is FAILED_PRECONDITION; anything else is a bug,
logged and answered with INTERNAL. A handler never raises into grpc.
"""

from __future__ import annotations

import functools
import hmac
import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, ClassVar, TypeVar, cast

import grpc
import pydantic
from google.protobuf.message import DecodeError, Message

from scheduler import ConfigError, UnknownResourceManager

from . import wire
from .convert import from_proto

log = logging.getLogger("yunikorn_fsm.rpc")

_M = TypeVar("_M", bound=pydantic.BaseModel)
_R = TypeVar("_R")


class Abort(Exception):
    """Raised inside a handler to end the call with a status (turned into ``context.abort``)."""

    def __init__(self, code: grpc.StatusCode, details: str) -> None:
        super().__init__(details)
        self.code = code
        self.details = details


@dataclass(frozen=True)
class Service:
    """A gRPC service whose handlers run under :func:`guard`: its name, its methods, the token.

    A subclass names its ``SERVICE`` and returns its ``methods()``; ``handlers()``
    is what ``grpc.Server.add_generic_rpc_handlers`` takes.
    """

    SERVICE: ClassVar[str]
    token: str | None
    """When set, every call must carry ``authorization: Bearer <token>`` metadata."""

    def methods(self) -> dict[str, grpc.RpcMethodHandler[Any, Any]]:
        raise NotImplementedError

    def handlers(self) -> grpc.GenericRpcHandler[Any, Any]:
        return grpc.method_handlers_generic_handler(self.SERVICE, self.methods())


def decode(raw: bytes, wire_cls: type[Message], model: type[_M]) -> _M:
    """The validated request in ``raw``, or ``Abort`` with INVALID_ARGUMENT saying why."""
    try:
        message = wire_cls.FromString(raw)
    except DecodeError as error:
        raise _malformed(wire_cls, error) from None
    try:
        return from_proto(message, model)
    except pydantic.ValidationError as error:
        raise Abort(grpc.StatusCode.INVALID_ARGUMENT, wire.invalid_details(error)) from None


def rm_id_of(raw: bytes, wire_cls: type[Message]) -> str:
    """The ``rmID`` of an extension request that carries nothing else to validate."""
    try:
        rm_id: str = cast(Any, wire_cls.FromString(raw)).rmID
    except DecodeError as error:
        raise _malformed(wire_cls, error) from None
    if not rm_id:
        raise Abort(grpc.StatusCode.INVALID_ARGUMENT,
                    "rmID: String should have at least 1 character")
    return rm_id


def first_request(requests: Iterator[bytes]) -> bytes | None:
    """A stream's first request (the one that names its RM); None when the client left first."""
    try:
        return next(requests, None)
    except grpc.RpcError:
        return None


def _malformed(wire_cls: type[Message], error: DecodeError) -> Abort:
    return Abort(grpc.StatusCode.INVALID_ARGUMENT, f"malformed {wire_cls.DESCRIPTOR.name}: {error}")


def refused(error: ConfigError, context: grpc.ServicerContext) -> Abort:
    """INVALID_ARGUMENT for a configuration the core refused, with its path and reason.

    The path and reason also go out as trailing metadata, so that a client can
    raise the same ``ConfigError`` the in-process API raises.
    """
    context.set_trailing_metadata(
        ((wire.CONFIG_PATH_KEY, error.path), (wire.CONFIG_REASON_KEY, error.reason)))
    where = f"config.{error.path}" if error.path else "config"
    return Abort(grpc.StatusCode.INVALID_ARGUMENT, f"{where}: {error.reason}")


def authorize(token: str | None, context: grpc.ServicerContext) -> None:
    """``Abort`` with UNAUTHENTICATED unless the call carries the token (when there is one)."""
    if token is None:
        return
    given = dict(context.invocation_metadata()).get("authorization", "")
    expected = f"Bearer {token}"
    if not (isinstance(given, str)
            and hmac.compare_digest(given.encode(), expected.encode())):
        raise Abort(grpc.StatusCode.UNAUTHENTICATED,
                    "missing or wrong token: send 'authorization: Bearer <token>'")


def status_of(error: Exception, what: str) -> Abort:
    """The status that ends a call after ``error``; a bug (in ``what``) is logged as one."""
    if isinstance(error, Abort):
        return error
    if isinstance(error, UnknownResourceManager):
        return Abort(grpc.StatusCode.FAILED_PRECONDITION, str(error))
    log.exception("%s failed", what)
    return Abort(grpc.StatusCode.INTERNAL, "internal error (see the server log)")


def guard(handler: Callable[..., _R]) -> Callable[..., _R]:
    """End a unary call with the status of what went wrong; never raise."""

    @functools.wraps(handler)
    def guarded(self: Service, *args: Any) -> _R:
        context: grpc.ServicerContext = args[-1]
        try:
            authorize(self.token, context)
            return handler(self, *args)
        except Exception as error:
            status = status_of(error, handler.__name__)
            context.abort(status.code, status.details)
        raise AssertionError("unreachable: context.abort raises")

    return guarded


def guard_stream(handler: Callable[..., Iterator[bytes]]) -> Callable[..., Iterator[bytes]]:
    """``guard`` for a handler that streams its responses."""

    @functools.wraps(handler)
    def guarded(self: Service, *args: Any) -> Iterator[bytes]:
        context: grpc.ServicerContext = args[-1]
        try:
            authorize(self.token, context)
            yield from handler(self, *args)
        except Exception as error:
            status = status_of(error, handler.__name__)
            context.abort(status.code, status.details)

    return guarded
