"""MCP over Streamable HTTP (MCP 2025-06-18 and later), on the loopback interface only.

One endpoint, /mcp:
  POST    one JSON-RPC message. A request is answered with application/json, or with a text/event-stream when the
          server has to ask the client something first (sampling): the server's requests go out as events on that
          stream and its response ends it. Notifications and responses get 202 Accepted.
  DELETE  ends the session named by the Mcp-Session-Id header.
  GET     405: the server offers no stream of its own.
The initialize response carries a new Mcp-Session-Id that every later request must send. Requests whose Origin or
Host header is not a loopback name get 403, against DNS rebinding.
"""
import http.server
import logging
import secrets
import threading
from urllib.parse import urlsplit

from . import jsonrpc
from .server import PROTOCOL_VERSIONS
from .session import Session

ENDPOINT = "/mcp"
MAX_BODY_BYTES = 4 << 20
LOOPBACK_NAMES = {"localhost", "127.0.0.1", "::1"}

log = logging.getLogger("relmem.mcp")


class _ResponseChannel:
    """The answer to one POST. Messages sent before the response switch it to an event stream."""

    def __init__(self, handler):
        self._handler = handler
        self._lock = threading.Lock()
        self.streaming = False
        self.broken = False

    def send(self, message):
        with self._lock:
            if not self.streaming:
                self.streaming = True
                self._handler.start_event_stream()
            self._write(message)

    def finish(self, reply):
        with self._lock:
            if self.streaming:
                self._write(reply)
            else:
                self._handler.send_json(200, reply)

    def _write(self, message):
        if self.broken:
            return
        try:
            self._handler.wfile.write(f"event: message\ndata: {jsonrpc.encode(message)}\n\n".encode("utf-8"))
            self._handler.wfile.flush()
        except OSError:
            self.broken = True


def _host_name(value):
    """The host of a Host or Origin header value, without port or brackets."""
    if "://" in value:
        return urlsplit(value).hostname or ""
    return urlsplit("//" + value).hostname or ""


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "relmem-mcp"

    def log_message(self, format, *args):  # noqa: A002 - the base class's name
        log.debug("%s %s", self.address_string(), format % args)

    # --- responses -------------------------------------------------------------------------------------------
    def send_json(self, status, body, headers=()):
        data = jsonrpc.encode(body).encode("utf-8") if body is not None else b""
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        if body is not None:
            self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def send_status(self, status, message, headers=()):
        self.send_json(status, jsonrpc.error_response(None, jsonrpc.RpcError(jsonrpc.INVALID_REQUEST, message))
                       if status >= 400 else None, headers)

    def start_event_stream(self):
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True

    # --- checks ----------------------------------------------------------------------------------------------
    def _refused(self):
        """An error already answered (True), or False when the request may proceed."""
        if urlsplit(self.path).path != ENDPOINT:
            self.send_status(404, f"not found: the MCP endpoint is {ENDPOINT}")
            return True
        origin = self.headers.get("Origin")
        if origin and _host_name(origin) not in LOOPBACK_NAMES:
            self.send_status(403, f"origin {origin} is not allowed")
            return True
        if _host_name(self.headers.get("Host", "localhost")) not in LOOPBACK_NAMES:
            self.send_status(403, "only loopback host names are served")
            return True
        version = self.headers.get("MCP-Protocol-Version")
        if version and version not in PROTOCOL_VERSIONS:
            self.send_status(400, f"unsupported MCP-Protocol-Version {version} "
                                  f"(supported: {', '.join(PROTOCOL_VERSIONS)})")
            return True
        return False

    def _session(self):
        """The session named by the Mcp-Session-Id header, or None after answering 400/404."""
        session_id = self.headers.get("Mcp-Session-Id")
        if not session_id:
            self.send_status(400, "missing Mcp-Session-Id header (send initialize first)")
            return None
        session = self.server.sessions.get(session_id)
        if session is None:
            self.send_status(404, "unknown or ended session: initialize again")
        return session

    def _body(self):
        try:
            length = int(self.headers.get("Content-Length", ""))
        except ValueError:
            self.send_status(411, "a Content-Length header is required")
            return None
        if length < 0 or length > MAX_BODY_BYTES:
            self.send_status(413, f"a message may have at most {MAX_BODY_BYTES} bytes")
            return None
        return self.rfile.read(length)

    # --- methods ---------------------------------------------------------------------------------------------
    def do_POST(self):  # noqa: N802 - http.server's naming
        if self._refused():
            return
        body = self._body()
        if body is None:
            return
        try:
            message = jsonrpc.decode(body)
        except jsonrpc.RpcError as error:
            self.send_json(400, jsonrpc.error_response(error.request_id, error))
            return
        headers = ()
        if jsonrpc.is_request(message) and message["method"] == "initialize":
            session = self.server.new_session()
            headers = (("Mcp-Session-Id", session.id),)
        else:
            session = self._session()
            if session is None:
                return
        if not jsonrpc.is_request(message):
            self.server.mcp.handle(session, message, None)
            self.send_json(202, None)
            return
        channel = _ResponseChannel(self)
        reply = self.server.mcp.handle(session, message, channel)
        if reply is None:  # cancelled meanwhile: nothing to say
            reply = jsonrpc.error_response(message["id"], jsonrpc.RpcError(jsonrpc.REQUEST_CANCELLED,
                                                                           "request cancelled"))
        if headers and "error" in reply:  # a failed initialize opens no session
            self.server.end_session(session.id)
            self.send_json(200, reply)
        elif headers and not channel.streaming:
            self.send_json(200, reply, headers)
        else:
            channel.finish(reply)

    def do_DELETE(self):  # noqa: N802
        if self._refused():
            return
        session = self._session()
        if session is not None:
            self.server.end_session(session.id)
            self.send_json(200, None)

    def do_GET(self):  # noqa: N802
        if self._refused():
            return
        self.send_status(405, "this server offers no server-initiated stream; POST requests instead",
                         (("Allow", "POST, DELETE"),))


class HttpServer(http.server.ThreadingHTTPServer):
    """Streamable HTTP on 127.0.0.1:`port` (0 picks a free port; see .port)."""
    daemon_threads = True

    def __init__(self, mcp, port=0, host="127.0.0.1"):
        if host not in LOOPBACK_NAMES:
            raise ValueError(f"relmem serves MCP over HTTP on loopback addresses only, not {host}")
        super().__init__((host, port), _Handler)
        self.mcp = mcp
        self.sessions = {}
        self._lock = threading.Lock()

    @property
    def port(self):
        return self.server_address[1]

    @property
    def url(self):
        return f"http://127.0.0.1:{self.port}{ENDPOINT}"

    def new_session(self):
        session = Session(secrets.token_hex(16))
        with self._lock:
            self.sessions[session.id] = session
        return session

    def end_session(self, session_id):
        with self._lock:
            session = self.sessions.pop(session_id, None)
        if session is not None:
            session.close()

    def handle_error(self, request, client_address):
        # A client that disconnects mid-call costs its own request only.
        log.info("connection from %s ended with an error", client_address, exc_info=True)
