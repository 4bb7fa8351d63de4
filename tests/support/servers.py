"""Misbehaving HTTP servers for the tracking fault tests, all on 127.0.0.1 and all stopped by
their context managers: a server that answers ``/health`` and hangs on every API call, a proxy
to a real ``mlflow server`` that freezes once a condition is met, a proxy that answers every
request only after a delay, and an ``mlflow server`` with MLflow's basic-auth app.
"""

from __future__ import annotations

import base64
import contextlib
import http.client
import secrets
import threading
import time
import urllib.parse
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from support.mlflow_server import MlflowServer

HANG_SECONDS = 120.0
"""How long a hanging handler waits at most (it is released when its server stops)."""


@dataclass(frozen=True)
class Call:
    """One request a delaying proxy forwarded: who sent it (the basic-auth user, "" without),
    what it was, when it arrived and was done with (``time.monotonic()``), and whether the
    client was still there to take the answer."""

    user: str
    method: str
    path: str
    arrived: float
    done: float
    answered: bool


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    release: threading.Event
    frozen: threading.Event
    hung: threading.Event
    requests: list[str]
    freeze_when: Callable[[str, str], bool]
    fail_when: Callable[[str, str], bool]
    hang_when: Callable[[str, str], bool]
    upstream: str
    delay: float
    calls: list[Call]


class _HangingHandler(BaseHTTPRequestHandler):
    """200 on ``/health``; any other request is read and never answered."""

    server: _Server

    def log_message(self, format: str, *args: object) -> None:  # quiet
        pass

    def _handle(self) -> None:
        self._read_body()
        self.server.requests.append(f"{self.command} {self.path}")
        if self.path.rstrip("/") == "/health":
            self._answer(200, b"OK", {"Content-Type": "text/plain"})
            return
        self._hang()

    def _hang(self) -> None:
        self.server.hung.set()
        self.server.release.wait(HANG_SECONDS)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _handle

    def _read_body(self) -> bytes:
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def _answer(self, status: int, body: bytes, headers: dict[str, str]) -> None:
        self.send_response(status)
        for key, value in headers.items():
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


class _FreezingProxy(_HangingHandler):
    """Forwards every request to the real server until `freeze_when(method, path)` held for
    one forwarded request; from then on every request but ``/health`` hangs."""

    def _handle(self) -> None:
        body = self._read_body()
        self.server.requests.append(f"{self.command} {self.path}")
        health = self.path.rstrip("/") == "/health"
        if not health and (self.server.frozen.is_set() or self.server.hang_when(*self._call())):
            self._hang()
            return
        if self.server.fail_when(*self._call()):
            self._answer(500, b"broken on purpose", {"Content-Type": "text/plain"})
            return
        status, data, headers = self._forward(body)
        if self.server.freeze_when(*self._call()):
            self.server.frozen.set()
        self._answer(status, data, headers)

    def _forward(self, body: bytes) -> tuple[int, bytes, dict[str, str]]:
        """Send the request to the upstream server; its status, body and content type."""
        target = urllib.parse.urlsplit(self.server.upstream)
        conn = http.client.HTTPConnection(target.hostname or "", target.port, timeout=60)
        skip = {"host", "content-length", "connection", "transfer-encoding"}
        headers = {k: v for k, v in self.headers.items() if k.lower() not in skip}
        try:
            conn.request(self.command, self.path, body=body or None, headers=headers)
            resp = conn.getresponse()
            data = resp.read()
        finally:
            conn.close()
        keep = {"content-type"}
        return resp.status, data, {k: v for k, v in resp.getheaders() if k.lower() in keep}

    def _call(self) -> tuple[str, str]:
        return self.command, self.path

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _handle


