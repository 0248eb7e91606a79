"""`dzlineage sync`: the catalog sync headless, for cron and CI."""

from __future__ import annotations

import argparse
import sys

from dzlineage_dagster.settings import (
    InvalidSettings,
    LineageSettings,
    MissingSettings,
    aws_side_options,
)


def cmd_sync(args: argparse.Namespace) -> int:
    """The catalog sync headless: one process, progress on stderr, the summary on stdout, an
    exit code."""
    import logging

    from dzlineage_dagster.sync.headless import run_headless_sync

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
        settings = LineageSettings.from_env()
        aws_options = aws_side_options()
    except MissingSettings as error:
        raise SystemExit(f"dzlineage sync: {error}") from None
    except InvalidSettings as error:
        raise SystemExit(
            "\n".join(f"dzlineage sync: invalid setting {line}" for line in error.problems)
        ) from None
    if args.from_queue:
        from dzlineage_dagster.sync.changes import run_queue_sync

        return run_queue_sync(settings, out=sys.stdout, aws_options=aws_options)
    return run_headless_sync(
        settings,
        dry_run=args.dry_run,
        out=sys.stdout,
        aws_options=aws_options,
        reconcile=args.reconcile,
    )


def add_sync_command(commands: argparse._SubParsersAction) -> None:
    sync = commands.add_parser(
        "sync",
        help="sync the whole registry into DataZone in this process (cron/CI)",
        description="The same work as the catalog_sync job, for every topic of the registry, in "
        "one process: custom types, topic assets (create/revise/unchanged), lineage, and "
        "retirement of deleted schemas. Ends with a per-topic summary on stdout (the log, "
        "progress and warnings, goes to stderr); exits 1 if any topic failed. Settings come from the DZLINEAGE_* variables (see `dzlineage settings`).",
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
        help="sync only the topics the change queue's events name (DZLINEAGE_CHANGE_QUEUE_URL), "
        "each read by name, not the listing; deletes the messages once every one synced "
        "(docs/change-events.md)",
    )
    sync.add_argument(
        "-q",
        "--quiet",
        action="store_true",
        help="log only warnings and errors (stderr); the summary (stdout) is printed either way",
    )
    sync.set_defaults(handler=cmd_sync)
