"""`dzlineage move-assets --to-project P`: move the registry's topic assets from the settings'
project to project P (DataZone's UpdateAssetOwner, through the domain's administration
project), so that a sync with ``DZLINEAGE_PROJECT_ID=P`` adopts them (docs/scope.md: 'Moving the assets
to another project')."""

from __future__ import annotations

import argparse
import logging
import sys

from dzlineage_dagster.cli.common import SETUP_ERRORS
from dzlineage_dagster.settings import LineageSettings, env_name
from dzlineage_dagster.sync.catalog.asset_moves import move_assets
from dzlineage_dagster.sync.errors import describe_error
from dzlineage_dagster.sync.headless import start_run


def cmd_move_assets(args: argparse.Namespace) -> int:
    def progress(line: str) -> None:
        print(f"dzlineage move-assets: {line}", file=sys.stderr, flush=True)

    try:
        settings = LineageSettings.from_env()
        run = start_run(settings, logging.getLogger("dzlineage.move"))
        report = move_assets(run, args.to_project, progress)
    except SETUP_ERRORS as error:
        print(f"dzlineage move-assets: {describe_error(error)}", file=sys.stderr)
        return 2
    for schema_arn, why in sorted(report.failed.items()):
        print(f"{schema_arn}  not moved: {why}")
    print(
        f"{len(report.moved)} assets moved to project {args.to_project} "
        f"({report.update_calls} UpdateAssetOwner calls), {len(report.failed)} not moved"
    )
    if report.failed:
        return 1
    print(
        f"next: set {env_name('project_id')}={args.to_project} and run `dzlineage sync` (it "
        f"adopts the moved assets); then delete project {settings.project_id}'s mappings under "
        f"{settings.ssm_prefix}/{settings.domain_id}/{settings.project_id}/"
    )
    return 0


def add_move_command(commands: argparse._SubParsersAction) -> None:
    move = commands.add_parser(
        "move-assets",
        help="move the registry's topic assets to another DataZone project",
        description="Transfer every topic asset of the registry that the settings' project owns "
        "(DZLINEAGE_PROJECT_ID) to PROJECT with DataZone's UpdateAssetOwner, through the "
        "domain's administration project, waiting for each transfer; safe to run again after "
        "an interruption. Then point DZLINEAGE_PROJECT_ID at PROJECT and sync.",
    )
    move.add_argument("--to-project", required=True, metavar="PROJECT", help="target project id")
    move.set_defaults(handler=cmd_move_assets)
