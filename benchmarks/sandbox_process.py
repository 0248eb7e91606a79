"""The sandbox endpoint in a child process, for measurements.

In-process, the endpoint and the system under test share one interpreter lock, so every call
the system makes waits for the server's Python too and wall times mix both. In its own process
(``dzlineage sandbox``, as a user runs it), the server works on the other core, as AWS would
work elsewhere.
"""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import threading
from dataclasses import dataclass, field

from dzlineage_dagster.sandbox.server.control import SandboxControl, sandbox_environment

_LISTENING = re.compile(r"listening on (http://\S+)")
START_TIMEOUT_SECONDS = 60


@dataclass
class SandboxProcess:
    """``with SandboxProcess() as sandbox:`` serves an empty sandbox on a free port."""

    endpoint_url: str = ""
    _process: subprocess.Popen | None = field(default=None, repr=False)

    @property
    def control(self) -> SandboxControl:
        return SandboxControl(self.endpoint_url)

    def environment(self) -> dict[str, str]:
        return sandbox_environment(self.endpoint_url)

    def start(self) -> SandboxProcess:
        _exit_on_sigterm()
        command = [sys.executable, "-m", "dzlineage_dagster.cli", "sandbox", "--empty"]
        # Port 0: the OS picks a free port, so a sandbox someone else runs is never touched.
        self._process = subprocess.Popen(
            [*command, "--host", "127.0.0.1", "--port", "0"],
            stdout=subprocess.PIPE,
            text=True,
        )
        first_line = self._process.stdout.readline()
        match = _LISTENING.search(first_line)
        if match is None:
            self.stop()
            raise RuntimeError(f"the sandbox did not start: {first_line!r}")
        self.endpoint_url = match.group(1)
        return self

    def stop(self) -> None:
        if self._process is None:
            return
        self._process.terminate()
        try:
            self._process.wait(timeout=START_TIMEOUT_SECONDS)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        self._process.stdout.close()
        self._process = None

    def __enter__(self) -> SandboxProcess:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


def _exit_on_sigterm() -> None:
    """A benchmark stopped with SIGTERM (``kill``, a CI timeout) exits through its ``with``
    blocks, so its sandbox child is stopped too: Python's default ends the process at once and
    left the child serving. Only from the main thread, and only where nobody set a handler."""
    if threading.current_thread() is not threading.main_thread():
        return
    if signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
        signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
