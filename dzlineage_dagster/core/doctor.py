"""`dzlineage doctor`'s pure part: the check result, the verdict, the table and JSON, and the
judgements that need no AWS call (SSM headroom, quotas against the pacing table, what
``UpdatedTime`` says about change detection, an AWS error as a row with its fix).

The AWS reads live in :mod:`dzlineage_dagster.sync.checks.doctor`; docs/doctor.md lists every check.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from datetime import datetime
from enum import Enum

from dzlineage_dagster.core.aws.quotas import ASSUMED_SOURCE, Quota
from dzlineage_dagster.core.catalog.discovery import VERSION_SWEEP_TICKS
from dzlineage_dagster.core.mapping.pack import parameters_needed


class Status(str, Enum):
    OK = "OK"
    WARN = "WARN"
    FAIL = "FAIL"


@dataclass(frozen=True)
class CheckResult:
    """One row: which check, about what, its status, what was found and what to do."""

    check: str
    subject: str
    status: Status
    detail: str
    fix: str = ""
    #: The scope of DZLINEAGE_SCOPES the row is about; None: the deployment's (shared by every
    #: scope, or the one registry when there are no scopes).
    scope: str | None = None

    def to_json(self) -> dict[str, str]:
        row = {**asdict(self), "status": self.status.value}
        if self.scope is None:
            del row["scope"]  # as the rows read without scopes
        return row


def exit_code(results: Iterable[CheckResult]) -> int:
    """1 when any check failed, else 0 (warnings do not fail the preflight)."""
    return 1 if any(r.status is Status.FAIL for r in results) else 0


def verdict(results: Sequence[CheckResult], *, synced_before: bool = False) -> str:
    """The counts and what next; ``synced_before``: the mapping store holds this project's
    records, so the next sync is not the first."""
    counts = {status: sum(r.status is status for r in results) for status in Status}
    summary = ", ".join(f"{counts[s]} {s.value}" for s in Status)
    sync = "the next sync" if synced_before else "the first sync"
    if counts[Status.FAIL]:
        return f"{summary}: fix the FAIL rows before {sync}"
    if counts[Status.WARN]:
        return f"{summary}: {sync} can run; read the WARN rows"
    return f"{summary}: ready to sync" if synced_before else f"{summary}: ready for the first sync"


#: The SCOPE column's word for a row of the deployment's, shared by every scope.
SHARED_SCOPE = "(all)"


def render_table(results: Sequence[CheckResult], *, synced_before: bool = False) -> str:
    header = ("STATUS", "CHECK", "SUBJECT", "DETAIL", "FIX")
    rows = [(r.status.value, r.check, r.subject, r.detail, r.fix) for r in results]
    if any(r.scope is not None for r in results):
        header = ("STATUS", "SCOPE", *header[1:])
        rows = [
            (row[0], r.scope or SHARED_SCOPE, *row[1:])
            for r, row in zip(results, rows, strict=True)
        ]
    # The last column is free-running: fixes are sentences.
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header) - 1)]
    lines = []
    for row in [header, *rows]:
        cells = [cell.ljust(width) for cell, width in zip(row, widths, strict=False)]
        lines.append("  ".join([*cells, row[-1]]).rstrip())
    return "\n".join([*lines, "", verdict(results, synced_before=synced_before)])


def render_json(results: Sequence[CheckResult], *, synced_before: bool = False) -> str:
    return json.dumps(
        {
            "ok": exit_code(results) == 0,
            "verdict": verdict(results, synced_before=synced_before),
            "synced_before": synced_before,
            "checks": [r.to_json() for r in results],
        },
        indent=2,
    )


# --- an AWS error as a row --------------------------------------------------------------------

#: Error codes by which AWS says the caller may not make the call, and that the named thing is
#: not there (the run's preflight, :mod:`dzlineage_dagster.sync.checks.preflight`, reads them too).
DENIED_CODES = frozenset(
    {"AccessDeniedException", "AccessDenied", "UnauthorizedException", "UnauthorizedOperation"}
)
NOT_FOUND_CODES = frozenset(
    {
        "ResourceNotFoundException",
        "NotFoundException",
        "EntityNotFoundException",
        "NoSuchResourceException",
        "ParameterNotFound",
        # SQS's, for a queue URL that names no queue (its JSON and its query protocol).
        "AWS.SimpleQueueService.NonExistentQueue",
        "QueueDoesNotExist",
    }
)
#: IAM's action prefix of a botocore service name, where they differ.
IAM_PREFIXES = {"service-quotas": "servicequotas"}

#: The policy of iam/ that grants a side's role the actions the sync calls.
SIDE_POLICIES = {
    "data": "iam/data-account-policy.json",
    "governance": "iam/governance-account-policy.json",
}
#: The policy of iam/ that grants the reads only doctor makes, beside the side's policy.
DOCTOR_POLICY = "iam/doctor-policy.json"
#: The actions of :data:`DOCTOR_POLICY` that no side's policy grants (test_doctor.py holds this
#: to the files).
DOCTOR_ONLY_ACTIONS = frozenset(
    {
        "glue:GetRegistry",
        "glue:GetDatabase",
        "ssm:DescribeParameters",
        "ssm:GetServiceSetting",
        "servicequotas:ListServiceQuotas",
        "servicequotas:ListAWSDefaultServiceQuotas",
    }
)
#: The policy of iam/ a SageMaker Unified Studio (V2) domain's governance role needs too, and
#: its actions no side's policy grants (test_doctor.py holds this to the files).
SAGEMAKER_POLICY = "iam/sagemaker-unified-studio-policy.json"
SAGEMAKER_ONLY_ACTIONS = frozenset({"datazone:GetDomainUnit", "datazone:ListPolicyGrants"})

#: The policy of iam/ the data side's role needs too when a change queue is set, and its
#: actions (DeleteMessageBatch is authorized as sqs:DeleteMessage).
CHANGE_QUEUE_POLICY = "iam/change-queue-policy.json"
CHANGE_QUEUE_ACTIONS = frozenset(
    {"sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:GetQueueAttributes"}
)

#: The policy of iam/ the data side's role needs too where the sync posts lineage to the Glue
#: Data Catalog (``DZLINEAGE_LINEAGE_DESTINATIONS`` names glue), and its actions (test_doctor.py
#: holds this to the files).
GLUE_LINEAGE_POLICY = "iam/glue-lineage-policy.json"
GLUE_LINEAGE_ACTIONS = frozenset({"glue:PostLineageEvent", "glue:GetLineageNode"})

#: Actions no policy needs to allow (STS API reference, GetCallerIdentity: "No permissions are
#: required to perform this operation", even an explicit deny does not stop it).
UNRESTRICTED_ACTIONS = frozenset({"sts:GetCallerIdentity"})


def iam_action(call: str) -> str:
    """``glue.GetRegistry`` -> ``glue:GetRegistry``: the action an IAM policy must allow."""
    service, _, operation = call.partition(".")
    return f"{IAM_PREFIXES.get(service, service)}:{operation}"


def granting_policy(side: str, action: str) -> str:
    """The file of iam/ whose statement grants ``action`` to ``side``'s role."""
    if action in DOCTOR_ONLY_ACTIONS:
        return DOCTOR_POLICY
    if action in SAGEMAKER_ONLY_ACTIONS:
        return SAGEMAKER_POLICY
    if action in CHANGE_QUEUE_ACTIONS:
        return CHANGE_QUEUE_POLICY
    if action in GLUE_LINEAGE_ACTIONS:
        return GLUE_LINEAGE_POLICY
    return SIDE_POLICIES[side]