class _DelayingProxy(_FreezingProxy):
    """Forwards every request (``/health`` included) to the real server after waiting `delay`
    seconds, and records it as a :class:`Call`."""

    def _handle(self) -> None:
        arrived = time.monotonic()
        body = self._read_body()
        self.server.requests.append(f"{self.command} {self.path}")
        self.server.release.wait(self.server.delay)  # cut short when the proxy stops
        status, data, headers = self._forward(body)
        answered = True
        try:
            self._answer(status, data, headers)
        except (BrokenPipeError, ConnectionResetError):  # the client gave up waiting
            answered = False
        call = Call(self._user(), self.command, self.path, arrived, time.monotonic(), answered)
        self.server.calls.append(call)

    def _user(self) -> str:
        """The basic-auth user name of the request ("" without one)."""
        scheme, _, value = (self.headers.get("Authorization") or "").partition(" ")
        if scheme.lower() != "basic":
            return ""
        with contextlib.suppress(ValueError):
            return base64.b64decode(value).decode("utf-8").partition(":")[0]
        return ""

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _handle


@contextlib.contextmanager
def _serve(handler: type[BaseHTTPRequestHandler], **attrs: object) -> Iterator[_Server]:
    server = _Server(("127.0.0.1", 0), handler)
    server.release = threading.Event()
    server.frozen = threading.Event()
    server.hung = threading.Event()
    server.requests = []
    for key, value in attrs.items():
        setattr(server, key, value)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.release.set()  # let hanging handlers end
        server.shutdown()
        server.server_close()
        thread.join(10)


def uri_of(server: _Server) -> str:
    host, port = server.server_address[:2]
    return f"http://{host!s}:{port}"


@contextlib.contextmanager
def hanging_server() -> Iterator[_Server]:
    """A server whose ``/health`` answers 200 and whose API never answers."""
    with _serve(_HangingHandler) as server:
        yield server


@contextlib.contextmanager
def freezing_proxy(upstream: str, freeze_when: Callable[[str, str], bool]) -> Iterator[_Server]:
    """A proxy to `upstream` that freezes after the first forwarded request for which
    `freeze_when(method, path)` is true (that request is still answered). Set the server's
    `fail_when(method, path)` to answer matching requests with HTTP 500 instead, and its
    `hang_when(method, path)` to hang on matching requests only. `hung` is set once a request
    hangs."""
    never = lambda _m, _p: False  # noqa: E731
    attrs = {
        "upstream": upstream,
        "freeze_when": freeze_when,
        "fail_when": never,
        "hang_when": never,
    }
    with _serve(_FreezingProxy, **attrs) as server:
        yield server


@contextlib.contextmanager
def delaying_proxy(upstream: str, delay: float) -> Iterator[_Server]:
    """A proxy to `upstream` that answers every request `delay` seconds late (the wait comes
    before the request is forwarded, as on a server slow to take it up). Its `calls` list each
    answered request with the basic-auth user that sent it: give each client its own user in
    the URI (``http://NAME:x@host:port``; a server without the auth app ignores it) to tell
    their requests apart."""
    with _serve(_DelayingProxy, upstream=upstream, delay=delay, calls=[]) as server:
        yield server


def start_auth_server(root: Path, user: str, password: str) -> MlflowServer:
    """``mlflow server --app-name basic-auth`` with a temporary user database whose admin is
    `user`/`password` (stop it with ``.stop()``)."""
    ini = root / "basic_auth.ini"
    ini.write_text(
        "[mlflow]\n"
        "default_permission = READ\n"
        f"database_uri = sqlite:///{root / 'auth.db'}\n"
        f"admin_username = {user}\n"
        f"admin_password = {password}\n"
        "authorization_function = mlflow.server.auth:authenticate_request_basic_auth\n",
        encoding="utf-8",
    )
    env = {
        "MLFLOW_AUTH_CONFIG_PATH": str(ini),
        "MLFLOW_FLASK_SERVER_SECRET_KEY": secrets.token_hex(16),  # CSRF protection needs one
    }
    return MlflowServer.start(root, app_name="basic-auth", env=env)
