"""`dzlineage sync`: the catalog sync headless, for cron and CI.

With ``DZLINEAGE_SCOPES`` set it syncs every scope in turn (or those ``--scope`` names), each
with its own settings, Region and role; a scope that fails is named and the next one still
runs (docs/many-registries.md).
"""

from __future__ import annotations

import argparse
import io
import logging
import re
import signal
import sys
from collections.abc import Iterator
from contextlib import contextmanager, redirect_stderr
from dataclasses import dataclass, field
from typing import Any, TextIO

from botocore.exceptions import BotoCoreError, ClientError

from dzlineage_dagster.cli.common import (
    add_scope_option,
    scope_settings,
    selected_scopes,
)
from dzlineage_dagster.scopes import ScopeConfig, in_scope_terms
from dzlineage_dagster.settings import InvalidSettings, LineageSettings, MissingSettings
from dzlineage_dagster.sync.errors import SyncError, describe_error

#: Exit statuses from here up are a signal's (128 + its number): the scopes after it do not run.
STOPPED_BY_SIGNAL = 128


def cmd_sync(args: argparse.Namespace) -> int:
    """The catalog sync headless: one process, progress on stderr, the summary on stdout, an
    exit code."""
    # The log goes to stderr, the summary to stdout: `> summary.txt` keeps the table alone.
    logging.basicConfig(
        level=logging.WARNING,
        format="%(asctime)s %(levelname)s %(message)s",
        stream=sys.stderr,
    )
    logging.getLogger("dzlineage").setLevel(logging.WARNING if args.quiet else logging.INFO)
    # A role that cannot be assumed is reported once, naming the side's settings (preflight),
    # not as botocore's traceback of the refresh that failed.
    logging.getLogger("botocore.credentials").setLevel(logging.ERROR)
    try:
        scopes = selected_scopes(args.scopes)
        if scopes is None:
            settings, aws_options = scope_settings(None)
    except MissingSettings as error:
        raise SystemExit(f"dzlineage sync: {error}") from None
    except InvalidSettings as error:
        raise SystemExit(
            "\n".join(f"dzlineage sync: invalid setting {line}" for line in error.problems)
        ) from None
    if scopes is None:
        return _sync(args, settings, aws_options, sys.stdout)
    return sync_scopes(args, scopes, sys.stdout)


def _sync(
    args: argparse.Namespace,
    settings: LineageSettings,
    aws_options: dict[str, dict[str, Any]],
    out: TextIO,
) -> int:
    """One registry's sync, as the flags ask."""
    if args.from_queue:
        from dzlineage_dagster.sync.changes import run_queue_sync

        return run_queue_sync(settings, out=out, aws_options=aws_options)
    from dzlineage_dagster.sync.headless import run_headless_sync

    return run_headless_sync(
        settings,
        dry_run=args.dry_run,
        out=out,
        aws_options=aws_options,
        reconcile=args.reconcile,
    )


@dataclass
class ScopeMessages(io.TextIOBase):
    """stderr while a scope syncs: each of the sync's own lines (``dzlineage sync: ...``) says
    the scope, in the scope's terms, and is kept for the summary."""

    scope: ScopeConfig
    stream: TextIO
    lines: list[str] = field(default_factory=list)

    def write(self, text: str) -> int:
        said = re.sub(
            r"^(dzlineage sync(?: --from-queue)?): ",
            rf"\1: scope {self.scope.name}: ",
            in_scope_terms(self.scope, text),
            flags=re.M,
        )
        self.lines += [line for line in said.splitlines() if line.strip()]
        return self.stream.write(said)

    def flush(self) -> None:
        self.stream.flush()


@contextmanager
def scope_in_log(scope: ScopeConfig) -> Iterator[None]:
    """Every log line of the scope's sync names the scope, in its terms."""

    def name_the_scope(record: logging.LogRecord) -> bool:
        if not getattr(record, "dzlineage_scope", None):
            record.msg = f"scope {scope.name}: {in_scope_terms(scope, record.getMessage())}"
            record.args, record.dzlineage_scope = (), scope.name
        return True

    handlers = list(logging.getLogger().handlers)
    for handler in handlers:
        handler.addFilter(name_the_scope)
    try:
        yield
    finally:
        for handler in handlers:
            handler.removeFilter(name_the_scope)


