"""Serving the collector: HTTP (optional basic auth and TLS) or node_exporter textfile files.

HTTP is prometheus-client's WSGI app on its ThreadingWSGIServer. TLS takes a certificate and key as
prometheus-client's own start_http_server does; basic auth (which prometheus-client has only as a
client) is a small WSGI check of one user:password from a file, so the secret never sits on a
command line or in `ps`.
"""

from __future__ import annotations

import base64
import hmac
import ssl
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, make_server

from prometheus_client import CollectorRegistry, generate_latest, make_wsgi_app
from prometheus_client.exposition import ThreadingWSGIServer

from gpuwise.atomic import write_text_atomic
from gpuwise.errors import UserInputError
from gpuwise.i18n import _

TEXTFILE_NAME = "gpuwise.prom"


def parse_listen(listen: str) -> tuple[str, int]:
    """'127.0.0.1:9401', '[::1]:9401' or ':9401' (all interfaces) -> (address, port)."""
    host, sep, port = listen.rpartition(":")
    if not sep or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise UserInputError(
            _("--listen {listen!r} is not ADDRESS:PORT").format(listen=listen),
            _("use e.g. --listen 127.0.0.1:9401 or --listen :9401"),
        )
    host = host.strip("[]") or "0.0.0.0"
    return host, int(port)


def read_basic_auth(path: Path) -> tuple[str, str]:
    try:
        line = path.read_text(encoding="utf-8").strip().splitlines()[0]
    except (OSError, IndexError) as exc:
        raise UserInputError(
            _("cannot read the basic-auth file {path}").format(path=path),
            _("write one line USER:PASSWORD to it (mode 600)"),
        ) from exc
    user, sep, password = line.partition(":")
    if not sep or not user or not password:
        raise UserInputError(
            _("{path} does not hold USER:PASSWORD").format(path=path), _("write one line USER:PASSWORD to it")
        )
    return user, password


def basic_auth(app: Callable, user: str, password: str) -> Callable:
    expected = "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()

    def checked(environ: dict[str, Any], start_response: Callable) -> Iterable[bytes]:
        given = environ.get("HTTP_AUTHORIZATION", "")
        if hmac.compare_digest(given.encode(), expected.encode()):
            return app(environ, start_response)
        start_response("401 Unauthorized", [("WWW-Authenticate", 'Basic realm="gpuwise"')])
        return [b"401 Unauthorized\n"]

    return checked


class _QuietHandler(WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # one line per scrape is noise
        pass


def start_server(
    registry: CollectorRegistry,
    address: str,
    port: int,
    *,
    auth: tuple[str, str] | None = None,
    certfile: Path | None = None,
    keyfile: Path | None = None,
) -> tuple[Any, threading.Thread]:
    """Serve /metrics in a daemon thread; returns (server, thread). server.server_port is the bound port."""
    app = make_wsgi_app(registry)
    if auth is not None:
        app = basic_auth(app, *auth)
    try:
        httpd = make_server(address, port, app, ThreadingWSGIServer, handler_class=_QuietHandler)
    except OSError as exc:
        raise UserInputError(
            _("cannot listen on {address}:{port}: {value}").format(
                address=address, port=port, value=exc.strerror or exc
            ),
            _("pick a free port with --listen ADDRESS:PORT (or stop what holds this one)"),
        ) from exc
    if certfile is not None:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        try:
            context.load_cert_chain(str(certfile), str(keyfile) if keyfile else None)
        except (OSError, ssl.SSLError) as exc:
            httpd.server_close()
            raise UserInputError(
                _("cannot load the TLS certificate {certfile}: {exc}").format(certfile=certfile, exc=exc),
                _("pass a PEM certificate and its key"),
            ) from exc
        httpd.socket = context.wrap_socket(httpd.socket, server_side=True)
    thread = threading.Thread(target=httpd.serve_forever, name="gpuwise-export", daemon=True)
    thread.start()
    return httpd, thread


def write_textfile(registry: CollectorRegistry, directory: Path) -> Path:
    """One scrape written atomically to DIR/gpuwise.prom (node_exporter ignores the .tmp file meanwhile)."""
    path = directory / TEXTFILE_NAME
    write_text_atomic(path, generate_latest(registry).decode("utf-8"))
    return path


def textfile_loop(
    registry: CollectorRegistry, directory: Path, interval_s: float, stop: threading.Event
) -> None:
    while not stop.is_set():
        started = time.monotonic()
        write_textfile(registry, directory)
        stop.wait(max(0.0, interval_s - (time.monotonic() - started)))