def allow_fix(action: str, who: str, side: str) -> str:
    """What to do when AWS denied ``action`` to ``who``, of ``side``: allow it in the
    permission policy, as the file of iam/ that grants it does."""
    if action in UNRESTRICTED_ACTIONS:
        return (
            f"{action} needs no permission, so AWS refused the credentials themselves: "
            f"check {who} (AWS_PROFILE, the access keys, the role)"
        )
    policy = granting_policy(side, action) if side else "iam/"
    return f"allow {action} to {who}: in its permission policy (as {policy} does)"


def failed_call(
    check: str,
    subject: str,
    call: str,
    code: str,
    message: str,
    *,
    missing: str = "",
    who: str = "",
    side: str = "",
) -> CheckResult:
    """The FAIL row of a call AWS refused: the call, AWS's code and message, and the fix.

    ``missing``: what to do when AWS says the thing does not exist (a setting to correct);
    ``who``: the principal to grant a denied action to (the side's role, say), ``side`` its
    side (``data`` or ``governance``), which says which policy of iam/ grants the action."""
    detail = f"{call} failed: {code}: {message}".rstrip(": ")
    if code in DENIED_CODES:
        fix = allow_fix(iam_action(call), who or "the caller", side)
    elif code in NOT_FOUND_CODES and missing:
        fix = missing
    elif code in ("ThrottlingException", "RequestLimitExceeded", "TooManyRequestsException"):
        fix = "the account's quota was used up by others at this moment: run doctor again"
    else:
        fix = f"check that {call} is reachable from here (endpoint, Region, network), then rerun"
    return CheckResult(check, subject, Status.FAIL, detail, fix)


