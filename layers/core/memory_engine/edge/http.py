"""What every handler shares: the resolver factory, the tenant lookup and one error→HTTP mapping.

Handlers stay thin: they declare a route with a pydantic body, call one use case and return its
model. Everything that turns exceptions into status codes lives here, once.
"""

from __future__ import annotations

import codecs
import json
import time
from collections.abc import Callable
from types import ModuleType
from typing import Annotated, Any
from weakref import WeakKeyDictionary

from aws_lambda_powertools.event_handler import APIGatewayRestResolver, Response
from aws_lambda_powertools.event_handler.openapi.exceptions import RequestValidationError
from aws_lambda_powertools.event_handler.openapi.params import Query
from aws_lambda_powertools.shared.json_encoder import Encoder

from memory_engine import deadline
from memory_engine.edge import unicode_text
from memory_engine.edge.logsafe import error_details, logger
from memory_engine.edge.resolver import ConcurrentRestResolver
from memory_engine.errors import (
    Cancelled,
    Conflict,
    DeadlineExceeded,
    InvalidInput,
    MemoryEngineError,
    NotFound,
    PayloadTooLarge,
    RateLimited,
    Unauthorized,
    Unavailable,
    UpstreamFailed,
    UpstreamRejected,
)
from memory_engine.models.authorizer import TENANT_CONTEXT_KEY


def _optional_orjson() -> ModuleType | None:
    """orjson where it is installed (the local server's extra); the Lambda layer answers through
    `json`."""
    try:
        import orjson
    except ImportError:  # pragma: no cover - depends on the install
        return None
    return orjson


_orjson = _optional_orjson()
_ENCODER = Encoder()
# What `json` with Powertools' Encoder writes through `default` (dataclasses, datetimes), orjson
# hands to the same `default`, so both write the same JSON; str and int subclasses (enums) are
# written by value by both.
_ORJSON_OPTIONS = (
    0 if _orjson is None else _orjson.OPT_PASSTHROUGH_DATACLASS | _orjson.OPT_PASSTHROUGH_DATETIME
)

# An id passed in the query string (GET routes): bounded and free of control characters, like
# the ids of request bodies (`models.api.Identifier`).
QueryId = Annotated[str, Query(min_length=1, max_length=256, pattern=r"^[^\x00-\x1f\x7f]+$")]

STATUS_BY_ERROR: dict[type[MemoryEngineError], int] = {
    InvalidInput: 422,
    NotFound: 404,
    Conflict: 409,
    Unauthorized: 401,
    PayloadTooLarge: 413,
    RateLimited: 429,
    Unavailable: 503,
    Cancelled: 503,
    UpstreamFailed: 502,
    DeadlineExceeded: 504,
}

ErrorShaper = Callable[[int, str, list[dict[str, Any]]], dict[str, Any]]


# Which error envelope each resolver answers with, so the OpenAPI spec can describe it.
_ERROR_SHAPERS: WeakKeyDictionary[APIGatewayRestResolver, ErrorShaper] = WeakKeyDictionary()


def error_shaper_of(app: APIGatewayRestResolver) -> ErrorShaper:
    return _ERROR_SHAPERS.get(app, native_error_body)


MAX_JSON_DEPTH = 64


def parse_json_body(text: str) -> Any:
    """`json.loads`, with absurd input (nested deeper than MAX_JSON_DEPTH, integers of thousands
    of digits) reported as malformed JSON (400) instead of escaping as a crash further on: the
    validators, serializers and the chat upstream all recurse. Text that is not Unicode text (a
    lone surrogate escape) is a 422 naming each field that holds it (`unicode_text`): every route's
    body is read here, so none of them meets such text further on."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        raise
    except (RecursionError, ValueError) as error:
        reason = "nested too deeply" if isinstance(error, RecursionError) else "a number is too long"
        raise json.JSONDecodeError(reason, text[:64], 0) from None
    if _deeper_than(value, MAX_JSON_DEPTH):
        raise json.JSONDecodeError(f"nested deeper than {MAX_JSON_DEPTH} levels", text[:64], 0)
    unicode_text.check_json(text, value)
    return value


def _deeper_than(value: Any, limit: int) -> bool:
    pending: list[tuple[Any, int]] = [(value, 1)]
    while pending:
        item, depth = pending.pop()
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else None
        if children is None:
            continue
        if depth > limit:
            return True
        pending.extend((child, depth + 1) for child in children)
    return False


def native_error_body(status: int, message: str, errors: list[dict[str, Any]]) -> dict[str, Any]:
    """The native API's error envelope (docs/api.md): status, message, errors."""
    return {"status": "error", "message": message, "errors": errors}


def game_error_body(status: int, message: str, errors: list[dict[str, Any]]) -> dict[str, Any]:
    """The game API's envelope (docs/api.md §2): `code` is the HTTP status, never 0 on error."""
    return {"code": status, "msg": message, "data": {"errors": errors} if errors else None}


_OPENAI_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    409: "conflict_error",
    405: "invalid_request_error",
    413: "invalid_request_error",
    422: "invalid_request_error",
    429: "rate_limit_error",
}


