"""A small HTTP(S) server for /metrics that idle, slow or hostile connections cannot stop.

One thread accepts connections and watches them with a selector; a connection gets one of a fixed
pool of worker threads only once it has sent bytes (a ClientHello, a request line). The worker does
the TLS handshake (with its own timeout), reads the request (a deadline for the whole request, a size
cap), answers and closes. A connection that sends nothing is closed after idle_timeout_s, and at
max_connections the oldest such connection makes room for the new one, so a flood of half-open
connections costs file descriptors, never threads, and never locks a scraper out. Limits and their
sources: data/http_limits.yaml.

Each response closes its connection (HTTP/1.1 `Connection: close`); Prometheus reconnects per scrape.
"""

from __future__ import annotations

import collections
import contextlib
import errno
import functools
import resource
import selectors
import socket
import ssl
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from importlib import resources

import yaml


@dataclass(frozen=True)
class Limits:
    max_connections: int
    workers: int
    handshake_timeout_s: float
    read_timeout_s: float
    idle_timeout_s: float
    max_request_bytes: int


@functools.cache
def default_limits() -> Limits:
    raw = yaml.safe_load(
        resources.files("gpuwise.export").joinpath("data/http_limits.yaml").read_text(encoding="utf-8")
    )
    for name, row in raw.items():
        if "value" not in row or "source" not in row:  # a shipped-data bug, caught by the tests
            raise ValueError(f"http_limits.yaml: {name} needs 'value' and 'source'")
    kinds = Limits.__annotations__
    return Limits(**{k: (int if kinds[k] == "int" else float)(raw[k]["value"]) for k in kinds})


@dataclass
class Request:
    method: str
    path: str
    headers: dict[str, str]  # names lower-cased


@dataclass
class Response:
    status: str  # "200 OK"
    headers: list[tuple[str, str]]
    body: bytes


class _BadRequest(Exception):
    def __init__(self, status: str) -> None:
        super().__init__(status)
        self.status = status


_FD_RESERVE = 64  # descriptors kept free for the collector (NVML, /proc reads), logs and files


