"""Read-only SQL in worker processes that are killed when a statement outlives its time limit.

The executor's progress handler stops a statement between SQLite's virtual machine steps, but one step can run far
longer: a single printf('%.*c', 1000000000, 'x') or a LIKE over a long string loops inside one SQL function call.
Such a statement would hold a server thread and a core indefinitely; in a worker process it is simply killed
`grace` seconds after its limit, and a fresh worker serves the next statement.
"""
import multiprocessing
import queue
import threading
import time
from dataclasses import dataclass, field
from typing import Optional


@dataclass
class SandboxResult:
    columns: list = field(default_factory=list)
    rows: list = field(default_factory=list)
    truncated: bool = False
    error: Optional[str] = None
    error_kind: Optional[str] = None
    seconds: float = 0.0  # spent in the executor

    @property
    def ok(self):
        return self.error is None


def _serve(connection):
    from relmem import execute_readonly
    connection.send("ready")
    while True:
        try:
            request = connection.recv()
        except EOFError:
            return
        started = time.perf_counter()
        result = execute_readonly(*request)
        connection.send(SandboxResult(list(result.columns), result.rows, result.truncated, result.error,
                                      result.error_kind, time.perf_counter() - started))


class _Worker:
    STARTUP_SECONDS = 120  # a new process imports relmem before its first statement, slowly on a loaded machine

    def __init__(self, context):
        self._lock = threading.Lock()
        self.killed = False
        self.connection, child = context.Pipe()
        self.process = context.Process(target=_serve, args=(child,), daemon=True, name="relmem-sql")
        self.process.start()
        child.close()
        try:
            ready = self.connection.poll(self.STARTUP_SECONDS) and self.connection.recv() == "ready"
        except (EOFError, OSError):
            ready = False
        if not ready:
            self.kill()
            raise OSError("the SQL worker process did not start")

    def kill(self):
        """Idempotent: the server's shutdown and a statement's timeout may both end a worker."""
        with self._lock:
            if self.killed:
                return
            self.killed = True
        self.process.kill()
        self.process.join()
        self.connection.close()


class SqlSandbox:
    def __init__(self, grace=1.0):
        self.grace = grace
        self._context = multiprocessing.get_context("spawn")  # no fork of a threaded server
        self._idle = queue.LifoQueue()
        self._workers = []
        self._lock = threading.Lock()

    def execute(self, path, sql, timeout, max_rows):
        """execute_readonly(path, sql, timeout, max_rows) in a worker; a timeout error if it outlives its limit."""
        worker = self._take()
        try:
            worker.connection.send((path, sql, timeout, max_rows))
            if worker.connection.poll(timeout + self.grace):
                result = worker.connection.recv()
                self._idle.put(worker)
                return result
            reason = f"query exceeded the time limit of {timeout:g} s and was stopped"
            kind = "timeout"
        except (EOFError, OSError) as error:
            reason, kind = f"the SQL worker process failed ({type(error).__name__}); the statement was dropped", \
                "runtime"
        self._discard(worker)
        return SandboxResult(error=reason, error_kind=kind)

    def _take(self):
        try:
            return self._idle.get_nowait()
        except queue.Empty:
            worker = _Worker(self._context)
            with self._lock:
                self._workers.append(worker)
            return worker

    def _discard(self, worker):
        worker.kill()
        with self._lock:
            if worker in self._workers:
                self._workers.remove(worker)

    def close(self):
        with self._lock:
            workers, self._workers = self._workers, []
        for worker in workers:
            worker.kill()
