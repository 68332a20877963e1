"""make run's proxy alone: Caddy on the config the runner writes (``dps_dev.proxy``), validated by
Caddy itself, in front of upstreams that echo what reached them; its log (stderr) kept in a file."""

from __future__ import annotations

import http.client
import json
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from dps_testing.processes import free_port

from dps_dev.proxy import BACKENDS, HEALTH_PATH, caddy_config, config_text, ingress_routes

CADDY = Path(sys.executable).parent / "caddy"


class _Echo(BaseHTTPRequestHandler):
    """An upstream that reads the body (chunked too, as the services do) and answers with its name and
    the headers the proxy sent."""

    def _answer(self) -> None:
        if self.headers.get("transfer-encoding", "").lower() == "chunked":
            while (size := int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)) > 0:
                self.rfile.read(size + 2)
            if not self.rfile.readline():
                return  # the proxy gave up on a broken body: nothing to answer
        else:
            self.rfile.read(int(self.headers.get("content-length") or 0))
        body = json.dumps({"backend": self.server.name, "path": self.path,  # type: ignore[attr-defined]
                           "headers": {k.lower(): v for k, v in self.headers.items()}}).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = _answer

    def log_message(self, *args: object) -> None:
        pass


class _Quiet(ThreadingHTTPServer):
    def handle_error(self, request: object, client_address: object) -> None:
        pass  # a connection the proxy dropped (a broken body it gave up on): nothing to report


@contextmanager
def echo_upstreams() -> Iterator[dict[str, str]]:
    """An echoing upstream per Service of the ingress: its name -> host:port."""
    upstreams, servers = {}, []
    for name in BACKENDS:
        server = _Quiet(("127.0.0.1", 0), _Echo)
        server.name = name  # type: ignore[attr-defined]
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        upstreams[name] = f"127.0.0.1:{server.server_address[1]}"
    try:
        yield upstreams
    finally:
        for server in servers:
            server.shutdown()
            server.server_close()


@contextmanager
def running_caddy(folder: Path, upstreams: dict[str, str]) -> Iterator[tuple[str, Path]]:
    """Caddy in front of ``upstreams``: its address (host:port) and its log file."""
    port = free_port()
    config = folder / "caddy.json"
    config.write_text(config_text(caddy_config(f"127.0.0.1:{port}", upstreams, ingress_routes(), folder / "data")))
    env = {"PATH": "/usr/bin:/bin", "XDG_CONFIG_HOME": str(folder / "config"), "XDG_DATA_HOME": str(folder / "data")}
    checked = subprocess.run([str(CADDY), "validate", "--config", str(config)], env=env, capture_output=True, text=True)
    assert checked.returncode == 0, checked.stderr
    log_path = folder / "caddy.log"
    with open(log_path, "wb") as log:
        caddy = subprocess.Popen([str(CADDY), "run", "--config", str(config)], env=env,
                                 stdout=subprocess.DEVNULL, stderr=log)
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
                connection.request("GET", HEALTH_PATH)
                if connection.getresponse().status == 200:
                    break
            except OSError:
                assert caddy.poll() is None and time.monotonic() < deadline, log_path.read_text()
                time.sleep(0.1)
        yield f"127.0.0.1:{port}", log_path
    finally:
        caddy.terminate()
        caddy.wait(timeout=20)
