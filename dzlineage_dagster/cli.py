"""The `dzlineage` command: the local sandbox, the demo, headless sync and the settings."""

from __future__ import annotations

import argparse
import contextlib
import os
import shlex
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Sequence
from pathlib import Path

from dzlineage_dagster.settings import ENV_PREFIX, LineageSettings, env_name


def _start_sandbox(args: argparse.Namespace) -> tuple[object, dict[str, str]]:
    """Serve the sandbox on the given address, seeded unless --empty; returns its environment."""
    from dzlineage_dagster.sandbox.control import SandboxControl, sandbox_environment
    from dzlineage_dagster.sandbox.seed import seed_platform
    from dzlineage_dagster.sandbox.server import Sandbox

    try:
        sandbox = Sandbox(args.host, args.port).start()
    except OSError as error:
        raise SystemExit(f"dzlineage: cannot listen on {args.host}:{args.port}: {error}") from None
    environment = sandbox_environment(sandbox.endpoint_url)
    if not args.empty:
        environment.update(seed_platform(sandbox.endpoint_url, args.seed))
        # The seeding calls are set-up, not the project's: start the call log afresh.
        SandboxControl(sandbox.endpoint_url).clear_calls()
    if args.env_file:
        Path(args.env_file).write_text("".join(f"{k}={v}\n" for k, v in environment.items()))
    return sandbox, environment


def _add_sandbox_options(parser: argparse.ArgumentParser, default_port: int) -> None:
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (loopback)")
    parser.add_argument(
        "--port", type=int, default=default_port, help=f"port to listen on (default {default_port})"
    )
    seeding = parser.add_mutually_exclusive_group()
    seeding.add_argument(
        "--empty", action="store_true", help="start with no resources (no demo platform)"
    )
    seeding.add_argument(
        "--seed",
        type=Path,
        metavar="FILE",
        help="platform file to seed from (default: the bundled demo CDC platform; copy "
        "dzlineage_dagster/sandbox/demo_platform.yaml to start your own)",
    )
    parser.add_argument(
        "--env-file",
        metavar="PATH",
        help="also write the environment to PATH in dotenv format (Dagster reads ./.env)",
    )


def _interrupt(*_: object) -> None:
    """SIGTERM handler: stop the way Ctrl-C does, through the same clean-up."""
    raise KeyboardInterrupt


def _wait_for_interrupt() -> None:
    signal.signal(signal.SIGTERM, _interrupt)
    with contextlib.suppress(KeyboardInterrupt):
        threading.Event().wait()


def cmd_sandbox(args: argparse.Namespace) -> int:
    sandbox, environment = _start_sandbox(args)
    print(f"# dzlineage sandbox listening on {sandbox.endpoint_url} (Ctrl-C stops it)")
    print("# Use it from another shell by exporting:")
    for name, value in environment.items():
        print(f"export {name}={shlex.quote(value)}")
    sys.stdout.flush()
    _wait_for_interrupt()
    sandbox.stop()
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    sandbox, environment = _start_sandbox(args)
    dagster_home = Path(args.dagster_home or tempfile.mkdtemp(prefix="dzlineage-dagster-home-"))
    dagster_home.mkdir(parents=True, exist_ok=True)
    instance_yaml = dagster_home / "dagster.yaml"
    if not instance_yaml.exists():
        # The sandbox needs no network; neither should the demo's Dagster instance. Run retries
        # let a sensor-launched sync retry topics that failed transiently.
        instance_yaml.write_text("telemetry:\n  enabled: false\nrun_retries:\n  enabled: true\n")
    # The same module and location name as the repository's workspace.yaml and pyproject.toml,
    # wherever the demo is started from.
    workspace = dagster_home / "workspace.yaml"
    workspace.write_text(
        "load_from:\n  - python_module:\n      module_name: dzlineage_dagster.definitions\n"
        "      location_name: dzlineage_dagster\n"
    )
    env = {**os.environ, **environment, "DAGSTER_HOME": str(dagster_home)}
    dagster = Path(sys.executable).with_name("dagster")
    command = [
        str(dagster), "dev", "-w", str(workspace),
        "--host", args.dagster_host, "--port", str(args.dagster_port),
    ]  # fmt: skip
    print(f"# sandbox (seeded demo CDC platform) on {sandbox.endpoint_url}")
    print(f"# Dagster UI on http://{args.dagster_host}:{args.dagster_port} (Ctrl-C stops both)")
    sys.stdout.flush()
    # In DAGSTER_HOME, not here: `dagster dev` loads ./.env over the environment it is given,
    # and a .env left by `dzlineage sandbox --env-file` would point it at another sandbox.
    process = subprocess.Popen(command, env=env, cwd=dagster_home)
    signal.signal(signal.SIGTERM, _interrupt)  # stop as on Ctrl-C: Dagster's children too
    try:
        return process.wait()
    except KeyboardInterrupt:
        process.send_signal(signal.SIGINT)
        return process.wait()
    finally:
        sandbox.stop()


