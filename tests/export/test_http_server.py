"""The exporter's HTTP server in-process, with small limits: cap, idle timeout, size cap, read deadline."""

from __future__ import annotations

import contextlib
import socket
import threading
import time

import pytest

from gpuwise.export.http_server import Limits, MetricsServer, Response, default_limits

SMALL = Limits(
    max_connections=5,
    workers=1,
    handshake_timeout_s=0.5,
    read_timeout_s=0.5,
    idle_timeout_s=0.5,
    max_request_bytes=1024,
)


@pytest.fixture
def server():
    httpd = MetricsServer(
        "127.0.0.1", 0, lambda req: Response("200 OK", [], b"ok " + req.path.encode()), limits=SMALL
    )
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield httpd
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(10)


def get(port: int, request: bytes = b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n") -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(request)
        data = b""
        while chunk := s.recv(4096):
            data += chunk
    return data


def closed_by_server(sock: socket.socket, within_s: float) -> bool:
    sock.settimeout(within_s)
    try:
        return sock.recv(1) == b""
    except TimeoutError:
        return False
    except ConnectionResetError:
        return True


def test_shipped_limits_load_with_sources():
    limits = default_limits()
    assert limits.max_connections >= 1000 and limits.workers >= 1
    assert limits.handshake_timeout_s <= limits.read_timeout_s


def test_at_the_cap_the_oldest_idle_connection_makes_room(server):
    with contextlib.ExitStack() as stack:
        idle = [
            stack.enter_context(socket.create_connection(("127.0.0.1", server.server_port))) for _ in range(5)
        ]
        time.sleep(0.1)
        reply = get(server.server_port)  # the sixth connection: the oldest idle one is closed for it
        assert reply.startswith(b"HTTP/1.1 200 OK") and reply.endswith(b"ok /metrics")
        assert closed_by_server(idle[0], 2.0)


def test_a_connection_that_never_sends_is_closed_after_the_idle_timeout(server):
    started = time.monotonic()  # before the connection: the server's idle clock starts at its accept
    with socket.create_connection(("127.0.0.1", server.server_port)) as s:
        assert closed_by_server(s, 10.0)
        assert 0.4 <= time.monotonic() - started < 5.0


def test_stalled_requests_hold_no_worker_and_are_cut_at_the_read_deadline():
    # one worker and a 5 s read deadline: 20 clients that send half a request and stall must not make
    # a complete request wait for them (a worker per connection would take 5 s per stalled client)
    limits = Limits(
        max_connections=64,
        workers=1,
        handshake_timeout_s=5.0,
        read_timeout_s=5.0,
        idle_timeout_s=60.0,
        max_request_bytes=1024,
    )
    httpd = MetricsServer("127.0.0.1", 0, lambda req: Response("200 OK", [], b"ok"), limits=limits)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        with contextlib.ExitStack() as stack:
            slow = [
                stack.enter_context(socket.create_connection(("127.0.0.1", httpd.server_port)))
                for _ in range(20)
            ]
            for s in slow:
                s.sendall(b"GET /metrics HT")
            time.sleep(0.2)
            started = time.monotonic()
            assert get(httpd.server_port).startswith(b"HTTP/1.1 200 OK")
            assert time.monotonic() - started < 2.5  # well under the 5 s one stalled client could hold
            assert closed_by_server(slow[0], 15.0)  # cut at its deadline, not held forever
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(10)


def test_oversized_and_malformed_requests_get_4xx(server):
    huge = b"GET / HTTP/1.1\r\nX: " + b"a" * 4096 + b"\r\n\r\n"
    assert get(server.server_port, huge).startswith(b"HTTP/1.1 431 ")
    assert get(server.server_port, b"garbage\r\n\r\n").startswith(b"HTTP/1.1 400 ")
