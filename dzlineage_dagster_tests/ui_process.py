"""`dzlineage demo` as a child process group, for tests that drive its Dagster UI.

The demo runs in its own session so that stopping it reaches every process it started
(`dagster dev`, the webserver, the daemon, code servers and run workers), the way Ctrl-C in a
terminal reaches the whole foreground process group.
"""

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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dzlineage_dagster.sandbox.commands import DEMO_ENV_FILE
from dzlineage_dagster_tests.clients import read_env_file

TERMINAL_RUN_STATUSES = {"SUCCESS", "FAILURE", "CANCELED"}

SENSOR_RUNS_QUERY = """
query SensorRuns($filter: RunsFilter) {
  runsOrError(filter: $filter) {
    __typename
    ... on Runs { results { runId jobName status } }
    ... on PythonError { message }
  }
}
"""

#: The sync's per-topic assets, whose partitions Dagster's UI marks "Unsynced" when stale.
PARTITIONED_ASSETS = ("registry_schema", "datazone_topic_asset", "topic_lineage")
#: What Dagster's UI asks its GraphQL server about the asset graph: "Unsynced" is a stale
#: status, its causes the lines under it; each check's page shows its latest evaluation.
UI_STATE_QUERY = """
query UiState($partitioned: [AssetKeyInput!]) {
  partitioned: assetNodes(assetKeys: $partitioned) {
    assetKey { path }
    partitionKeysByDimension { partitionKeys }
    staleStatusByPartition
    staleCausesByPartition { reason dependency { path } }
  }
  nodes: assetNodes {
    assetKey { path }
    isObservable
    dataVersion
    staleStatus
    staleCauses { reason dependency { path } }
    assetChecksOrError {
      ... on AssetChecks {
        checks {
          name
          description
          executionForLatestMaterialization {
            evaluation { success description metadataEntries { label } }
          }
        }
      }
    }
  }
}
"""
UI_STATE_VARIABLES = {"partitioned": [{"path": [asset]} for asset in PARTITIONED_ASSETS]}
#: Reported on a topic's partition when its schema gets a new version, not by catalog_checks.
PER_TOPIC_CHECK = "schema_change_is_compatible"


def untruthful_ui(state: dict[str, Any], failing_checks: set[str]) -> list[str]:
    """What the UI (``UI_STATE_QUERY``'s answer) shows wrongly after a first sync and the
    checks it sets off: a partition or an unpartitioned asset that reads "Unsynced", a check
    not evaluated, a check failing other than ``failing_checks``, a failing check that does not
    say why and what to do."""
    wrong = []
    for node in state["partitioned"]:
        [dimension] = node["partitionKeysByDimension"]
        for key, status, causes in zip(
            dimension["partitionKeys"],
            node["staleStatusByPartition"],
            node["staleCausesByPartition"],
            strict=True,
        ):
            if status != "FRESH" or causes:
                wrong.append(f"{'/'.join(node['assetKey']['path'])}[{key}] {status}: {causes}")
    results = {}
    for node in state["nodes"]:
        # A team's asset never materialized is MISSING, not "Unsynced" (STALE).
        if node["staleStatus"] == "STALE" or node["staleCauses"]:
            wrong.append(f"{'/'.join(node['assetKey']['path'])}: {node['staleCauses']}")
        for check in node["assetChecksOrError"].get("checks", []):
            if check["name"] != PER_TOPIC_CHECK:
                results[check["name"]] = (check, check["executionForLatestMaterialization"])
    for name, (check, execution) in sorted(results.items()):
        if not execution or not execution["evaluation"]:
            wrong.append(f"{name}: not evaluated")
            continue
        evaluation = execution["evaluation"]
        if evaluation["success"]:
            continue
        if name not in failing_checks:
            wrong.append(f"{name} failed: {evaluation['description']}")
        labels = {entry["label"] for entry in evaluation["metadataEntries"]}
        if not (check["description"] and evaluation["description"]):
            wrong.append(f"{name} fails without a description")
        if not {"why", "what to do"} <= labels:
            wrong.append(f"{name} fails without why and what to do: {sorted(labels)}")
    return wrong


