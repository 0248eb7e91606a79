"""`dzlineage relay` as a user runs it: its own process, a real port, stopped by a signal."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from openlineage.client.transport.http import HttpConfig, HttpTransport

DZLINEAGE = str(Path(sys.executable).with_name("dzlineage"))
API_KEY = "relay-test-key-0123456789"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def relay_environment(platform_environment: dict[str, str], **settings: str) -> dict[str, str]:
    """The process environment: nothing of ours from outside, the platform's, and ``settings``.

    The client-side rate limits are off unless ``settings`` turn them on: the sandbox has no
    quotas unless asked, and paced at 20 posts a second the load would measure the pacing.
    """
    base = {k: v for k, v in os.environ.items() if not k.startswith(("DZLINEAGE_", "AWS_"))}
    unpaced = {"DZLINEAGE_CLIENT_RATE_LIMITS": "off"}
    return {**base, **unpaced, **platform_environment, **settings}


@dataclass
class RelayProcess:
    url: str
    process: subprocess.Popen

    def get(self, path: str, api_key: str | None = API_KEY) -> dict[str, Any]:
        """GET ``path`` with the key (``/status`` needs one when the relay has keys)."""
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        request = urllib.request.Request(f"{self.url}{path}", headers=headers)
        with urllib.request.urlopen(request, timeout=10) as response:
            return json.loads(response.read())

    def status(self) -> dict[str, Any]:
        return self.get("/status")

    def post(
        self, body: bytes, *, api_key: str | None = API_KEY, headers: dict[str, str] | None = None
    ) -> tuple[int, dict[str, Any]]:
        """A raw POST to the lineage endpoint: (status, JSON answer), errors included."""
        request = urllib.request.Request(
            f"{self.url}/api/v1/lineage",
            data=body,
            method="POST",
            headers={
                "Content-Type": "application/json",
                **({"Authorization": f"Bearer {api_key}"} if api_key else {}),
                **(headers or {}),
            },
        )
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return response.status, json.loads(response.read())
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read() or b"{}")

    def transport(
        self, *, api_key: str = API_KEY, compression: str | None = None, **options: Any
    ) -> HttpTransport:
        """openlineage-python's own HTTP transport, configured as a producer would."""
        config: dict[str, Any] = {
            "url": self.url,
            "auth": {"type": "api_key", "apiKey": api_key},
            "retry": {"total": 0},
            **options,
        }
        if compression:
            config["compression"] = compression
        return HttpTransport(HttpConfig.from_dict(config))

    def wait_until(self, condition, timeout: float = 600.0) -> dict[str, Any]:
        """Poll /status until ``condition(status)``; the last status either way. The timeout
        only guards against a hang: a busy machine may take long, and a test asserts on what
        the status says, never on how soon it said it."""
        deadline = time.monotonic() + timeout
        while True:
            status = self.status()
            if condition(status) or time.monotonic() > deadline:
                return status
            time.sleep(0.1)

    def stop(self, how: signal.Signals = signal.SIGTERM) -> str:
        """SIGTERM as a service manager stops it (or SIGINT: Ctrl-C); stderr of a clean exit."""
        self.process.send_signal(how)
        _, stderr = self.process.communicate(timeout=30)
        assert self.process.returncode == 0, stderr
        assert "Traceback" not in stderr, stderr
        return stderr


@contextmanager
def running_relay(
    environment: dict[str, str], spool: Path, *, sigint_ignored: bool = False
) -> Iterator[RelayProcess]:
    """A relay process on a free loopback port, with ``spool`` as its spool file;
    ``sigint_ignored``: started as a shell starts a background job (SIGINT ignored)."""
    port = free_port()
    env = {"DZLINEAGE_RELAY_SPOOL_PATH": str(spool), **environment}
    process = subprocess.Popen(
        [DZLINEAGE, "relay", "--port", str(port)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=_ignore_sigint if sigint_ignored else None,
    )
    relay = RelayProcess(f"http://127.0.0.1:{port}", process)
    try:
        # Generous: a loaded CI machine starts a Python process slowly; a healthy one is up
        # in a few seconds.
        deadline = time.monotonic() + 300
        while True:
            if process.poll() is not None:
                raise AssertionError(f"the relay exited: {process.communicate()}")
            try:
                if relay.get("/healthz")["status"] == "ok":
                    break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
        yield relay
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()


def _ignore_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
