"""`dzlineage grant-policies`: the DataZone authorization policy grants the settings' project
lacks for the sync (read-only), and, with ``--apply``, an administrator adding them with
AddPolicyGrant (docs/sagemaker-unified-studio.md)."""

from __future__ import annotations

import argparse
import logging
import sys

from dzlineage_dagster.cli.common import SETUP_ERRORS
from dzlineage_dagster.settings import LineageSettings
from dzlineage_dagster.sync.checks.authorization import add_missing_grants, authorization_problems
from dzlineage_dagster.sync.errors import describe_error
from dzlineage_dagster.sync.headless import start_run


def cmd_grant_policies(args: argparse.Namespace) -> int:
    """Exit 0 when nothing is missing (or everything missing was added), 1 otherwise."""
    try:
        settings = LineageSettings.from_env()
        run = start_run(settings, logging.getLogger("dzlineage.grants"))
        problems = authorization_problems(run)
        added = add_missing_grants(run, problems) if args.apply else []
    except SETUP_ERRORS as error:
        print(f"dzlineage grant-policies: {describe_error(error)}", file=sys.stderr)
        return 2
    scope = f"project {settings.project_id} in domain {settings.domain_id}"
    if not problems:
        print(f"{scope} holds every grant and membership the sync needs")
        return 0
    for line in added:
        print(f"added {line}")
    unfixed = [p for p in problems if p.grant is None or not args.apply]
    for problem in unfixed:
        print(("MISSING " if problem.certain else "WARNING ") + problem.message)
    if unfixed and not args.apply and any(p.grant for p in unfixed):
        print("run again with --apply (as a domain or domain unit owner) to add the grants")
    if any(p.membership for p in unfixed):
        print(
            "--apply adds no membership: a project owner runs the create-project-membership "
            "line above, for the principal it names (the one this command ran as)"
        )
    return 1 if unfixed else 0


def add_grant_command(commands: argparse._SubParsersAction) -> None:
    grant = commands.add_parser(
        "grant-policies",
        help="list (or, with --apply, add) the DataZone policy grants the sync needs",
        description="Check the authorization policy grants (CREATE_FORM_TYPE, CREATE_ASSET_TYPE "
        "on the project's domain unit and its ancestors; USE_ASSET_TYPE on another project's "
        "asset type) and the project membership a SageMaker Unified Studio domain, or a V1 "
        "domain with domain units, requires of DZLINEAGE_PROJECT_ID. Read-only by default: it "
        "prints each missing grant with the `aws datazone add-policy-grant` line that adds it.",
    )
    grant.add_argument(
        "--apply",
        action="store_true",
        help="add the missing grants with AddPolicyGrant (needs a domain or domain unit "
        "owner's credentials); a missing membership is only reported, with the `aws datazone "
        "create-project-membership` line a project owner runs",
    )
    grant.set_defaults(handler=cmd_grant_policies)