# --- SSM: tier, count, headroom ---------------------------------------------------------------

#: Parameters per account and Region by tier (AWS General Reference, "AWS Systems Manager
#: endpoints and quotas": 10,000 standard parameters, 100,000 advanced).
PARAMETER_CAPS = {"Standard": 10_000, "Advanced": 100_000}
#: Below this share of the cap left after the sync, the row warns: other applications of the
#: account share the cap and grow too.
HEADROOM_WARNING_SHARE = 0.10


def mapping_parameters_needed(
    topics: int, registries: int = 1, layout: str = "per-topic", tier: str = "Standard"
) -> int:
    """SSM parameters the mapping of ``topics`` topics takes: one record a topic in the
    ``per-topic`` layout, :func:`~dzlineage_dagster.core.mapping.pack.parameters_needed` in the
    ``packed`` one, and per registry one registry digest and one version-sweep state (what it
    learnt of ``UpdatedTime``)."""
    records = parameters_needed(topics, tier) if layout == "packed" else topics
    return records + 2 * registries


def ssm_capacity(default_tier: str, parameters: int, ours: int, needed: int) -> CheckResult:
    """Whether the mapping fits under the account's cap: ``parameters`` in the account and
    Region now, ``ours`` of them already the mapping's, ``needed`` in all after the sync.

    ``Intelligent-Tiering`` creates standard parameters until one needs the advanced tier, so
    its cap is the standard one for the mapping's small values."""
    tier = "Advanced" if default_tier == "Advanced" else "Standard"
    cap = PARAMETER_CAPS[tier]
    after = parameters - ours + needed
    detail = (
        f"default tier {default_tier}; {parameters:,} parameters in the account and Region "
        f"({ours:,} of them the mapping's); the mapping needs {needed:,}: {after:,} of {cap:,} "
        f"after the sync"
    )
    if after > cap:
        return CheckResult(
            "ssm-capacity",
            "Parameter Store",
            Status.FAIL,
            f"{detail}, {after - cap:,} over the {tier.lower()} tier's cap",
            f"free {after - cap:,} parameters of other applications, or sync this registry from "
            "another account or Region (the cap is per account and Region and cannot be raised)",
        )
    if cap - after < cap * HEADROOM_WARNING_SHARE:
        return CheckResult(
            "ssm-capacity",
            "Parameter Store",
            Status.WARN,
            f"{detail}: {cap - after:,} left",
            f"keep watch: {cap - after:,} more parameters of anyone in the account fill it",
        )
    return CheckResult(
        "ssm-capacity", "Parameter Store", Status.OK, f"{detail}: {cap - after:,} left"
    )


# --- quotas -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class AccountQuota:
    """One quota as Service Quotas lists it."""

    name: str
    code: str
    value: float
    #: ListServiceQuotas' applied value; False for ListAWSDefaultServiceQuotas' default.
    applied: bool = True


