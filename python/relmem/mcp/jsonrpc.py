"""JSON-RPC 2.0 as MCP uses it: one message per line (stdio) or per HTTP body, no batches (removed in MCP
2025-06-18), ids that are strings or integers."""
import json
import math

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
RESOURCE_NOT_FOUND = -32002  # MCP's code for resources/read of an unknown URI
REQUEST_CANCELLED = -32800  # answered to our own outgoing requests when the client goes away


class RpcError(Exception):
    """A JSON-RPC error answered to the request that caused it."""

    def __init__(self, code, message, data=None, request_id=None):
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data
        self.request_id = request_id  # the id of the offending message when it had a readable one

    def to_error(self):
        error = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return error


def response(request_id, result):
    return {"jsonrpc": "2.0", "id": request_id, "result": result}


def error_response(request_id, error):
    return {"jsonrpc": "2.0", "id": request_id, "error": error.to_error()}


def request(request_id, method, params=None):
    message = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        message["params"] = params
    return message


def notification(method, params=None):
    message = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        message["params"] = params
    return message


def encode(message):
    """One line of compact JSON, without a newline. NaN and infinities, which JSON cannot spell, become strings;
    other values JSON does not know become their str()."""
    try:
        return json.dumps(message, ensure_ascii=False, separators=(",", ":"), allow_nan=False, default=str)
    except ValueError:
        return json.dumps(_finite(message), ensure_ascii=False, separators=(",", ":"), default=str)


def _finite(value):
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def decode(data):
    """The message in `data` (UTF-8 bytes or str). Raises RpcError (parse error or invalid request) for anything
    that is not one JSON-RPC 2.0 request, notification or response."""
    try:
        message = json.loads(data.decode("utf-8") if isinstance(data, bytes) else data)
    except (ValueError, RecursionError) as error:  # UnicodeDecodeError is a ValueError
        raise RpcError(PARSE_ERROR, f"parse error: {error}") from None
    if isinstance(message, list):
        raise RpcError(INVALID_REQUEST, "batches are not supported (MCP 2025-06-18 removed JSON-RPC batching)")
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
        raise RpcError(INVALID_REQUEST, 'invalid request: expected a JSON object with "jsonrpc": "2.0"',
                       request_id=request_id(message))
    has_id = "id" in message
    if has_id and (isinstance(message["id"], bool) or not isinstance(message["id"], (str, int))):
        raise RpcError(INVALID_REQUEST, "invalid request: id must be a string or an integer")
    if "method" in message:
        if not isinstance(message["method"], str):
            raise RpcError(INVALID_REQUEST, "invalid request: method must be a string",
                           request_id=request_id(message))
        if "params" in message and not isinstance(message["params"], dict):
            raise RpcError(INVALID_REQUEST, "invalid request: params must be an object",
                           request_id=request_id(message))
    elif not has_id or ("result" not in message and "error" not in message):
        raise RpcError(INVALID_REQUEST, "invalid request: neither a request, a notification nor a response")
    return message


def request_id(message):
    """The id of a message that has a well-formed one, else None."""
    if isinstance(message, dict):
        value = message.get("id")
        if isinstance(value, (str, int)) and not isinstance(value, bool):
            return value
    return None


def is_request(message):
    return "method" in message and "id" in message


def is_notification(message):
    return "method" in message and "id" not in message


def is_response(message):
    return "method" not in message
