"""`dzlineage doctor`: a read-only preflight against the account the settings point at, before
the first sync or any later one: one row per check with OK, WARN or FAIL and the fix; exit 1 on any FAIL
(docs/doctor.md lists the checks)."""

from __future__ import annotations

import argparse
import logging
import sys

from dzlineage_dagster.cli.common import SETUP_ERRORS
from dzlineage_dagster.core.doctor import exit_code, render_json, render_table
from dzlineage_dagster.settings import LineageSettings
from dzlineage_dagster.sync.checks.doctor import run_doctor
from dzlineage_dagster.sync.errors import describe_error
from dzlineage_dagster.sync.headless import start_run

#: Exit status when doctor cannot start (settings missing or invalid): no check ran.
SETUP_FAILED = 2


def cmd_doctor(args: argparse.Namespace) -> int:
    try:
        settings = LineageSettings.from_env()
        run = start_run(settings, logging.getLogger("dzlineage.doctor"))
    except (*SETUP_ERRORS, ValueError) as error:
        print(f"dzlineage doctor: {describe_error(error)}", file=sys.stderr)
        return SETUP_FAILED
    doctor = run_doctor(run)
    render = render_json if args.format == "json" else render_table
    print(render(doctor.results, synced_before=doctor.synced_before))
    return exit_code(doctor.results)


def add_doctor_command(commands: argparse._SubParsersAction) -> None:
    doctor = commands.add_parser(
        "doctor",
        help="read-only preflight: can this account and these settings sync?",
        description="Try every read the product needs with the credentials and settings the "
        "sync would use (identity of each side, registry, Glue catalog, MSK, MSK Connect, SSM, "
        "DataZone domain, project, types, lineage reads), and compare the account with the "
        "product: SSM parameter headroom, Service Quotas against the client's pacing, whether "
        "the registry's UpdatedTime moves with new versions. Writes nothing. One row per "
        "check (OK / WARN / FAIL, with the fix); exits 1 if any check failed, 2 if the "
        "settings are missing or invalid. See docs/doctor.md.",
    )
    doctor.add_argument(
        "--format", choices=("table", "json"), default="table", help="output (default table)"
    )
    doctor.set_defaults(handler=cmd_doctor)
