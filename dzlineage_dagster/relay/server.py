"""`dzlineage relay`: the relay as a long-running HTTP server (werkzeug), with its spool worker."""

from __future__ import annotations

import ipaddress
import json
import signal
import sys
import threading
from typing import Any

from werkzeug.exceptions import HTTPException
from werkzeug.serving import make_server
from werkzeug.wrappers import Request, Response

from dzlineage_dagster.relay.build import build_relay
from dzlineage_dagster.relay.service import Relay
from dzlineage_dagster.relay.settings import RelaySettings, RelaySettingsError
from dzlineage_dagster.settings import env_name


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False  # a host name may resolve anywhere: treat it as reachable from outside


class RelayApp:
    """WSGI application: werkzeug parses the request, :meth:`Relay.route` answers it."""

    def __init__(self, relay: Relay) -> None:
        self.relay = relay

    def __call__(self, environ: dict[str, Any], start_response: Any) -> Any:
        request = Request(environ)
        # Beyond this werkzeug answers 413 itself, without reading the body into memory.
        request.max_content_length = self.relay.max_body_bytes
        try:
            body = request.get_data(cache=False) if request.method == "POST" else b""
        except HTTPException as error:  # werkzeug's 413 for a body over the limit
            self.relay.count("received")
            answer = self.relay.refuse(error.code or 400, error.description or error.name)
        else:
            answer = self.relay.route(request.method, request.path, request.headers.get, body)
        response = Response(
            json.dumps(answer.body), status=answer.status, mimetype="application/json"
        )
        response.headers.update(answer.headers)
        return response(environ, start_response)


class _Stop(BaseException):
    """SIGTERM, raised in the main thread wherever it is. A BaseException, as Ctrl-C's
    KeyboardInterrupt is: socketserver catches every Exception raised while it hands a request
    to its thread, and a stop that lands there would be logged and the serving go on."""


def _raise_stop(*_: object) -> None:
    raise _Stop


def serve(host: str, port: int) -> int:
    """Run the relay until Ctrl-C or SIGTERM; exit code 0 on a clean stop."""
    try:
        settings = RelaySettings.from_env()
    except RelaySettingsError as error:
        raise SystemExit(f"dzlineage relay: {error}") from None
    if not settings.has_keys and not is_loopback(host):
        raise SystemExit(
            f"dzlineage relay: refusing to listen on {host} without an API key: set "
            f"{env_name('relay_api_key')}, {env_name('relay_keys_file')} or "
            f"{env_name('relay_keys_secret')} (or listen on 127.0.0.1)"
        )
    try:
        relay = build_relay(settings, with_spool=True)
    except RelaySettingsError as error:
        raise SystemExit(f"dzlineage relay: {error}") from None
    try:
        server = make_server(host, port, RelayApp(relay), threaded=True)
    except OSError as error:
        raise SystemExit(f"dzlineage relay: cannot listen on {host}:{port}: {error}") from None
    stop = threading.Event()
    worker = threading.Thread(target=relay.drain, args=(stop,), name="spool-drain", daemon=True)
    worker.start()
    print(
        f"# dzlineage relay on http://{host}:{server.port}/api/v1/lineage -> DataZone domain "
        f"{settings.domain_id}; spool {settings.relay_spool_path} "
        f"({len(relay.spool)} waiting); Ctrl-C stops it",
        flush=True,
    )
    signal.signal(signal.SIGTERM, _raise_stop)
    # A shell starts a background job (`dzlineage relay &`, nohup) with SIGINT ignored, and an
    # ignored signal stays ignored across exec: only `kill -9` would stop it then. The only
    # SIGINT a background job gets is an explicit `kill -INT`, so answering it changes nothing
    # at the terminal.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        server.serve_forever()
    except (KeyboardInterrupt, _Stop):
        pass
    finally:
        stop.set()
        relay.wake()
        server.server_close()
        worker.join(timeout=10)
        relay.spool.close()
    print(f"# dzlineage relay stopped: {json.dumps(relay.status())}", file=sys.stderr)
    return 0
