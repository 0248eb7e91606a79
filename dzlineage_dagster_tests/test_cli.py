"""The `dzlineage` command as a user runs it: a separate process, real ports, real signals."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time

import pytest

from dzlineage_dagster.sandbox.commands import DEMO_ENV_FILE, build_parser
from dzlineage_dagster.settings import LineageSettings, env_name
from dzlineage_dagster_tests.clients import read_env_file, sandbox_client, written_env_file
from dzlineage_dagster_tests.ui_process import start_demo
from dzlineage_dagster_tests.waits import HANG_GUARD_SECONDS

COMMAND = [sys.executable, "-m", "dzlineage_dagster.cli"]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.mark.parametrize("subcommand", ["sandbox", "demo", "sync", "settings"])
def test_every_subcommand_documents_its_options(subcommand):
    result = subprocess.run([*COMMAND, subcommand, "--help"], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert "usage: dzlineage" in result.stdout


def test_sandbox_serves_the_seeded_platform_and_writes_its_environment(tmp_path):
    env_file = tmp_path / "sandbox.env"
    port = free_port()
    process = subprocess.Popen(
        [*COMMAND, "sandbox", "--port", str(port), "--env-file", str(env_file)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        environment = written_env_file(process, env_file)
        assert environment["AWS_ENDPOINT_URL"] == f"http://127.0.0.1:{port}"
        required = [env_name(n) for n, f in LineageSettings.model_fields.items() if f.is_required()]
        assert set(required) <= set(environment)

        glue = sandbox_client(environment, "glue")
        schemas = glue.list_schemas(
            RegistryId={"RegistryName": environment["DZLINEAGE_REGISTRY_NAME"]}
        )["Schemas"]
        assert any(s["SchemaName"].startswith("__debezium-heartbeat") for s in schemas)
        datazone = sandbox_client(environment, "datazone")
        domain = datazone.get_domain(identifier=environment["DZLINEAGE_DOMAIN_ID"])
        assert domain["portalUrl"].startswith("https://")
    finally:
        process.send_signal(signal.SIGINT)
        output, _ = process.communicate(timeout=30)
    assert process.returncode == 0
    assert f"export AWS_ENDPOINT_URL=http://127.0.0.1:{port}" in output


def test_sync_without_settings_names_what_is_missing(tmp_path):
    clean = {k: v for k, v in os.environ.items() if not k.startswith("DZLINEAGE_")}
    result = subprocess.run(
        [*COMMAND, "sync", "--dry-run"], capture_output=True, text=True, env=clean, cwd=tmp_path
    )
    assert result.returncode != 0
    assert "DZLINEAGE_DOMAIN_ID" in result.stderr and "dzlineage sandbox" in result.stderr


def test_sandbox_stops_cleanly_on_sigterm_too(tmp_path):
    env_file = tmp_path / "sandbox.env"
    process = subprocess.Popen(
        [*COMMAND, "sandbox", "--empty", "--port", str(free_port()), "--env-file", str(env_file)],
        stdout=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + HANG_GUARD_SECONDS
    while not env_file.exists() and time.monotonic() < deadline:
        time.sleep(0.2)
    process.terminate()
    assert process.wait(timeout=30) == 0


def test_demo_refuses_a_taken_dagster_port_in_one_line(tmp_path):
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        taken = holder.getsockname()[1]
        result = subprocess.run(
            [*COMMAND, "demo", "--empty", "--port", str(free_port()), "--dagster-port", str(taken)],
            capture_output=True,
            text=True,
            cwd=tmp_path,
            timeout=60,
        )
    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == [
        f"dzlineage demo: the Dagster UI port 127.0.0.1:{taken} is taken; stop what uses it "
        "or pass --dagster-port"
    ]
    assert not (tmp_path / DEMO_ENV_FILE).exists(), "it started the sandbox anyway"


def press_ctrl_c(demo, timeout: float = 90) -> str:
    """Ctrl-C in a terminal: SIGINT to the whole foreground process group; the demo's output."""
    os.killpg(demo.process.pid, signal.SIGINT)
    assert demo.process.wait(timeout=timeout) == 0
    output = demo.log_path.read_text()
    assert "Traceback" not in output, output
    return output


def test_ctrl_c_as_the_sensors_first_run_starts_lets_it_finish_without_a_traceback(tmp_path):
    demo = start_demo(tmp_path)
    try:
        # Dagster's queued-run daemon starts the sensor's first run right after this line. A
        # SIGINT reaching that run worker as it starts kills it with a traceback.
        demo.wait_for_output("Priority sorting and checking", timeout=180)
        output = press_ctrl_c(demo)
    finally:
        demo.stop()
    # The sensor's catalog_sync, and the demo's own materialization of daily_revenue (its
    # automation sensor), whichever started: each finished.
    started = re.findall(r'RUN_START - Started execution of run for "(\w+)"', output)
    for job in started:
        assert f'RUN_SUCCESS - Finished execution of run for "{job}"' in output, output
    assert demo.leftover_processes() == []


def test_a_demo_started_in_the_background_stops_dagster_cleanly_on_sigterm(tmp_path):
    # As `scripts/demo &` starts it: a shell's background job inherits SIGINT ignored.
    demo = start_demo(tmp_path, ignore_sigint=True)
    try:
        demo.wait_until_ui_answers(timeout=300)
    finally:
        stopped_by_sigterm = demo.stop()
    output = demo.log_path.read_text()
    assert "Dagster services shut down." in output, output  # not killed
    assert stopped_by_sigterm
    assert "Traceback" not in output, output
    assert demo.leftover_processes() == []


def test_demo_serves_a_second_shell_and_stops_cleanly_on_ctrl_c(tmp_path):
    demo = start_demo(tmp_path)
    try:
        demo.wait_until_ui_answers(timeout=300)
        homes = list(demo.dagster_home.glob("dzlineage-dagster-home-*"))
        assert len(homes) == 1, homes

        # A second shell sources the file the demo names and syncs against its sandbox.
        assert f"source {demo.env_file}" in demo.log_path.read_text()
        clean = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "DZLINEAGE_"))}
        second_shell = subprocess.run(
            ["bash", "-c", 'source "$1" && exec "$2" -m dzlineage_dagster.cli sync --dry-run',
             "second-shell", str(demo.env_file), sys.executable],
            capture_output=True, text=True, env=clean, cwd=tmp_path, timeout=120,
        )  # fmt: skip
        assert second_shell.returncode == 0, second_shell.stderr
        environment = read_env_file(demo.env_file)
        assert environment["AWS_ENDPOINT_URL"] in demo.log_path.read_text()

        output = press_ctrl_c(demo)
    finally:
        demo.stop()
    for warning in ("DeprecationWarning", "SupersessionWarning", "BetaWarning", "PreviewWarning"):
        assert warning not in output, output
    assert f"export AWS_ENDPOINT_URL={environment['AWS_ENDPOINT_URL']}" in output
    assert not demo.env_file.exists(), "the environment of a stopped sandbox was left behind"
    assert not list(demo.dagster_home.glob("dzlineage-dagster-home-*")), "temporary home left"
    assert demo.leftover_processes() == []


def test_the_demo_runs_on_events_unless_told_not_to():
    """`scripts/demo` creates the change queue (the issue's "the demo runs on events");
    `--no-change-queue` is the listing-only demo, and `dzlineage sandbox` stays without one."""
    assert build_parser("demo").parse_args([]).change_queue is True
    assert build_parser("demo").parse_args(["--no-change-queue"]).change_queue is False
    assert build_parser("sandbox").parse_args([]).change_queue is False