def openai_error_body(status: int, message: str, errors: list[dict[str, Any]]) -> dict[str, Any]:
    """OpenAI's error object, which its clients parse (docs/api.md §4)."""
    kind = _OPENAI_ERROR_TYPES.get(status, "upstream_error" if status in (502, 504) else "api_error")
    param = errors[0].get("field") if errors else None
    return {"error": {"message": message, "type": kind, "param": param, "code": None}}


def log_application_id(app: APIGatewayRestResolver) -> None:
    """Record the game API's `Application-ID` header in the logs (the API key decides the tenant)."""
    application = app.current_event.headers.get("Application-ID")  # case-insensitive
    if application:
        logger().append_keys(application_id=application[:256])


def serialize_json(body: Any) -> str:
    """A response body as compact JSON with its text as UTF-8, not `\\uXXXX` escapes: Korean must
    read as Korean with curl. (Powertools' default escapes every non-ASCII character.)

    With orjson installed (the local server's extra), the same JSON ~30 times faster and in
    pieces: a retrieve answering a heavy tenant's long turns (2-5 MB) held the interpreter for
    ~40 ms in one call of `json.dumps`, a stall for every other request of the process (issue
    42). What orjson will not write (integers past 64 bits, keys that are not strings, text that
    is not Unicode) is written by `json` as before."""
    if _orjson is not None:
        try:
            encoded = _orjson.dumps(body, default=_ENCODER.default, option=_ORJSON_OPTIONS)
        except (TypeError, ValueError):  # orjson.JSONEncodeError is a TypeError
            pass
        else:
            return decoded_in_pieces(encoded)
    return json.dumps(body, separators=(",", ":"), cls=Encoder, ensure_ascii=False)


# Bytes decoded per call: each piece takes well under a millisecond, so another thread waiting
# for the interpreter gets it between two pieces (one `bytes.decode` of 5 MB of mixed scripts
# held it ~16 ms; in pieces the whole took ~4 ms).
DECODE_PIECE_BYTES = 1 << 16


def decoded_in_pieces(encoded: bytes) -> str:
    """UTF-8 `encoded` as text, decoded a piece at a time (a character split between two pieces
    is carried over by the incremental decoder)."""
    if len(encoded) <= DECODE_PIECE_BYTES:
        return encoded.decode()
    decoder = codecs.getincrementaldecoder("utf-8")()
    view = memoryview(encoded)
    pieces = [
        decoder.decode(view[start : start + DECODE_PIECE_BYTES])
        for start in range(0, len(encoded), DECODE_PIECE_BYTES)
    ]
    pieces.append(decoder.decode(b"", final=True))
    return "".join(pieces)


def json_response(status: int, body: Any, headers: dict[str, str] | None = None) -> Response:
    return Response(
        status_code=status,
        content_type="application/json",
        body=json.dumps(body, ensure_ascii=False),
        headers=headers,
    )


def describe_validation_errors(raw: list[dict[str, Any]]) -> tuple[int, str, list[dict[str, Any]]]:
    """Turn pydantic/Powertools validation errors into (status, message, per-field errors)."""
    if any(error.get("type") == "json_invalid" for error in raw):
        return (
            400,
            "The request body is not valid JSON: send a JSON object.",
            [{"field": "body", "message": "malformed JSON"}],
        )
    fields: list[dict[str, Any]] = []
    for error in raw:
        field = field_path(error.get("loc", ()))
        message = str(error.get("msg", "invalid value"))
        if error.get("type") == "missing":
            message = "is required"
        elif field == "body" and error.get("type") in {"model_attributes_type", "dict_type"}:
            message = "must be a JSON object"
        same = next((item for item in fields if item["field"] == field), None)
        if same is None:
            fields.append({"field": field, "message": message})
        elif message not in same["message"]:  # one error per member of a union: "a; or b"
            same["message"] += f"; or {message}"
    summary = "; ".join(f"{item['field']}: {item['message']}" for item in fields)
    return 422, f"Invalid request: {summary}. Fix these fields and send again.", fields


# The labels pydantic puts in an error's location for the member of a union that was tried
# (`str`, `list[str]`, `constrained-str`, a model's name): not fields a client could send.
_UNION_LABELS = frozenset({"str", "int", "float", "bool", "none", "list", "dict"})


def field_path(location: Any) -> str:
    """The dotted name of the field an error is about (`options.limit`, `recent_dialogs.0.uuid`)."""
    models: set[str] | None = None
    parts: list[str] = []
    for part in location:
        text = str(part)
        if text == "body" or text in _UNION_LABELS or "[" in text or text.startswith("constrained-"):
            continue
        if text[:1].isupper():
            models = _model_names() if models is None else models
            if text in models:
                continue
        parts.append(text)
    return ".".join(parts) or "body"


def _model_names() -> set[str]:
    from pydantic import BaseModel

    names: set[str] = set()
    pending = list(BaseModel.__subclasses__())
    while pending:
        model = pending.pop()
        names.add(model.__name__)
        pending.extend(model.__subclasses__())
    return names