#: Service Quotas' ``Period.PeriodUnit`` in seconds.
_PERIOD_SECONDS = {
    "MICROSECOND": 1e-6,
    "MILLISECOND": 1e-3,
    "SECOND": 1,
    "MINUTE": 60,
    "HOUR": 3600,
    "DAY": 86400,
    "WEEK": 604800,
}


def per_second(value: float, period: Mapping[str, object] | None) -> float | None:
    """A Service Quotas value as calls per second; None for a quota without a ``Period`` (a
    count of resources, not a rate)."""
    if not period or period.get("PeriodUnit") not in _PERIOD_SECONDS:
        return None
    seconds = _PERIOD_SECONDS[str(period["PeriodUnit"])] * float(period.get("PeriodValue") or 1)
    return float(value) / seconds


def quota_of(operation: str, quotas: Iterable[AccountQuota]) -> AccountQuota | None:
    """The rate quota whose name names ``operation`` as a word (``GetParameter`` is not
    ``GetParameters``): Service Quotas' codes for API rates are not documented per operation,
    its names are what says which operation a quota limits."""
    pattern = re.compile(rf"(?<![A-Za-z]){re.escape(operation)}(?![A-Za-z])")
    return next((q for q in quotas if pattern.search(q.name)), None)


def short_source(source: str) -> str:
    """A pacing figure's source without its address, for a table cell."""
    return source.split(" (http", 1)[0]


def quota_checks(
    service: str, account: Sequence[AccountQuota], pacing: Mapping[str, Quota]
) -> list[CheckResult]:
    """The service's operations of the pacing table against the account's quotas.

    A WARN row for each operation the account allows less than the client paces at (the sync
    would run into throttling, slowed by retries); one OK row for those at or above it; one
    OK row naming those Service Quotas lists no figure for, with the source of the figure the
    client paces them at (an AWS page, or ``assumed``)."""
    rows, enough, unlisted = [], [], []
    for name, quota in sorted(pacing.items()):
        prefix, _, operation = name.partition(".")
        if prefix != service:
            continue
        found = quota_of(operation, account)
        if found is None:
            unlisted.append((operation, quota))
        elif found.value < quota.rate:
            kind = "quota" if found.applied else "default quota"
            rows.append(
                CheckResult(
                    "quota",
                    name,
                    Status.WARN,
                    f"the account's {kind} {found.name!r} ({found.code}) is {found.value:g} TPS; "
                    f"the client paces at {quota.rate:g} TPS ({short_source(quota.source)})",
                    f"set DZLINEAGE_CLIENT_RATE_LIMITS=aws,{name}={found.value:g} (and the "
                    f"overrides you have), or ask AWS to raise quota {found.code}",
                )
            )
        else:
            enough.append(f"{operation} {found.value:g}>={quota.rate:g}")
    if enough:
        rows.append(
            CheckResult(
                "quota",
                f"{service} (Service Quotas)",
                Status.OK,
                f"at or above the pacing: {', '.join(enough)} TPS",
            )
        )
    if unlisted:
        by_source: dict[str, list[str]] = {}
        for operation, quota in unlisted:
            label = "assumed" if quota.source == ASSUMED_SOURCE else short_source(quota.source)
            by_source.setdefault(f"{quota.rate:g} TPS, {label}", []).append(operation)
        rows.append(
            CheckResult(
                "quota",
                f"{service} (not in Service Quotas)",
                Status.OK,
                "paced at "
                + "; ".join(f"{figure}: {', '.join(ops)}" for figure, ops in by_source.items()),
            )
        )
    return rows


# --- UpdatedTime and change detection ---------------------------------------------------------


