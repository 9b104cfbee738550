"""A minimal MCP client over stdio, for benchmarks and tests: spawns a server command and exchanges messages.

    with StdioClient(["relmem", "serve", "--dbs", "dbs/"]) as client:
        client.initialize()
        client.call("list_databases", {})
"""
import json
import queue
import subprocess
import threading

from . import jsonrpc


class StdioClient:
    def __init__(self, command, env=None, cwd=None):
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, env=env, cwd=cwd)
        self.messages = queue.Queue()
        self.stderr = []
        self._next_id = 0
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=lambda: self.stderr.extend(self.process.stderr), daemon=True).start()

    def _read(self):
        for line in self.process.stdout:
            self.messages.put(json.loads(line))
        self.messages.put(None)

    def send_line(self, data):
        self.process.stdin.write(data if isinstance(data, bytes) else data.encode("utf-8"))
        self.process.stdin.write(b"\n")
        self.process.stdin.flush()

    def send(self, message):
        self.send_line(jsonrpc.encode(message))

    def receive(self, timeout=60):
        message = self.messages.get(timeout=timeout)
        if message is None:
            log = b"".join(self.stderr).decode(errors="replace")[-2000:]
            raise EOFError(f"the server closed its stdout: {log}")
        return message

    def request(self, method, params=None, timeout=60, on_request=None):
        """Sends a request and returns its response. Requests from the server meanwhile are answered with
        on_request(message) -> result."""
        self._next_id += 1
        request_id = self._next_id
        self.send(jsonrpc.request(request_id, method, params))
        while True:
            reply = self.receive(timeout)
            if jsonrpc.is_request(reply) and on_request is not None:
                self.send(jsonrpc.response(reply["id"], on_request(reply)))
            elif reply.get("id") == request_id:
                return reply

    def initialize(self, capabilities=None, version="2025-06-18"):
        reply = self.request("initialize", {"protocolVersion": version, "capabilities": capabilities or {},
                                            "clientInfo": {"name": "relmem-client", "version": "1"}})
        self.send(jsonrpc.notification("notifications/initialized"))
        return reply

    def call(self, name, arguments, **options):
        return self.request("tools/call", {"name": name, "arguments": arguments}, **options)

    def close(self):
        """Closes stdin (the end of the session) and waits for the server; returns its exit status."""
        if self.process.poll() is None:
            self.process.stdin.close()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        return self.process.returncode

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