def build_resolver(shape_error: ErrorShaper = native_error_body) -> APIGatewayRestResolver:
    """A REST resolver with body validation and the one exception→HTTP mapping.

    `shape_error` lets an API dialect (game envelope, memory bank) keep its own error format
    while sharing the status mapping.
    """
    app = ConcurrentRestResolver(
        enable_validation=True, json_body_deserializer=parse_json_body, serializer=serialize_json
    )
    _ERROR_SHAPERS[app] = shape_error

    @app.exception_handler(UnicodeDecodeError)
    def _not_utf8(_: UnicodeDecodeError) -> Response:
        message = "The request body is not UTF-8 text: send JSON encoded as UTF-8."
        return json_response(400, shape_error(400, message, [{"field": "body", "message": "not UTF-8"}]))

    @app.exception_handler(RequestValidationError)
    def _invalid_request(error: RequestValidationError) -> Response:
        status, message, fields = describe_validation_errors(list(error.errors()))
        return json_response(status, shape_error(status, message, fields))

    @app.exception_handler(UpstreamRejected)
    def _upstream_rejected(error: UpstreamRejected) -> Response:
        # The model's 4xx in the engine's words (its body may quote a URL or a key); OpenAI's
        # error object has a place for the model's own code.
        body = shape_error(error.status, error.message, error.errors)
        if error.code and isinstance(body.get("error"), dict):
            body["error"]["code"] = error.code
        headers = {"Retry-After": str(error.retry_after)} if error.retry_after else None
        return json_response(error.status, body, headers)

    @app.exception_handler(MemoryEngineError)
    def _domain_error(error: MemoryEngineError) -> Response:
        status = next((code for kind, code in STATUS_BY_ERROR.items() if isinstance(error, kind)), 400)
        headers = {"Retry-After": str(error.retry_after)} if isinstance(error, RateLimited) else None
        if status >= 500:
            logger().warning("dependency unavailable", extra={"error": error.message})
        return json_response(status, shape_error(status, error.message, error.errors), headers)

    @app.exception_handler(Exception)
    def _unexpected(error: Exception) -> Response:
        # Never a stack trace on the wire: the log keeps it, the caller gets a plain 500.
        logger().error("unhandled error", extra=error_details(error))
        return json_response(500, shape_error(500, "Internal error; the request may be retried.", []))

    @app.not_found
    def _no_route(_: Exception) -> Response:
        message = f"No route {app.current_event.http_method} {app.current_event.path}."
        return json_response(404, shape_error(404, message, []))

    return app


def tenant_of(app: APIGatewayRestResolver) -> str:
    """The tenant the authorizer resolved from the API key; never taken from the body."""
    context = app.current_event.request_context.authorizer.get_context()
    tenant = context.get(TENANT_CONTEXT_KEY)
    if not isinstance(tenant, str) or not tenant:
        raise Unauthorized("Missing or invalid API key: send 'Authorization: Bearer <key>'.")
    return tenant


LambdaHandler = Callable[[dict[str, Any], Any], dict[str, Any]]


def lambda_entry(app: APIGatewayRestResolver) -> LambdaHandler:
    """The Lambda entry point for a resolver: JSON logs with the request id as correlation id,
    the route's metrics (`observability`, one EMF line per invocation) and its X-Ray trace. The
    request runs under the invocation's deadline (`deadline.of_context`): a use case past it
    stops with a 504 instead of being killed with the function."""
    from memory_engine.edge.observability import record_request, route_of, traced

    # log_event stays off whatever POWERTOOLS_LOGGER_LOG_EVENT says: the event holds the API key
    # and the user's words.
    @traced
    @logger().inject_lambda_context(
        correlation_id_path="requestContext.requestId", clear_state=True, log_event=False
    )
    def lambda_handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
        started = time.perf_counter()
        try:
            unicode_text.check_request(event)
        except InvalidInput as refused:
            response = refused_event(app, refused)
        else:
            with deadline.within(deadline.of_context(context)):
                response = app.resolve(json_content_type(event), context)
        record_request(route_of(event), int(response.get("statusCode", 500)), time.perf_counter() - started)
        return response

    return lambda_handler


def refused_event(app: APIGatewayRestResolver, error: InvalidInput) -> dict[str, Any]:
    """The proxy response for an event refused before it reached the resolver, in the route's
    dialect: the path, query string or headers hold text that is not Unicode text."""
    status = STATUS_BY_ERROR[InvalidInput]
    body = serialize_json(error_shaper_of(app)(status, error.message, error.errors))
    return {"statusCode": status, "headers": {"Content-Type": "application/json"}, "body": body}


def json_content_type(event: dict[str, Any]) -> dict[str, Any]:
    """Read every body as JSON, whatever Content-Type the client sent.

    The API only speaks JSON, and `curl -d` labels bodies as form data by default: without this
    such a request would fail validation with a misleading "field required".
    """
    headers = {k: v for k, v in (event.get("headers") or {}).items() if k.lower() != "content-type"}
    multi = {k: v for k, v in (event.get("multiValueHeaders") or {}).items() if k.lower() != "content-type"}
    headers["Content-Type"] = "application/json"
    multi["Content-Type"] = ["application/json"]
    return {**event, "headers": headers, "multiValueHeaders": multi}
