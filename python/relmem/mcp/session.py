"""One client's MCP session: what it negotiated, the requests it has in flight, and the requests the server sent it
(sampling) that await its answer.

A transport hands every incoming request to the server together with a channel: the object whose send(message)
reaches the client on the path that request came by (stdout for stdio, the POST's event stream for HTTP). Requests
the server makes while serving that request go out on the same channel.
"""
import itertools
import threading

from . import jsonrpc


class ClientGone(Exception):
    """The client cancelled the call, closed the session or did not answer in time."""


class Call:
    """One incoming request being served. Tools receive it to make requests of the client (sampling)."""

    def __init__(self, session, request_id, channel):
        self.session = session
        self.request_id = request_id
        self.channel = channel
        self.cancelled = threading.Event()

    def request(self, method, params, timeout):
        """Sends a request to the client and waits for its result. Raises jsonrpc.RpcError with the client's error,
        or ClientGone when the call is cancelled, the session closes or `timeout` seconds pass."""
        return self.session.request(self, method, params, timeout)


class _Outgoing:
    def __init__(self, call):
        self.call = call
        self.done = threading.Event()
        self.message = None


class Session:
    def __init__(self, session_id=None):
        self.id = session_id
        self.protocol_version = None
        self.client_capabilities = {}
        self.client_info = {}
        self.initialized = False
        self.closed = False
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._outgoing = {}  # our request id -> _Outgoing
        self._calls = {}  # client's request id -> Call

    @property
    def supports_sampling(self):
        return isinstance(self.client_capabilities.get("sampling"), dict)

    def begin(self, request_id, channel):
        call = Call(self, request_id, channel)
        with self._lock:
            self._calls[request_id] = call
        return call

    def end(self, call):
        with self._lock:
            if self._calls.get(call.request_id) is call:
                del self._calls[call.request_id]

    def cancel(self, request_id):
        """notifications/cancelled: the call's answer is dropped and what it waits for fails."""
        with self._lock:
            call = self._calls.get(request_id)
            waiting = [o for o in self._outgoing.values() if o.call is call]
        if call is None:
            return
        call.cancelled.set()
        for outgoing in waiting:
            outgoing.done.set()

    def request(self, call, method, params, timeout):
        if self.closed or call.cancelled.is_set():
            raise ClientGone("the client cancelled the request or closed the session")
        outgoing = _Outgoing(call)
        with self._lock:
            request_id = f"relmem-{next(self._ids)}"
            self._outgoing[request_id] = outgoing
        try:
            call.channel.send(jsonrpc.request(request_id, method, params))
            answered = outgoing.done.wait(timeout)
        finally:
            with self._lock:
                self._outgoing.pop(request_id, None)
        if outgoing.message is None:
            raise ClientGone(f"the client did not answer {method} within {timeout:g} s" if not answered else
                             "the client cancelled the request or closed the session")
        if "error" in outgoing.message:
            error = outgoing.message["error"] if isinstance(outgoing.message["error"], dict) else {}
            raise jsonrpc.RpcError(error.get("code", jsonrpc.INTERNAL_ERROR),
                                   str(error.get("message", "the client answered with an error")))
        return outgoing.message.get("result")

    def accept_response(self, message):
        """Delivers a client's response to the request waiting for it; False when nothing waits for that id."""
        with self._lock:
            outgoing = self._outgoing.get(message.get("id"))
        if outgoing is None:
            return False
        outgoing.message = message
        outgoing.done.set()
        return True

    def close(self):
        """The client went away: every call is cancelled and every wait ends."""
        self.closed = True
        with self._lock:
            calls = list(self._calls.values())
            outgoing = list(self._outgoing.values())
        for call in calls:
            call.cancelled.set()
        for o in outgoing:
            o.done.set()
