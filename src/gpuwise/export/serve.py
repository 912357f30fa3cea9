"""Serving the collector: HTTP (optional basic auth and TLS) or node_exporter textfile files.

HTTP(S) is http_server.MetricsServer (bounded threads, timeouts, a connection cap; TLS handshakes
off the accept path). Basic auth checks one user:password read from a file, so the secret never sits
on a command line or in `ps`.
"""

from __future__ import annotations

import base64
import gzip
import hmac
import ssl
import threading
import time
from collections.abc import Callable
from pathlib import Path

from prometheus_client import CollectorRegistry

from gpuwise.atomic import write_text_atomic
from gpuwise.errors import UserInputError
from gpuwise.export import exposition, http_server
from gpuwise.i18n import msg

TEXTFILE_NAME = "gpuwise.prom"


def parse_listen(listen: str) -> tuple[str, int]:
    """'127.0.0.1:9401', '[::1]:9401' or ':9401' (all interfaces) -> (address, port)."""
    host, sep, port = listen.rpartition(":")
    if not sep or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise UserInputError(
            msg("--listen {listen!r} is not ADDRESS:PORT").format(listen=listen),
            msg("use e.g. --listen 127.0.0.1:9401 or --listen :9401"),
        )
    host = host.strip("[]") or "0.0.0.0"
    return host, int(port)


def read_basic_auth(path: Path) -> tuple[str, str]:
    try:
        line = path.read_text(encoding="utf-8").strip().splitlines()[0]
    except (OSError, IndexError) as exc:
        raise UserInputError(
            msg("cannot read the basic-auth file {path}").format(path=path),
            msg("write one line USER:PASSWORD to it (mode 600)"),
        ) from exc
    user, sep, password = line.partition(":")
    if not sep or not user or not password:
        raise UserInputError(
            msg("{path} does not hold USER:PASSWORD").format(path=path),
            msg("write one line USER:PASSWORD to it"),
        )
    return user, password


def metrics_handler(
    render: Callable[[], bytes], auth: tuple[str, str] | None = None
) -> Callable[[http_server.Request], http_server.Response]:
    """GET/HEAD on any path but /favicon.ico -> one scrape in the Prometheus text format (gzip if asked)."""
    expected = None if auth is None else "Basic " + base64.b64encode(f"{auth[0]}:{auth[1]}".encode()).decode()

    def handle(request: http_server.Request) -> http_server.Response:
        text = [("Content-Type", "text/plain; charset=utf-8")]
        if expected is not None and not hmac.compare_digest(
            request.headers.get("authorization", "").encode(), expected.encode()
        ):
            return http_server.Response(
                "401 Unauthorized",
                [*text, ("WWW-Authenticate", 'Basic realm="gpuwise"')],
                b"401 Unauthorized\n",
            )
        if request.method not in ("GET", "HEAD"):
            return http_server.Response("405 Method Not Allowed", [*text, ("Allow", "GET, HEAD")], b"")
        if request.path == "/favicon.ico":
            return http_server.Response("404 Not Found", text, b"")
        try:
            body = render()
        except Exception as exc:  # a collector bug costs this scrape, not the exporter
            return http_server.Response("500 Internal Server Error", text, f"{type(exc).__name__}\n".encode())
        headers = [("Content-Type", exposition.CONTENT_TYPE)]
        if "gzip" in request.headers.get("accept-encoding", ""):
            body = gzip.compress(body, compresslevel=1)
            headers.append(("Content-Encoding", "gzip"))
        return http_server.Response("200 OK", headers, body)

    return handle


def start_server(
    registry: CollectorRegistry,
    address: str,
    port: int,
    *,
    auth: tuple[str, str] | None = None,
    certfile: Path | None = None,
    keyfile: Path | None = None,
    limits: http_server.Limits | None = None,
) -> tuple[http_server.MetricsServer, threading.Thread]:
    """Serve /metrics in a daemon thread; returns (server, thread). server.server_port is the bound port."""
    context = None
    if certfile is not None:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.minimum_version = ssl.TLSVersion.TLSv1_2
        try:
            context.load_cert_chain(str(certfile), str(keyfile) if keyfile else None)
        except (OSError, ssl.SSLError) as exc:
            raise UserInputError(
                msg("cannot load the TLS certificate {certfile}: {exc}").format(certfile=certfile, exc=exc),
                msg("pass a PEM certificate and its key"),
            ) from exc
    handle = metrics_handler(lambda: exposition.render(registry), auth)
    try:
        httpd = http_server.MetricsServer(address, port, handle, ssl_context=context, limits=limits)
    except OSError as exc:
        raise UserInputError(
            msg("cannot listen on {address}:{port}: {value}").format(
                address=address, port=port, value=exc.strerror or exc
            ),
            msg("pick a free port with --listen ADDRESS:PORT (or stop what holds this one)"),
        ) from exc
    thread = threading.Thread(target=httpd.serve_forever, name="gpuwise-export", daemon=True)
    thread.start()
    return httpd, thread


def write_textfile(registry: CollectorRegistry, directory: Path) -> Path:
    """One scrape written atomically to DIR/gpuwise.prom (node_exporter ignores the .tmp file meanwhile)."""
    path = directory / TEXTFILE_NAME
    write_text_atomic(path, exposition.render(registry).decode("utf-8"))
    return path


def textfile_loop(
    registry: CollectorRegistry, directory: Path, interval_s: float, stop: threading.Event
) -> None:
    while not stop.is_set():
        started = time.monotonic()
        write_textfile(registry, directory)
        stop.wait(max(0.0, interval_s - (time.monotonic() - started)))