def sync_scopes(args: argparse.Namespace, scopes: list[ScopeConfig], out: TextIO) -> int:
    """Each scope in turn: a header line, its sync's own summary; then a line per scope and the
    totals. A scope that cannot be synced is said and the next one runs; exit 1 if any
    failed, a signal's status when one stopped the sync (the scopes after it do not run)."""
    results: dict[str, str] = {}
    status = 0
    for position, scope in enumerate(scopes, start=1):
        messages = ScopeMessages(scope, sys.stderr)
        code = 1
        with redirect_stderr(messages), scope_in_log(scope):
            print(scope_header(scope, position, len(scopes)), file=out)
            out.flush()
            try:
                settings, aws_options = scope_settings(scope)
                code = _sync(args, settings, aws_options, out)
            except (MissingSettings, InvalidSettings) as error:
                print(f"dzlineage sync: could not start: {error}", file=sys.stderr)
            except KeyboardInterrupt:
                # Ctrl-C outside a scope's sync (which stops between topics itself).
                code = STOPPED_BY_SIGNAL + signal.SIGINT
            except (SyncError, ClientError, BotoCoreError, ValueError) as error:
                print(f"dzlineage sync: failed: {describe_error(error)}", file=sys.stderr)
            except Exception as error:
                # One scope's unforeseen failure must not stop the others: its traceback is
                # logged, the next scope runs.
                logging.getLogger("dzlineage.sync").exception("the sync failed")
                print(f"dzlineage sync: failed: {describe_error(error)}", file=sys.stderr)
        print(file=out)
        if code >= STOPPED_BY_SIGNAL:
            results[scope.name] = "stopped by a signal (a rerun syncs the rest)"
            status = code
            break
        if code:
            # The last message's first line: a problem's continuation lines are indented.
            said = [line for line in messages.lines if not line[:1].isspace()]
            why = said[-1].split(f"scope {scope.name}: ", 1)[-1] if said else ""
            results[scope.name] = f"FAILED{': ' + why if why else ' (the rows above say why)'}"
            status = status or 1
        else:
            results[scope.name] = "ok"
    width = max(map(len, results))
    print(f"scopes ({len(results)} of {len(scopes)}):", file=out)
    for name, result in results.items():
        print(f"  {name.ljust(width)}  {result}", file=out)
    failed = [name for name, result in results.items() if result.startswith("FAILED")]
    totals = f"{len(results) - len(failed)} synced, {len(failed)} failed"
    print(f"\n{totals}{': ' + ', '.join(failed) if failed else ''}", file=out)
    out.flush()
    return status


def scope_header(scope: ScopeConfig, position: int, count: int) -> str:
    """The line before a scope's output: its name and where its registry is."""
    where = f"registry {scope.settings['registry_name']}"
    if scope.region_name:
        where += f" in {scope.region_name}"
    if scope.role_arn:
        where += f" as {scope.role_arn}"
    return f"== scope {scope.name} ({position} of {count}): {where} =="


def add_sync_command(commands: argparse._SubParsersAction) -> None:
    sync = commands.add_parser(
        "sync",
        help="sync the whole registry into DataZone in this process (cron/CI)",
        description="The same work as the catalog_sync job, for every topic of the registry, in "
        "one process: custom types, topic assets (create/revise/unchanged), lineage, and "
        "retirement of deleted schemas. Ends with a per-topic summary on stdout (the log, "
        "progress and warnings, goes to stderr); exits 1 if any topic failed. Settings come "
        "from the DZLINEAGE_* variables (see `dzlineage settings`). With DZLINEAGE_SCOPES set, "
        "every scope (registry, Region, account) is synced in turn, each with a header line "
        "before its summary; a scope that fails is named and the next one still runs, and the "
        "exit status is 1 if any scope failed (docs/many-registries.md).",
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
    sync.add_argument(
        "--from-queue",
        action="store_true",
        help="sync only the topics the change queue's events name (DZLINEAGE_CHANGE_QUEUE_URL, "
        "with scopes each scope's change_queue_url), each read by name, not the listing; "
        "deletes the messages once every one synced (docs/change-events.md)",
    )
    add_scope_option(sync, "sync")
    sync.add_argument(
        "-q",
        "--quiet",
        action="store_true",
        help="log only warnings and errors (stderr); the summary (stdout) is printed either way",
    )
    sync.set_defaults(handler=cmd_sync)