def free_ports(count: int) -> list[int]:
    """Distinct loopback ports that are free now (all held open together while choosing)."""
    probes = [socket.socket() for _ in range(count)]
    try:
        for probe in probes:
            probe.bind(("127.0.0.1", 0))
        return [probe.getsockname()[1] for probe in probes]
    finally:
        for probe in probes:
            probe.close()


@dataclass
class DemoProcess:
    process: subprocess.Popen[bytes]
    ui_url: str
    dagster_home: Path
    env_file: Path
    log_path: Path
    started_at: float = field(default_factory=time.monotonic)
    stopped_by_sigterm: bool | None = None

    def seconds_left(self, budget: float) -> float:
        """What remains of ``budget`` seconds counted from the demo's start."""
        return budget - (time.monotonic() - self.started_at)

    def environment(self) -> dict[str, str]:
        """What the demo printed to its --env-file: the sandbox endpoint and DZLINEAGE_* ids."""
        return read_env_file(self.env_file)

    def log_tail(self, lines: int = 40) -> str:
        text = self.log_path.read_text(errors="replace") if self.log_path.exists() else ""
        return "\n".join(text.splitlines()[-lines:])

    def wait_for_output(self, text: str, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while text not in self.log_path.read_text(errors="replace"):
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise TimeoutError(
                    f"the demo did not print {text!r} within {timeout:.0f} s (exit code "
                    f"{self.process.returncode}); its output ends with:\n{self.log_tail()}"
                )
            time.sleep(0.05)

    def wait_until_ui_answers(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(
                    f"dzlineage demo exited with {self.process.returncode} before the UI "
                    f"answered; its output ends with:\n{self.log_tail()}"
                )
            if _answers(f"{self.ui_url}/server_info") and self.env_file.exists():
                return
            time.sleep(1)
        raise TimeoutError(
            f"the Dagster UI at {self.ui_url} did not answer within {timeout:.0f} s; "
            f"dzlineage demo's output ends with:\n{self.log_tail()}"
        )

    def stop(self, terminate_grace: float = 30) -> bool:
        """SIGTERM to the demo alone, as a service manager sends it; True if that sufficed.

        The demo must take its whole Dagster tree down itself. Only if it does not, the whole
        process group gets SIGINT, SIGTERM and SIGKILL, each bounded, so nothing is left over.
        """
        self.process.terminate()
        if _wait_until_group_gone(self.process, terminate_grace):
            return True
        for sig, grace in ((signal.SIGINT, 10), (signal.SIGTERM, 10), (signal.SIGKILL, 5)):
            try:
                os.killpg(self.process.pid, sig)
            except ProcessLookupError:
                break
            if _wait_until_group_gone(self.process, grace):
                break
        return False

    def leftover_processes(self) -> list[str]:
        """Live processes still in the demo's group or naming its DAGSTER_HOME."""
        home = str(self.dagster_home)
        return [
            f"{pid} {cmdline[:200]}"
            for pid, pgid, cmdline in _live_processes()
            if pgid == self.process.pid or home in cmdline
        ]


def start_demo(
    workdir: Path,
    *,
    dagster_home: Path | None = None,
    env_file: Path | None = None,
    extra_env: dict[str, str] | None = None,
    ignore_sigint: bool = False,
) -> DemoProcess:
    """Start `dzlineage demo` in ``workdir`` on free loopback ports, output to ``demo.log``.

    Without ``dagster_home`` the demo makes (and must remove) a temporary one: under
    ``workdir/tmp``, so a test can see it. Without ``env_file`` it writes its default one in
    ``workdir``.
    """
    sandbox_port, ui_port = free_ports(2)
    temporary_root = workdir / "tmp"
    temporary_root.mkdir(exist_ok=True)
    command = [
        sys.executable, "-m", "dzlineage_dagster.cli", "demo",
        "--port", str(sandbox_port), "--dagster-port", str(ui_port),
    ]  # fmt: skip
    if dagster_home is not None:
        command += ["--dagster-home", str(dagster_home)]
    if env_file is not None:
        command += ["--env-file", str(env_file)]
    log_path = workdir / "demo.log"
    environment = {**os.environ, "TMPDIR": str(temporary_root), **(extra_env or {})}
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            command,
            cwd=workdir,
            env=environment,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=_ignore_sigint if ignore_sigint else None,
        )
    return DemoProcess(
        process,
        f"http://127.0.0.1:{ui_port}",
        dagster_home or temporary_root,
        env_file or workdir / DEMO_ENV_FILE,
        log_path,
    )


@contextmanager
def running_demo(workdir: Path, startup_timeout: float = 90) -> Iterator[DemoProcess]:
    """`dzlineage demo` with its UI up, its process group always stopped afterwards."""
    # A stale .env where the demo starts, as `dzlineage sandbox --env-file .env` leaves one: the
    # demo must not let `dagster dev` load it over the fresh sandbox's environment.
    (workdir / ".env").write_text(
        "AWS_ENDPOINT_URL=http://127.0.0.1:9\nDZLINEAGE_DOMAIN_ID=dzd_stale0000000\n"
    )
    demo = start_demo(workdir, dagster_home=workdir / "dagster_home", env_file=workdir / "demo.env")
    try:
        demo.wait_until_ui_answers(startup_timeout)
        yield demo
    finally:
        demo.stopped_by_sigterm = demo.stop()


def graphql(ui_url: str, query: str, variables: dict[str, Any] | None = None) -> dict[str, Any]:
    body = json.dumps({"query": query, "variables": variables or {}}).encode()
    request = urllib.request.Request(
        f"{ui_url}/graphql", data=body, headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=15) as response:
        payload = json.loads(response.read())
    if payload.get("errors"):
        raise RuntimeError(f"GraphQL errors: {payload['errors']}")
    return payload["data"]


def wait_for_sensor_runs(ui_url: str, sensor_name: str, timeout: float) -> list[dict[str, Any]]:
    """The runs the sensor launched, once there is at least one and all of them have ended."""
    tags_filter = {"tags": [{"key": "dagster/sensor_name", "value": sensor_name}]}
    deadline = time.monotonic() + timeout
    runs: list[dict[str, Any]] = []
    while time.monotonic() < deadline:
        result = graphql(ui_url, SENSOR_RUNS_QUERY, {"filter": tags_filter})["runsOrError"]
        if result["__typename"] != "Runs":
            raise RuntimeError(f"runsOrError: {result}")
        runs = result["results"]
        if runs and all(run["status"] in TERMINAL_RUN_STATUSES for run in runs):
            return runs
        time.sleep(2)
    raise TimeoutError(
        f"{sensor_name} had not launched a finished run within {timeout:.0f} s; runs: {runs}"
    )


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.status == 200
    except (urllib.error.URLError, OSError):
        return False


def _wait_until_group_gone(process: subprocess.Popen[bytes], timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        process.poll()  # reap our own child so it does not linger as a zombie
        if not any(pgid == process.pid for _, pgid, _ in _live_processes()):
            return True
        time.sleep(0.25)
    return False


def _live_processes() -> Iterator[tuple[int, int, str]]:
    """(pid, process group, command line) of every process that is not a zombie (Linux /proc)."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        # The command name in parentheses may hold spaces: the fields after it are fixed.
        state, _ppid, pgid = stat.rsplit(")", 1)[1].split()[:3]
        if state != "Z":
            yield int(entry.name), int(pgid), cmdline


def _ignore_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