def updated_time_check(
    schema: str, updated: datetime, latest_version: int, latest_created: datetime, topics: int
) -> CheckResult:
    """Whether the registry's ``UpdatedTime`` moved when the schema's latest version was
    registered, and what that means for finding new versions."""
    sweep = math.ceil(topics / VERSION_SWEEP_TICKS) if topics else 0
    seen = (
        f"{schema}: UpdatedTime {updated.isoformat()}, version {latest_version} created "
        f"{latest_created.isoformat()}"
    )
    if updated >= latest_created:
        return CheckResult(
            "updated-time",
            "Glue Schema Registry",
            Status.OK,
            f"{seen}: UpdatedTime moves with new versions, so a tick's listing shows a new "
            "version at once (the version sweep is the backstop)",
        )
    return CheckResult(
        "updated-time",
        "Glue Schema Registry",
        Status.WARN,
        f"{seen}: UpdatedTime does not move with new versions, so the listing does not show "
        f"them; the version sweep finds each within {VERSION_SWEEP_TICKS} ticks (an hour at "
        f"the sensor's 60 s), at {sweep} GetSchema a tick for {topics} topics",
        "nothing to change; for faster detection run the sensor (or dzlineage sync) more often",
    )


def updated_time_unknown(looked_at: int) -> CheckResult:
    return CheckResult(
        "updated-time",
        "Glue Schema Registry",
        Status.OK,
        f"no schema with two or more versions among the {looked_at} looked at: whether "
        "UpdatedTime moves with new versions cannot be told yet; the version sweep finds new "
        "versions either way",
    )


# --- the change queue -------------------------------------------------------------------------


def change_queue_row(queue_url: str | None, attributes: Mapping[str, str] | None) -> CheckResult:
    """The change queue's row: unset (the registry is listed), or the queue GetQueueAttributes
    found, its backlog and its dead-letter queue (WARN without one: an unreadable message would
    come back forever)."""
    if not queue_url:
        return CheckResult(
            "change-queue",
            "data",
            Status.OK,
            "DZLINEAGE_CHANGE_QUEUE_URL unset: registry_schema_sensor lists the registry every "
            "minute (docs/change-events.md makes changes arrive as events)",
        )
    attributes = attributes or {}
    backlog = (
        f"{attributes.get('ApproximateNumberOfMessages', '?')} messages waiting, "
        f"{attributes.get('ApproximateNumberOfMessagesNotVisible', '?')} in flight"
    )
    where = f"{attributes.get('QueueArn', queue_url)}: {backlog}"
    try:
        redrive = json.loads(attributes.get("RedrivePolicy") or "{}")
    except ValueError:
        redrive = {}
    if not eventbridge_may_send(attributes.get("Policy")):
        return CheckResult(
            "change-queue",
            "data",
            Status.FAIL,
            f"{where}; its policy lets no EventBridge rule send (events.amazonaws.com "
            "sqs:SendMessage): the rules deliver nothing and every change waits for the "
            "daily listing",
            "give the queue the policy of deploy/change-events.yaml (ChangeQueuePolicy)",
        )
    if not isinstance(redrive, dict) or not redrive.get("deadLetterTargetArn"):
        return CheckResult(
            "change-queue",
            "data",
            Status.WARN,
            f"{where}; no dead-letter queue: an unreadable message comes back forever",
            "give the queue a RedrivePolicy, as deploy/change-events.yaml does",
        )
    return CheckResult(
        "change-queue",
        "data",
        Status.OK,
        f"{where}; dead-letter queue {redrive['deadLetterTargetArn']} after "
        f"{redrive.get('maxReceiveCount', '?')} receives",
    )


def eventbridge_may_send(policy_text: str | None) -> bool:
    """Whether a queue policy allows ``events.amazonaws.com`` ``sqs:SendMessage`` (EventBridge
    delivers to a queue only so); conditions narrowing it to some rules are the template's."""
    try:
        policy = json.loads(policy_text or "{}")
    except ValueError:
        return False
    statements = policy.get("Statement", []) if isinstance(policy, dict) else []
    for statement in statements if isinstance(statements, list) else [statements]:
        if not isinstance(statement, dict) or statement.get("Effect") != "Allow":
            continue
        principal = statement.get("Principal", {})
        services = principal.get("Service", []) if isinstance(principal, dict) else []
        actions = statement.get("Action", [])
        if "events.amazonaws.com" in _as_list(services) and {
            "sqs:SendMessage",
            "sqs:*",
            "*",
        } & set(_as_list(actions)):
            return True
    return False


def _as_list(value: object) -> list:
    return value if isinstance(value, list) else [value]