def cmd_sync(args: argparse.Namespace) -> int:
    """The catalog sync headless: one process, progress on stderr, a summary, an exit code."""
    import logging

    from dzlineage_dagster.settings import MissingSettings
    from dzlineage_dagster.sync.headless import run_headless_sync

    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(levelname)s %(message)s")
    logging.getLogger("dzlineage").setLevel(logging.INFO)
    try:
        settings = LineageSettings.from_env()
    except MissingSettings as error:
        raise SystemExit(f"dzlineage sync: {error}") from None
    return run_headless_sync(settings, dry_run=args.dry_run, out=sys.stdout)


def cmd_relay(args: argparse.Namespace) -> int:
    from dzlineage_dagster.relay.cli import cmd_relay as run_relay

    return run_relay(args)


def cmd_settings(args: argparse.Namespace) -> int:
    """Every DZLINEAGE_* variable, what it means, and its value here."""
    for name, field in LineageSettings.model_fields.items():
        variable = env_name(name)
        current = os.environ.get(variable)
        default = "(required)" if field.is_required() else f"(default: {field.default})"
        print(f"{variable} = {current if current is not None else default}")
        print(f"    {field.description}")
    from dzlineage_dagster.settings import AWS_OPTION_VARIABLES

    for field_name, variable in AWS_OPTION_VARIABLES.items():
        print(f"{variable} = {os.environ.get(variable, '(unset)')}")
        print(f"    AWS resources' `{field_name}` option")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="dzlineage",
        description="Amazon DataZone catalog and lineage for a Debezium/MSK/Iceberg CDC platform.",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    sandbox = commands.add_parser(
        "sandbox",
        help="serve the local AWS sandbox and print its environment",
        description="Serve one local HTTP endpoint that plays AWS (Glue, SSM, MSK, STS through "
        "moto; DataZone and MSK Connect through the project's emulators), seeded with the demo "
        "CDC platform, and print the AWS_* and DZLINEAGE_* variables that point the project "
        "at it. Admin paths under /_sandbox/ read the call log and inject faults.",
    )
    _add_sandbox_options(sandbox, default_port=4566)
    sandbox.set_defaults(handler=cmd_sandbox)

    demo = commands.add_parser(
        "demo",
        help="the sandbox plus `dagster dev` pointed at it",
        description="Start the seeded sandbox and `dagster dev` with its environment; the "
        "registry sensor then syncs every demo topic into DataZone.",
    )
    _add_sandbox_options(demo, default_port=4566)
    demo.add_argument("--dagster-host", default="127.0.0.1", help="address of the Dagster UI")
    demo.add_argument("--dagster-port", type=int, default=3000, help="port of the Dagster UI")
    demo.add_argument(
        "--dagster-home",
        metavar="DIR",
        help="DAGSTER_HOME to use (default: a fresh temporary folder, as the sandbox is fresh)",
    )
    demo.set_defaults(handler=cmd_demo)

    sync = commands.add_parser(
        "sync",
        help="sync the whole registry into DataZone in this process (cron/CI)",
        description="The same work as the catalog_sync job, for every topic of the registry, in "
        "one process: custom types, topic assets (create/revise/unchanged), lineage, and "
        "retirement of deleted schemas. Ends with a per-topic summary; exits 1 if any topic "
        "failed. Settings come from the DZLINEAGE_* variables (see `dzlineage settings`).",
    )
    sync.add_argument(
        "--dry-run",
        action="store_true",
        help="print the plan (create / revise / unchanged / delete per topic) and write nothing",
    )
    sync.set_defaults(handler=cmd_sync)

    relay = commands.add_parser(
        "relay",
        help="serve the OpenLineage HTTP endpoint that forwards events to DataZone",
        description="Accept OpenLineage events (POST /api/v1/lineage, as the OpenLineage HTTP "
        "transport sends them) from Debezium, Spark, Airflow, ... and post them to DataZone "
        "with PostLineageEvent, spooling them on disk while DataZone is unavailable. Settings "
        "come from the DZLINEAGE_* variables (see the README's Relay section).",
    )
    relay.add_argument("--host", default="127.0.0.1", help="address to listen on (loopback)")
    relay.add_argument("--port", type=int, default=5000, help="port to listen on (default 5000)")
    relay.set_defaults(handler=cmd_relay)

    settings = commands.add_parser(
        "settings",
        help=f"list every {ENV_PREFIX}* setting with its meaning and current value",
        description=f"List every {ENV_PREFIX}* environment variable the project reads.",
    )
    settings.set_defaults(handler=cmd_settings)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return args.handler(args)


if __name__ == "__main__":
    sys.exit(main())
