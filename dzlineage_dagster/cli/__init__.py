"""The `dzlineage` command: one module per command group, assembled here.

- :mod:`.sync` - ``sync``: the catalog sync headless (cron, CI);
- :mod:`.relay` - ``relay``: the OpenLineage endpoint that forwards to DataZone;
- :mod:`.lineage` - ``trace`` and ``orphans``: questions to DataZone's lineage graph;
- :mod:`.impact` - ``impact``: what a schema version breaks downstream;
- :mod:`.doctor` - ``doctor``: the read-only preflight;
- :mod:`.grant` - ``grant-policies``: the DataZone grants the sync needs;
- :mod:`.move` - ``move-assets``: the topic assets to another project;
- :mod:`.settings` - ``settings``: every DZLINEAGE_* variable.

``sandbox`` and ``demo`` live with the sandbox (:mod:`dzlineage_dagster.sandbox.commands`),
which only the `sandbox` extra can run: they are reached lazily, and the product imports
nothing of the sandbox.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from dzlineage_dagster.cli.doctor import add_doctor_command
from dzlineage_dagster.cli.grant import add_grant_command
from dzlineage_dagster.cli.impact import add_impact_command
from dzlineage_dagster.cli.lineage import add_lineage_commands
from dzlineage_dagster.cli.move import add_move_command
from dzlineage_dagster.cli.relay import add_relay_command
from dzlineage_dagster.cli.settings import add_settings_command
from dzlineage_dagster.cli.sync import add_sync_command

#: The commands that live with the sandbox (:mod:`dzlineage_dagster.sandbox.commands`).
SANDBOX_COMMANDS = {
    "sandbox": "serve the local AWS sandbox and print its environment",
    "demo": "the sandbox plus `dagster dev` pointed at it",
}


def _run_sandbox_command(args: argparse.Namespace, rest: list[str]) -> int:
    from dzlineage_dagster.sandbox import commands

    return commands.run(args.command, rest)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="dzlineage",
        description="Amazon DataZone catalog and lineage for a Debezium/MSK/Iceberg CDC platform.",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    # Their options live with the sandbox: everything after the command name goes to it.
    for name, summary in SANDBOX_COMMANDS.items():
        commands.add_parser(name, help=summary, add_help=False)
    for add_commands in (
        add_sync_command,
        add_relay_command,
        add_lineage_commands,
        add_move_command,
        add_doctor_command,
        add_grant_command,
        add_impact_command,
        add_settings_command,
    ):
        add_commands(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args, rest = parser.parse_known_args(argv)
    if args.command in SANDBOX_COMMANDS:
        return _run_sandbox_command(args, rest)
    if rest:
        parser.error(f"unrecognized arguments: {' '.join(rest)}")
    return args.handler(args)
