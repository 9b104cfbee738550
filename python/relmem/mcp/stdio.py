"""MCP over stdio: one JSON-RPC message per line on stdin and stdout, logs on stderr.

Tool calls run on worker threads so that the reader keeps reading while one waits, for instance for the client's
answer to a sampling request or for a notifications/cancelled. The session ends when stdin closes.
"""
import os
import sys
import threading
from concurrent.futures import ThreadPoolExecutor

from . import jsonrpc
from .session import Session


class _LineWriter:
    """Writes whole messages, one per line, from any thread. A closed pipe ends writing, not the server."""

    def __init__(self, stream):
        self._stream = stream
        self._lock = threading.Lock()
        self.broken = False

    def send(self, message):
        data = (jsonrpc.encode(message) + "\n").encode("utf-8")
        with self._lock:
            if self.broken:
                return
            try:
                self._stream.write(data)
                self._stream.flush()
            except (BrokenPipeError, OSError, ValueError):
                self.broken = True


def _protocol_stdout():
    """A private stream on the real stdout. File descriptor 1 then points at stderr, so that whatever a library
    prints (Python or C++) lands in the log instead of corrupting the protocol."""
    sys.stdout.flush()
    stream = os.fdopen(os.dup(1), "wb", buffering=0)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return stream


def serve_stdio(server, stdin=None, stdout=None, workers=4):
    """Serves one client until stdin closes. `stdin`/`stdout`: binary streams (default: the process's own, with
    fd 1 redirected to stderr)."""
    stdin = stdin if stdin is not None else sys.stdin.buffer
    writer = _LineWriter(stdout if stdout is not None else _protocol_stdout())
    session = Session()
    pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="relmem-mcp")

    def serve(message):
        reply = server.handle(session, message, writer)
        if reply is not None:
            writer.send(reply)

    try:
        for line in stdin:
            line = line.strip()
            if not line:
                continue
            try:
                message = jsonrpc.decode(line)
            except jsonrpc.RpcError as error:
                writer.send(jsonrpc.error_response(error.request_id, error))
                continue
            if jsonrpc.is_request(message) and message["method"] == "tools/call":
                pool.submit(serve, message)
            else:
                serve(message)  # quick: lifecycle, listings, resources, notifications, responses to our requests
    finally:
        session.close()
        pool.shutdown(wait=True)