def _raise_fd_limit(wanted: int) -> int:
    """Raise the soft RLIMIT_NOFILE toward `wanted` (within the hard limit); the soft limit in effect."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
    if soft != resource.RLIM_INFINITY and soft < target:
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            soft = target
    return soft


def _lingering_close(sock: socket.socket, deadline: float) -> None:
    """Half-close, then read and discard what the client still sends (bounded in bytes and time)."""
    sock.shutdown(socket.SHUT_WR)
    end = min(deadline, time.monotonic() + 1.0)
    drained = 0
    while drained < 2**20 and (left := end - time.monotonic()) > 0:
        sock.settimeout(left)
        chunk = sock.recv(65536)
        if not chunk:
            return
        drained += len(chunk)


class MetricsServer:
    """serve_forever() in one thread; shutdown() from another; server_close() releases the port."""

    def __init__(
        self,
        address: str,
        port: int,
        handle: Callable[[Request], Response],
        *,
        ssl_context: ssl.SSLContext | None = None,
        limits: Limits | None = None,
    ) -> None:
        self.limits = limits or default_limits()
        self._handle = handle
        self._ssl = ssl_context
        soft = _raise_fd_limit(self.limits.max_connections + 2 * _FD_RESERVE)
        self.max_connections = max(1, min(self.limits.max_connections, soft - _FD_RESERVE))
        family = socket.AF_INET6 if ":" in address else socket.AF_INET
        self._listener = socket.socket(family, socket.SOCK_STREAM)
        try:
            self._listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            self._listener.bind((address, port))
            self._listener.listen(min(socket.SOMAXCONN, self.max_connections))
        except OSError:
            self._listener.close()
            raise
        self._listener.setblocking(False)
        self.server_address = self._listener.getsockname()
        self.server_port = self.server_address[1]
        self._wake_r, self._wake_w = socket.socketpair()
        self._wake_r.setblocking(False)
        self._waiting: collections.OrderedDict[socket.socket, float] = collections.OrderedDict()
        self._busy: set[socket.socket] = set()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._stopped = threading.Event()
        self._pool = ThreadPoolExecutor(self.limits.workers, thread_name_prefix="gpuwise-export-worker")
        self.served = 0  # requests answered (for tests and logs)
        self.evicted = 0  # idle connections closed to make room or after idle_timeout_s

    # --- the accept / selector thread -------------------------------------------------------------

    def serve_forever(self) -> None:
        sel = selectors.DefaultSelector()
        sel.register(self._wake_r, selectors.EVENT_READ)
        listening = True
        sel.register(self._listener, selectors.EVENT_READ)
        paused_until = 0.0
        try:
            while not self._stopping.is_set():
                now = time.monotonic()
                if not listening and now >= paused_until:
                    sel.register(self._listener, selectors.EVENT_READ)
                    listening = True
                for key, _mask in sel.select(timeout=self._next_wake(now, paused_until)):
                    sock = key.fileobj
                    if sock is self._wake_r:
                        with contextlib.suppress(OSError):
                            self._wake_r.recv(4096)
                    elif sock is self._listener:
                        if not self._accept_all(sel):  # out of descriptors: stop accepting briefly
                            sel.unregister(self._listener)
                            listening, paused_until = False, time.monotonic() + 0.1
                    else:
                        sel.unregister(sock)
                        del self._waiting[sock]
                        self._dispatch(sock)
                self._expire_idle(sel, time.monotonic())
        finally:
            for sock in list(self._waiting):
                self._drop(sel, sock)
            sel.close()
            self._stopped.set()

    def _next_wake(self, now: float, paused_until: float) -> float:
        wake = 1.0
        if self._waiting:
            oldest = next(iter(self._waiting.values()))
            wake = min(wake, max(0.0, oldest + self.limits.idle_timeout_s - now))
        if paused_until > now:
            wake = min(wake, paused_until - now)
        return wake

    def _accept_all(self, sel: selectors.BaseSelector) -> bool:
        """Accept every pending connection; False when out of file descriptors with nothing to close."""
        while True:
            try:
                sock, _addr = self._listener.accept()
            except (BlockingIOError, InterruptedError):
                return True
            except OSError as exc:
                if exc.errno in (errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM):
                    if self._waiting:
                        self._drop(sel, next(iter(self._waiting)))
                        continue
                    return False
                return True  # ECONNABORTED and the like: that client is gone
            with self._lock:
                held = len(self._waiting) + len(self._busy)
            if held >= self.max_connections:
                if not self._waiting:  # every slot is being served: refuse the newcomer
                    sock.close()
                    continue
                self._drop(sel, next(iter(self._waiting)))
            sock.setblocking(False)
            self._waiting[sock] = time.monotonic()
            sel.register(sock, selectors.EVENT_READ)

    def _expire_idle(self, sel: selectors.BaseSelector, now: float) -> None:
        while self._waiting:
            sock, since = next(iter(self._waiting.items()))
            if now - since < self.limits.idle_timeout_s:
                return
            self._drop(sel, sock)

    def _drop(self, sel: selectors.BaseSelector, sock: socket.socket) -> None:
        del self._waiting[sock]
        with contextlib.suppress(KeyError, ValueError, OSError):
            sel.unregister(sock)
        sock.close()
        self.evicted += 1

    def _dispatch(self, sock: socket.socket) -> None:
        with self._lock:
            self._busy.add(sock)
        try:
            self._pool.submit(self._serve_one, sock)
        except RuntimeError:  # the pool is shutting down
            with self._lock:
                self._busy.discard(sock)
            sock.close()

    # --- worker threads ----------------------------------------------------------------------------

    def _serve_one(self, raw: socket.socket) -> None:
        sock = raw
        deadline = time.monotonic() + self.limits.read_timeout_s
        try:
            sock.setblocking(True)
            if self._ssl is not None:
                sock.settimeout(min(self.limits.handshake_timeout_s, self.limits.read_timeout_s))
                sock = self._ssl.wrap_socket(sock, server_side=True)  # closes the socket if it fails
                with self._lock:
                    self._busy.discard(raw)
                    self._busy.add(sock)
            with_body, bad_request = True, False
            try:
                request = self._read_request(sock, deadline)
                with_body = request.method != "HEAD"
                response = self._handle(request)
            except _BadRequest as bad:
                response = Response(bad.status, [("Content-Type", "text/plain")], bad.status.encode() + b"\n")
                bad_request = True
            self._send(sock, response, deadline, with_body=with_body)
            with self._lock:
                self.served += 1
            if bad_request:  # unread request bytes would turn close() into a reset that eats the reply
                _lingering_close(sock, deadline)
        except (OSError, ValueError):  # timeouts, resets, TLS failures: that client's problem only
            pass
        finally:
            with self._lock:
                self._busy.discard(sock)
                self._busy.discard(raw)
            sock.close()

    def _read_request(self, sock: socket.socket, deadline: float) -> Request:
        data = b""
        while b"\r\n\r\n" not in data and b"\n\n" not in data:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("request not complete before the read deadline")
            sock.settimeout(left)
            chunk = sock.recv(4096)
            if not chunk:
                raise ConnectionError("client closed before a complete request")
            data += chunk
            if len(data) > self.limits.max_request_bytes:
                raise _BadRequest("431 Request Header Fields Too Large")
        head = data.replace(b"\r\n", b"\n").split(b"\n\n", 1)[0].decode("latin-1")
        line, *header_lines = head.split("\n")
        parts = line.split()
        if len(parts) != 3 or not parts[2].startswith("HTTP/"):
            raise _BadRequest("400 Bad Request")
        headers = {}
        for h in header_lines:
            name, sep, value = h.partition(":")
            if sep:
                headers[name.strip().lower()] = value.strip()
        return Request(method=parts[0], path=parts[1].split("?", 1)[0], headers=headers)

    def _send(self, sock: socket.socket, response: Response, deadline: float, *, with_body: bool) -> None:
        head = [f"HTTP/1.1 {response.status}"]
        head += [f"{k}: {v}" for k, v in response.headers]
        head += [f"Content-Length: {len(response.body)}", "Connection: close", "", ""]
        sock.settimeout(max(0.001, deadline - time.monotonic()))
        sock.sendall("\r\n".join(head).encode("latin-1") + (response.body if with_body else b""))

    # --- stopping ------------------------------------------------------------------------------------

    def shutdown(self) -> None:
        """Stop accepting, close waiting connections, cut off requests in flight; returns when done."""
        self._stopping.set()
        with contextlib.suppress(OSError):
            self._wake_w.send(b"x")
        self._stopped.wait(10)
        with self._lock:
            busy = list(self._busy)
        for sock in busy:  # unblock workers stuck on a slow client
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
        self._pool.shutdown(wait=True, cancel_futures=True)
        with self._lock:
            left, self._busy = list(self._busy), set()
        for sock in left:  # queued when the pool stopped: never served
            sock.close()

    def server_close(self) -> None:
        for sock in (self._listener, self._wake_r, self._wake_w):
            sock.close()
