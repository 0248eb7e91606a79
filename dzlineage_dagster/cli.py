"""The `dzlineage` command: headless sync and the settings, and a lazy hook to the sandbox's
`sandbox` and `demo` commands (:mod:`dzlineage_dagster.sandbox.commands`), which only the
`sandbox` extra can run: the product imports nothing of the sandbox."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from dzlineage_dagster.settings import (
    AWS_OPTION_VARIABLES,
    AWS_SIDES,
    ENV_PREFIX,
    InvalidSettings,
    LineageSettings,
    MissingSettings,
    aws_side_options,
    env_name,
    environment_problems,
    side_role_description,
    side_role_variables,
)

#: The commands that live with the sandbox (:mod:`dzlineage_dagster.sandbox.commands`).
SANDBOX_COMMANDS = {
    "sandbox": "serve the local AWS sandbox and print its environment",
    "demo": "the sandbox plus `dagster dev` pointed at it",
}


def _run_sandbox_command(args: argparse.Namespace, rest: list[str]) -> int:
    from dzlineage_dagster.sandbox import commands

    return commands.run(args.command, rest)


def cmd_sync(args: argparse.Namespace) -> int:
    """The catalog sync headless: one process, progress on stderr, a summary, an exit code."""
    import logging

    from dzlineage_dagster.sync.headless import run_headless_sync

    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(levelname)s %(message)s")
    logging.getLogger("dzlineage").setLevel(logging.INFO)
    # A role that cannot be assumed is reported once, naming the side's settings (preflight),
    # not as botocore's traceback of the refresh that failed.
    logging.getLogger("botocore.credentials").setLevel(logging.ERROR)
    try:
        settings = LineageSettings.from_env()
        aws_options = aws_side_options()
    except MissingSettings as error:
        raise SystemExit(f"dzlineage sync: {error}") from None
    except InvalidSettings as error:
        raise SystemExit(
            "\n".join(f"dzlineage sync: invalid setting {line}" for line in error.problems)
        ) from None
    return run_headless_sync(
        settings,
        dry_run=args.dry_run,
        out=sys.stdout,
        aws_options=aws_options,
        reconcile=args.reconcile,
    )


def cmd_relay(args: argparse.Namespace) -> int:
    from dzlineage_dagster.relay.cli import cmd_relay as run_relay

    return run_relay(args)


def cmd_settings(args: argparse.Namespace) -> int:
    """Every DZLINEAGE_* variable, what it means, and its value here; exit 1 if any is invalid."""
    problems = environment_problems()
    for name, field in LineageSettings.model_fields.items():
        variable = env_name(name)
        current = os.environ.get(variable)
        default = "(required)" if field.is_required() else f"(default: {field.default})"
        print(f"{variable} = {current if current is not None else default}")
        print(f"    {field.description}")
        if variable in problems:
            print(f"    INVALID: {problems[variable]}")
    for field_name, variable in AWS_OPTION_VARIABLES.items():
        print(f"{variable} = {os.environ.get(variable, '(unset)')}")
        print(f"    AWS resources' `{field_name}` option")
        if field_name.startswith("role_"):
            print(
                "    (both sides' default: DZLINEAGE_DATA_/GOVERNANCE_ROLE_* replace it per side)"
            )
        if variable in problems:
            print(f"    INVALID: {problems[variable]}")
    for side in AWS_SIDES:
        for field_name, variable in side_role_variables(side).items():
            print(f"{variable} = {os.environ.get(variable, '(unset)')}")
            print(f"    {side_role_description(side, field_name)}")
            if variable in problems:
                print(f"    INVALID: {problems[variable]}")
    for line in problems.values():
        print(f"dzlineage settings: invalid setting {line}", file=sys.stderr)
    return 1 if problems else 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="dzlineage",
        description="Amazon DataZone catalog and lineage for a Debezium/MSK/Iceberg CDC platform.",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    # Their options live with the sandbox: everything after the command name goes to it.
    for name, summary in SANDBOX_COMMANDS.items():
        commands.add_parser(name, help=summary, add_help=False)

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
    sync.add_argument(
        "--reconcile",
        action="store_true",
        help="first compare DataZone (Search by the topic asset type) with the registry and the "
        "SSM mapping and repair what differs: recreate or re-map deleted assets, fix mappings "
        "that name another topic's asset or another domain, adopt assets by externalIdentifier, "
        "restore deprecated assets whose schema is back, re-post missing or FAILED lineage; "
        "with --dry-run, list the repairs and write nothing",
    )
    sync.set_defaults(handler=cmd_sync)

    relay = commands.add_parser(
        "relay",
        help="serve the OpenLineage HTTP endpoint that forwards events to DataZone",
        description="Accept OpenLineage events (POST /api/v1/lineage, as the OpenLineage HTTP "
        "transport sends them) from Debezium, Spark, Airflow, ... and post them to DataZone "
        "with PostLineageEvent, spooling them on disk while DataZone is unavailable. Settings "
        "come from the DZLINEAGE_* variables (see docs/relay.md).",
    )
    relay.add_argument("--host", default="127.0.0.1", help="address to listen on (loopback)")
    relay.add_argument("--port", type=int, default=5000, help="port to listen on (default 5000)")
    relay.set_defaults(handler=cmd_relay)

    from dzlineage_dagster.lineage_cli import add_lineage_commands

    add_lineage_commands(commands)

    from dzlineage_dagster.move_cli import add_move_command

    add_move_command(commands)

    from dzlineage_dagster.doctor_cli import add_doctor_command

    add_doctor_command(commands)

    from dzlineage_dagster.grant_cli import add_grant_command

    add_grant_command(commands)

    from dzlineage_dagster.impact_cli import add_impact_command

    add_impact_command(commands)

    settings = commands.add_parser(
        "settings",
        help=f"list every {ENV_PREFIX}* setting with its meaning and current value",
        description=f"List every {ENV_PREFIX}* environment variable the project reads.",
    )
    settings.set_defaults(handler=cmd_settings)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args, rest = parser.parse_known_args(argv)
    if args.command in SANDBOX_COMMANDS:
        return _run_sandbox_command(args, rest)
    if rest:
        parser.error(f"unrecognized arguments: {' '.join(rest)}")
    return args.handler(args)


if __name__ == "__main__":
    sys.exit(main())
