"""The network probe and its peer: TCP throughput to a sink that counts what arrived.

The sender streams for `send_s`, closes its side, and the sink answers with the byte count it
received (8 bytes, big-endian) once it has read everything: bytes delivered / time until that answer,
so data still sitting in a send buffer is never counted as sent. The send buffer is kept small so a
slow link cannot hide seconds of data in it. Start the sink on the peer with
`gpuwise stability --sink PORT` (or `python -m gpuwise.stability.network_probe --port PORT`).
"""

from __future__ import annotations

import argparse
import socket
import struct
import threading
import time

from gpuwise.errors import EnvironmentProblem, UserInputError
from gpuwise.i18n import msg

CHUNK = 64 * 1024
SNDBUF = 256 * 1024
ANSWER_TIMEOUT_S = 10.0


def parse_peer(peer: str) -> tuple[str, int]:
    host, sep, port = peer.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise UserInputError(
            msg("--peer {peer} is not HOST:PORT").format(peer=peer),
            msg("pass the peer as HOST:PORT, e.g. --peer 10.0.0.2:5201"),
        )
    return host.strip("[]"), int(port)


def tcp_throughput(host: str, port: int, send_s: float = 0.25) -> float:
    """Bytes per second delivered to the sink at host:port."""
    payload = b"\0" * CHUNK
    try:
        with socket.create_connection((host, port), timeout=5.0) as s:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, SNDBUF)
            start = time.perf_counter()
            deadline = start + send_s
            while time.perf_counter() < deadline:
                s.sendall(payload)
            s.shutdown(socket.SHUT_WR)
            s.settimeout(ANSWER_TIMEOUT_S)
            answer = b""
            while len(answer) < 8:
                part = s.recv(8 - len(answer))
                if not part:
                    break
                answer += part
            elapsed = time.perf_counter() - start
    except OSError as exc:
        raise EnvironmentProblem(
            msg("network probe to {host}:{port} failed: {error}").format(host=host, port=port, error=exc),
            msg(
                "start the sink on the peer (`gpuwise stability --sink {port}`) and check the firewall"
            ).format(port=port),
        ) from None
    if len(answer) != 8:
        raise EnvironmentProblem(
            msg("{host}:{port} did not answer with a byte count: not a gpuwise sink").format(
                host=host, port=port
            ),
            msg("start the sink on the peer with `gpuwise stability --sink {port}`").format(port=port),
        )
    return struct.unpack(">Q", answer)[0] / elapsed


def _serve_one(conn: socket.socket) -> None:
    with conn:
        conn.settimeout(30.0)
        total = 0
        try:
            while True:
                data = conn.recv(1 << 20)
                if not data:
                    break
                total += len(data)
            conn.sendall(struct.pack(">Q", total))
        except OSError:
            return


def serve(
    host: str, port: int, ready: threading.Event | None = None, stop: threading.Event | None = None
) -> None:
    """Count the bytes of every connection and answer with the count; runs until `stop` is set."""
    with socket.create_server((host, port), reuse_port=False, backlog=16) as srv:
        srv.settimeout(0.5)
        if ready is not None:
            ready.set()
        while stop is None or not stop.is_set():
            try:
                conn, _addr = srv.accept()
            except TimeoutError:
                continue
            threading.Thread(target=_serve_one, args=(conn,), daemon=True).start()


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description="gpuwise stability network sink")
    p.add_argument("--host", default="0.0.0.0")
    p.add_argument("--port", type=int, default=5201)
    a = p.parse_args(argv)
    print(f"gpuwise sink listening on {a.host}:{a.port}", flush=True)
    serve(a.host, a.port)


if __name__ == "__main__":
    main()
