"""A small HTTP(S) server for /metrics that idle, slow or hostile connections cannot stop.

One thread accepts connections and does all their reading without blocking, through a selector: the
TLS handshake (handshake_timeout_s once the client has started it) and the request head (a deadline,
read_timeout_s, and a size cap). Only a complete request goes to one of a fixed pool of worker
threads, which collects the metrics, answers and closes. A connection that sends nothing is closed
after idle_timeout_s, and at max_connections the oldest connection still being read makes room for the
new one. So idle or stalled clients cost file descriptors, never threads, and never lock a scraper out.
Limits and their sources: data/http_limits.yaml.

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

from gpuwise.i18n import joined
from gpuwise.thresholds import load_thresholds


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
    rows = load_thresholds("gpuwise.export", "data/http_limits.yaml")
    kinds = Limits.__annotations__
    return Limits(**{k: (int if kinds[k] == "int" else float)(rows[k].value) for k in kinds})


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


def parse_head(data: bytes) -> Request:
    """The request line and headers (everything before the blank line) -> Request, or _BadRequest."""
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


def _head_complete(data: bytes) -> bool:
    return b"\r\n\r\n" in data or b"\n\n" in data


class _Conn:
    """A connection the selector thread is still reading: TLS handshake, then the request head."""

    __slots__ = ("sock", "deadline", "started", "handshaking", "data")

    def __init__(self, sock: socket.socket, now: float, idle_timeout_s: float, tls: bool) -> None:
        self.sock = sock
        self.deadline = now + idle_timeout_s  # until the first byte; then the request's deadline
        self.started: float | None = None  # when the first byte arrived
        self.handshaking = tls
        self.data = b""


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
        self._reading: collections.OrderedDict[socket.socket, _Conn] = collections.OrderedDict()
        self._busy: set[socket.socket] = set()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._stopped = threading.Event()
        self._pool = ThreadPoolExecutor(self.limits.workers, thread_name_prefix="gpuwise-export-worker")
        self.served = 0  # requests answered (for tests and logs)
        self.dropped = 0  # connections closed unanswered: idle, too slow, or evicted at the cap

    # --- the selector thread: accept, handshake, read request heads ---------------------------------

    def serve_forever(self) -> None:
        sel = selectors.DefaultSelector()
        sel.register(self._wake_r, selectors.EVENT_READ)
        sel.register(self._listener, selectors.EVENT_READ)
        listening, paused_until, next_sweep = True, 0.0, 0.0
        try:
            while not self._stopping.is_set():
                now = time.monotonic()
                if not listening and now >= paused_until:
                    sel.register(self._listener, selectors.EVENT_READ)
                    listening = True
                for key, _mask in sel.select(timeout=0.25):
                    sock = key.fileobj
                    if sock is self._wake_r:
                        with contextlib.suppress(OSError):
                            self._wake_r.recv(4096)
                    elif sock is self._listener:
                        if not self._accept_all(sel):  # out of descriptors: stop accepting briefly
                            sel.unregister(self._listener)
                            listening, paused_until = False, time.monotonic() + 0.1
                    elif sock in self._reading:
                        self._advance(sel, self._reading[sock])
                now = time.monotonic()
                if now >= next_sweep:
                    self._sweep(sel, now)
                    next_sweep = now + 0.25
        finally:
            for sock in list(self._reading):
                self._drop(sel, sock)
            sel.close()
            self._stopped.set()

    def _accept_all(self, sel: selectors.BaseSelector) -> bool:
        """Accept every pending connection; False when out of file descriptors with nothing to close."""
        while True:
            try:
                sock, _addr = self._listener.accept()
            except (BlockingIOError, InterruptedError):
                return True
            except OSError as exc:
                if exc.errno in (errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM):
                    if self._reading:
                        self._drop(sel, next(iter(self._reading)))
                        continue
                    return False
                return True  # ECONNABORTED and the like: that client is gone
            with self._lock:
                held = len(self._reading) + len(self._busy)
            if held >= self.max_connections:
                if not self._reading:  # every slot is being answered: refuse the newcomer
                    sock.close()
                    self.dropped += 1
                    continue
                self._drop(sel, next(iter(self._reading)))  # the oldest connection still being read
            sock.setblocking(False)
            if self._ssl is not None:
                try:  # no I/O yet: the handshake is driven by _advance as bytes arrive
                    sock = self._ssl.wrap_socket(sock, server_side=True, do_handshake_on_connect=False)
                except (OSError, ValueError):
                    sock.close()
                    continue
            now = time.monotonic()
            self._reading[sock] = _Conn(sock, now, self.limits.idle_timeout_s, self._ssl is not None)
            sel.register(sock, selectors.EVENT_READ)

    def _advance(self, sel: selectors.BaseSelector, conn: _Conn) -> None:
        """Bytes (or room to write handshake bytes) arrived: take the connection as far as it goes."""
        if conn.started is None:  # the first bytes: from now on the client must keep up
            conn.started = time.monotonic()
            timeout = self.limits.handshake_timeout_s if conn.handshaking else self.limits.read_timeout_s
            conn.deadline = conn.started + min(timeout, self.limits.read_timeout_s)
        sock = conn.sock
        try:
            if conn.handshaking:
                try:
                    sock.do_handshake()
                except ssl.SSLWantReadError:
                    sel.modify(sock, selectors.EVENT_READ)
                    return
                except ssl.SSLWantWriteError:
                    sel.modify(sock, selectors.EVENT_WRITE)
                    return
                conn.handshaking = False
                conn.deadline = conn.started + self.limits.read_timeout_s
                sel.modify(sock, selectors.EVENT_READ)
            while not _head_complete(conn.data):
                try:
                    chunk = sock.recv(4096)
                except (BlockingIOError, ssl.SSLWantReadError, ssl.SSLWantWriteError):
                    return
                if not chunk:
                    self._drop(sel, sock)
                    return
                conn.data += chunk
                if len(conn.data) > self.limits.max_request_bytes:
                    break
        except (OSError, ValueError):  # resets, TLS alerts and garbage: that client's problem only
            self._drop(sel, sock)
            return
        del self._reading[sock]
        sel.unregister(sock)
        self._dispatch(conn)

    def _sweep(self, sel: selectors.BaseSelector, now: float) -> None:
        """Close connections past their deadline: idle ones, and ones too slow to finish a request."""
        late = [sock for sock, conn in self._reading.items() if now >= conn.deadline]
        for sock in late:
            self._drop(sel, sock)

    def _drop(self, sel: selectors.BaseSelector, sock: socket.socket) -> None:
        del self._reading[sock]
        with contextlib.suppress(KeyError, ValueError, OSError):
            sel.unregister(sock)
        sock.close()
        self.dropped += 1

    def _dispatch(self, conn: _Conn) -> None:
        with self._lock:
            self._busy.add(conn.sock)
        try:
            self._pool.submit(self._answer, conn)
        except RuntimeError:  # the pool is shutting down
            with self._lock:
                self._busy.discard(conn.sock)
            conn.sock.close()

    # --- worker threads: collect, answer, close ------------------------------------------------------

    def _answer(self, conn: _Conn) -> None:
        sock = conn.sock
        deadline = time.monotonic() + self.limits.read_timeout_s  # for writing the answer
        try:
            with_body, bad_request = True, False
            try:
                if len(conn.data) > self.limits.max_request_bytes:
                    raise _BadRequest("431 Request Header Fields Too Large")
                request = parse_head(conn.data)
                with_body = request.method != "HEAD"
                response = self._handle(request)
            except _BadRequest as bad:
                response = Response(bad.status, [("Content-Type", "text/plain")], bad.status.encode() + b"\n")
                bad_request = True
            sock.settimeout(max(0.001, deadline - time.monotonic()))
            self._send(sock, response, with_body=with_body)
            with self._lock:
                self.served += 1
            if bad_request:  # unread request bytes would turn close() into a reset that eats the reply
                _lingering_close(sock, deadline)
        except (OSError, ValueError):  # timeouts, resets: that client's problem only
            pass
        finally:
            with self._lock:
                self._busy.discard(sock)
            sock.close()

    @staticmethod
    def _send(sock: socket.socket, response: Response, *, with_body: bool) -> None:
        head = [f"HTTP/1.1 {response.status}"]
        head += [f"{k}: {v}" for k, v in response.headers]
        head += [f"Content-Length: {len(response.body)}", "Connection: close", "", ""]
        sock.sendall(joined("\r\n", head).encode("latin-1") + (response.body if with_body else b""))

    # --- stopping ------------------------------------------------------------------------------------

    def shutdown(self) -> None:
        """Stop accepting, close connections being read, cut off answers in flight; returns when done."""
        self._stopping.set()
        with contextlib.suppress(OSError):
            self._wake_w.send(b"x")
        self._stopped.wait(10)
        with self._lock:
            busy = list(self._busy)
        for sock in busy:  # unblock workers stuck writing to a slow client
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
        self._pool.shutdown(wait=True, cancel_futures=True)
        with self._lock:
            left, self._busy = list(self._busy), set()
        for sock in left:  # queued when the pool stopped: never answered
            sock.close()

    def server_close(self) -> None:
        for sock in (self._listener, self._wake_r, self._wake_w):
            sock.close()
