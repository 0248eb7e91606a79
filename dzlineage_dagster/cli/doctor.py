"""`dzlineage doctor`: a read-only preflight against the account the settings point at, before
the first sync or any later one: one row per check with OK, WARN or FAIL and the fix; exit 1 on any FAIL
(docs/doctor.md lists the checks)."""

from __future__ import annotations

import argparse
import logging
import sys
from dataclasses import replace

from dzlineage_dagster.cli.common import (
    SETUP_ERRORS,
    ScopeFailure,
    add_scope_option,
    in_each_scope,
    in_scope_terms,
    scope_settings,
    selected_scopes,
)
from dzlineage_dagster.core.doctor import (
    CheckResult,
    Status,
    exit_code,
    render_json,
    render_table,
)
from dzlineage_dagster.scopes import ScopeConfig
from dzlineage_dagster.sync.checks.doctor import CHECKS, run_doctor, shared_checks
from dzlineage_dagster.sync.errors import describe_error
from dzlineage_dagster.sync.headless import start_run
from dzlineage_dagster.sync.run_state import SyncRun

#: Exit status when doctor cannot start (settings missing or invalid): no check ran.
SETUP_FAILED = 2


def cmd_doctor(args: argparse.Namespace) -> int:
    try:
        scopes = selected_scopes(args.scopes)
        runs, failures = in_each_scope(scopes, _start, (*SETUP_ERRORS, ValueError))
    except (*SETUP_ERRORS, ValueError) as error:
        print(f"dzlineage doctor: {describe_error(error)}", file=sys.stderr)
        return SETUP_FAILED
    if scopes is None:
        [(_, run)] = runs
        doctor = run_doctor(run)
        results, synced_before = doctor.results, doctor.synced_before
    else:
        results, synced_before = doctor_of_scopes(runs, failures)
    render = render_json if args.format == "json" else render_table
    print(render(results, synced_before=synced_before))
    return exit_code(results)


def _start(scope: ScopeConfig | None) -> SyncRun:
    settings, aws_options = scope_settings(scope)
    return start_run(settings, logging.getLogger("dzlineage.doctor"), aws_options)


def doctor_of_scopes(
    runs: list[tuple[ScopeConfig | None, SyncRun]], failures: list[ScopeFailure]
) -> tuple[list[CheckResult], bool]:
    """The shared checks once (the governance side every scope shares), then the others per
    scope, each row labelled with its scope; a scope whose settings the run refuses is one
    FAIL row. Whether the mapping store holds a sync's records, too."""
    results = [
        CheckResult(
            "settings",
            "-",
            Status.FAIL,
            str(failure),
            "correct the setting named",
            scope=failure.scope.name,
        )
        for failure in failures
    ]
    if not runs:
        return results, False
    shared = shared_checks()
    governance = run_doctor(runs[0][1], shared)
    results[:0] = governance.results
    per_scope = [check for check in CHECKS if check not in shared]
    for scope, run in runs:
        doctor = run_doctor(run, per_scope, failed=governance.failed)
        results += [
            replace(
                row,
                scope=scope.name,
                detail=in_scope_terms(scope, row.detail),
                fix=in_scope_terms(scope, row.fix),
            )
            for row in doctor.results
        ]
    return results, governance.synced_before


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
        "settings are missing or invalid. With DZLINEAGE_SCOPES set, the governance side's "
        "checks (SSM mapping, domain, project, types, grants) run once and every other check "
        "per scope (or per --scope), each row labelled with its scope. See docs/doctor.md.",
    )
    doctor.add_argument(
        "--format", choices=("table", "json"), default="table", help="output (default table)"
    )
    add_scope_option(doctor, "check")
    doctor.set_defaults(handler=cmd_doctor)
