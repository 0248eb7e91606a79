"""`dzlineage doctor`'s AWS reads: each check tries the reads the product needs, read only.

A check is a function of the :class:`Doctor` that yields rows
(:class:`~dzlineage_dagster.core.doctor.CheckResult`); :data:`CHECKS` lists them in the order
they print, each with the service it calls and the checks it needs. An AWS error (or a setting
the run cannot use) ends its check with one FAIL row naming the call and the fix; a check whose
prerequisite failed prints one WARN row saying so instead of failing the same way again.

Every call goes through the clients of the resources a headless sync builds
(:class:`~dzlineage_dagster.sync.run_state.SyncRun`), so the identity, the role and the Region
doctor checks are the ones the sync will use. Add a check by writing a function and listing
it in :data:`CHECKS` (a domain's policy grants for asset creation belong beside
``asset_creation``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from dzlineage_dagster.core.aws.quotas import AWS_QUOTAS, parse_rate_limits
from dzlineage_dagster.core.connectors.report import (
    OPENLINEAGE_ENABLED,
    OPENLINEAGE_KAFKA_NAMESPACE_PROPERTIES,
    openlineage_namespace_fix,
    openlineage_without_kafka_namespace,
)
from dzlineage_dagster.core.connectors.topics import TopicKind
from dzlineage_dagster.core.doctor import (
    DENIED_CODES,
    AccountQuota,
    CheckResult,
    Status,
    change_queue_row,
    failed_call,
    mapping_parameters_needed,
    per_second,
    quota_checks,
    ssm_capacity,
    updated_time_check,
    updated_time_unknown,
)
from dzlineage_dagster.core.lineage.openlineage import dataset_source_identifier
from dzlineage_dagster.core.lineage.readback import ReadbackReport
from dzlineage_dagster.resources.base import AwsClientResource
from dzlineage_dagster.resources.change_queue import ChangeQueueResource
from dzlineage_dagster.resources.lineage_sync import AWS_RESOURCES, side_attributes
from dzlineage_dagster.settings import LineageSettings, env_name
from dzlineage_dagster.sync.catalog.custom_types import inspect_custom_types, plan_custom_types
from dzlineage_dagster.sync.checks.authorization import authorization_problems
from dzlineage_dagster.sync.checks.preflight import role_not_assumable
from dzlineage_dagster.sync.errors import SyncError, describe_error, error_code
from dzlineage_dagster.sync.lineage.readback import last_sync_readback
from dzlineage_dagster.sync.run_state import SyncRun

#: Whose Service Quotas answer for a service's quotas: the side that calls the service.
QUOTA_SIDES = {"datazone": "datazone", "glue": "schema_registry", "ssm": "mapping_parameters"}
#: How many schemas the UpdatedTime check reads (GetSchema each) to find one with two versions.
UPDATED_TIME_SAMPLE = 20
#: SSM's DescribeParameters page, its largest.
DESCRIBE_PARAMETERS_PAGE = 50
PARAMETER_TIER_SETTING = "/ssm/parameter-store/default-parameter-tier"


@dataclass
class Doctor:
    run: SyncRun
    results: list[CheckResult] = field(default_factory=list)
    #: Checks that failed or were not checked: those that need them are not checked.
    failed: set[str] = field(default_factory=set)
    #: Sides whose role AWS refused to let this identity assume: one FAIL row says so and
    #: what to change; the side's other checks are not run (they would fail the same way).
    unassumable: set[str] = field(default_factory=set)
    #: Whether the mapping store holds this domain's and project's records (a sync ran).
    synced_before: bool = False

    @property
    def settings(self) -> LineageSettings:
        return self.run.settings

    def resource(self, attribute: str) -> AwsClientResource:
        return getattr(self.run.resource, attribute)

    def side_of(self, attribute: str) -> str:
        return AWS_RESOURCES[attribute][1]


@dataclass(frozen=True)
class Check:
    name: str
    #: The resource whose client the check calls (its side is whose credentials a denial names).
    resource: str
    #: The botocore service its calls go to (a ClientError names the operation only).
    service: str
    rows: Callable[[Doctor], Iterable[CheckResult]]
    needs: tuple[str, ...] = ()
    #: The fix when AWS says the checked thing does not exist.
    missing: str = ""
    #: The check calls both sides, each with its own resource, and says per side itself what
    #: it could not check (``resource`` is then only where an unforeseen error is counted).
    both_sides: bool = False


def run_doctor(
    run: SyncRun, checks: Iterable[Check] | None = None, failed: Iterable[str] = ()
) -> Doctor:
    """Every check of ``checks`` (default :data:`CHECKS`), in order, in
    :attr:`Doctor.results`; never raises for an AWS error. ``failed``: checks that did not pass
    elsewhere (a scope's run is told the shared checks' failures), so what needs them is not
    checked here either."""
    # Foreign runs through the whole lookback window, as a reconcile looks: the lineage-landed
    # row and the read-back's plans then share the run's one lookup.
    run.reconciling = True
    doctor = Doctor(run, failed=set(failed))
    for check in CHECKS if checks is None else checks:
        side = doctor.side_of(check.resource)
        if side in doctor.unassumable and not check.both_sides:
            doctor.results.append(_not_assumed(check.name, side))
            doctor.failed.add(check.name)
            continue
        blocked = [need for need in check.needs if need in doctor.failed]
        if blocked:
            doctor.results.append(
                CheckResult(
                    check.name,
                    "-",
                    Status.WARN,
                    f"not checked: it needs {', '.join(blocked)}, which did not pass",
                    f"fix {', '.join(blocked)} first",
                )
            )
            # What needs this check is not checked either.
            doctor.failed.add(check.name)
            continue
        for row in _guarded(doctor, check):
            doctor.results.append(row)
            if row.status is Status.FAIL:
                doctor.failed.add(check.name)
    return doctor


def _not_assumed(check: str, side: str) -> CheckResult:
    return CheckResult(
        check,
        side,
        Status.WARN,
        f"not checked: the {side} side's role cannot be assumed",
        "fix the identity row first",
    )


def _guarded(doctor: Doctor, check: Check) -> Iterator[CheckResult]:
    """The check's rows, and one FAIL row for what stopped it."""
    side = doctor.side_of(check.resource)
    try:
        yield from check.rows(doctor)
    except ClientError as error:
        yield _failed_row(doctor, check.name, check.resource, check.service, error, check.missing)
    except BotoCoreError as error:
        yield CheckResult(
            check.name,
            side,
            Status.FAIL,
            f"{check.service} could not be reached: {error}",
            "check the endpoint, the Region and the network (AWS_REGION, AWS_ENDPOINT_URL)",
        )
    except (SyncError, ValueError) as error:
        yield CheckResult(check.name, side, Status.FAIL, str(error), "correct the setting named")


def _failed_row(
    doctor: Doctor, check: str, attribute: str, service: str, error: ClientError, missing: str
) -> CheckResult:
    """A denied or failed call's row, made with the credentials of the resource ``attribute``
    (whose role a denied action is granted to).

    AWS refusing the role itself (STS AssumeRole, made before the call) is the role's trust
    policy's doing, or this identity's: the row says so as the sync's preflight does, and
    the side's other checks are not run."""
    reader = doctor.resource(attribute)
    side = doctor.side_of(attribute)
    code = error_code(error)
    message = error.response.get("Error", {}).get("Message", "")
    if error.operation_name == "AssumeRole":
        doctor.unassumable.add(side)
        detail = f"sts.AssumeRole failed: {code}: {message}".rstrip(": ")
        return CheckResult(check, side, Status.FAIL, detail, role_not_assumable(reader, side))
    return failed_call(
        check,
        side,
        f"{service}.{error.operation_name}",
        code,
        message,
        missing=missing,
        who=reader.credentials_label(),
        side=side,
    )


# --- the checks -------------------------------------------------------------------------------


def identity(doctor: Doctor) -> Iterator[CheckResult]:
    """STS GetCallerIdentity through each resource's own client, one row per side."""
    for side, attributes in side_attributes().items():
        seen: dict[str, list[str]] = {}
        try:
            for attribute in attributes:
                caller = doctor.resource(attribute).client("sts").get_caller_identity()
                who = f"{caller['Arn']} (account {caller['Account']})"
                seen.setdefault(who, []).append(attribute)
        except ClientError as error:
            # Each side's credentials are its own: one side's failure is that side's row.
            yield _failed_row(doctor, "identity", attribute, "sts", error, "")
            continue
        if len(seen) == 1:
            [(who, _)] = seen.items()
            yield CheckResult("identity", side, Status.OK, f"{', '.join(attributes)} as {who}")
        else:
            detail = "; ".join(f"{', '.join(a)} as {who}" for who, a in seen.items())
            yield CheckResult(
                "identity",
                side,
                Status.WARN,
                f"the side's resources act as different principals: {detail}",
                "give the side's resources one role",
            )


def registry(doctor: Doctor) -> Iterator[CheckResult]:
    name = doctor.settings.registry_name
    arn = doctor.run.resource.schema_registry.registry_arn(name)
    topics = doctor.run.registry_topics
    yield CheckResult(
        "registry", "data", Status.OK, f"{arn}: {len(topics)} topics (GetRegistry, ListSchemas)"
    )


def glue_catalog(doctor: Doctor) -> Iterator[CheckResult]:
    """GetDatabase and GetTables for each database the topology names tables in."""
    named: dict[str, set[str]] = {doctor.settings.glue_database: set()}
    for topic in doctor.run.registry_topics:
        for table in doctor.run.topology.lineage_for(topic).tables:
            if table.catalog == "glue":
                named.setdefault(table.database, set()).add(table.table)
    catalog = doctor.run.resource.data_catalog
    glue = catalog.client()
    catalog_id = doctor.settings.glue_catalog_id
    for database, tables in sorted(named.items()):
        try:
            glue.get_database(Name=database, **({"CatalogId": catalog_id} if catalog_id else {}))
            present = set(catalog.table_names(database, catalog_id))
        except glue.exceptions.EntityNotFoundException:
            yield CheckResult(
                "glue-catalog",
                database,
                Status.FAIL,
                f"Glue database {database} does not exist (glue.GetDatabase)",
                f"set {env_name('glue_database')} or the sink connectors' Iceberg catalog to a "
                "database of the data account's Glue catalog",
            )
            continue
        except ClientError as error:
            if not catalog_id or error_code(error) not in DENIED_CODES:
                raise
            yield _foreign_catalog_denied(doctor, database, catalog_id, error)
            continue
        absent = sorted(tables - present)
        detail = f"{len(present)} tables; the topology names {len(tables)} of them here"
        if absent:
            yield CheckResult(
                "glue-catalog",
                database,
                Status.WARN,
                f"{detail}; not there yet: {', '.join(absent[:5])}"
                + (f" and {len(absent) - 5} more" if len(absent) > 5 else ""),
                "their lineage edges wait until the sink creates the tables (nothing to do if "
                "the sink has not written them yet)",
            )
        else:
            yield CheckResult("glue-catalog", database, Status.OK, detail)


def _foreign_catalog_denied(
    doctor: Doctor, database: str, catalog_id: str, error: ClientError
) -> CheckResult:
    """A read of another account's Glue Data Catalog needs that account's grant too: its
    catalog's resource policy (docs.aws.amazon.com/glue/latest/dg/cross-account-access.html)."""
    who = doctor.resource("data_catalog").credentials_label()
    return CheckResult(
        "glue-catalog",
        database,
        Status.FAIL,
        f"reading Glue database {database} of account {catalog_id}'s catalog was denied: "
        f"{describe_error(error)}",
        f"in account {catalog_id}, allow glue:GetDatabase, glue:GetTables and glue:GetTable on "
        f"its catalog, database {database} and its tables to {who} with a Glue resource policy "
        f"(glue:PutResourcePolicy; docs/real-aws.md), and allow them to {who} in IAM (iam/)",
    )


def connectors(doctor: Doctor) -> Iterator[CheckResult]:
    """The connectors can be read; and a WARN row per Debezium connector whose own OpenLineage
    names its topics ``kafka://unknown:unknown`` (their descriptions are the ones the topology
    reads, so no call is added)."""
    url = doctor.settings.kafka_connect_url
    found = doctor.run.connectors if url else doctor.run.resource.msk.connector_summaries()
    where = f"Kafka Connect REST {url}" if url else "MSK Connect ListConnectors"
    yield CheckResult("connectors", "data", Status.OK, f"{len(found)} connectors ({where})")
    for name in openlineage_without_kafka_namespace(doctor.run.connectors):
        yield CheckResult(
            "connectors",
            name,
            Status.WARN,
            f"Debezium's OpenLineage is on ({OPENLINEAGE_ENABLED}=true) and neither "
            f"{' nor '.join(OPENLINEAGE_KAFKA_NAMESPACE_PROPERTIES)} is set: its events name "
            f"its topics kafka://unknown:unknown: `dzlineage relay` maps them to the topics' "
            "nodes (it knows this connector's topics), any other way to DataZone makes nodes "
            "apart from the platform's topics",
            openlineage_namespace_fix(name),
        )


def cluster(doctor: Doctor) -> Iterator[CheckResult]:
    info = doctor.run.cluster
    yield CheckResult(
        "msk",
        "data",
        Status.OK,
        f"{info.name} ({info.cluster_type}), brokers {info.bootstrap_brokers} "
        "(DescribeClusterV2, GetBootstrapBrokers)",
    )


def kafka_names(doctor: Doctor) -> Iterator[CheckResult]:
    """Whether each Debezium connector's bootstrap property, which Debezium's own lineage names
    its topics by, is this cluster's (a broker on any listener, or a configured alias): any
    other name puts Debezium's topics on nodes apart from the sync's (no new call: the
    topology is the one the other checks read)."""
    kafka = doctor.run.kafka_cluster
    named = [s for s in doctor.run.topology.sources if s.lineage_bootstrap_servers]
    foreign = {s.name: kafka.foreign_servers(s.lineage_bootstrap_servers or "") for s in named}
    for connector, servers in foreign.items():
        if servers:
            yield CheckResult(
                "kafka-names",
                connector,
                Status.WARN,
                f"its bootstrap servers name {', '.join(servers)}, no broker of cluster "
                f"{doctor.run.cluster.name}: Debezium's own lineage names its topics there, "
                f"apart from the topics' nodes ({kafka.namespace}/<topic>)",
                f"set its openlineage.integration.dataset.kafka.bootstrap.servers to the "
                f"cluster's brokers, or add the name to {env_name('kafka_broker_aliases')}",
            )
    if not any(foreign.values()):
        yield CheckResult(
            "kafka-names",
            "data",
            Status.OK,
            f"topics are named {kafka.namespace}/<topic>; {len(named)} Debezium connectors "
            "name brokers of this cluster",
        )


def mapping_read(doctor: Doctor) -> Iterator[CheckResult]:
    """The first page of the domain's and project's mapping path: any record there means a
    sync ran, so the next is not the first."""
    prefix = doctor.run.mappings.prefix
    page = (
        doctor.run.resource.mapping_parameters.client()
        .get_parameters_by_path(Path=prefix, Recursive=True, MaxResults=10)
        .get("Parameters", [])
    )
    doctor.synced_before = bool(page)
    found = "records of an earlier sync" if page else "empty: nothing synced yet"
    yield CheckResult(
        "ssm-mapping",
        "governance",
        Status.OK,
        f"{prefix} readable (GetParametersByPath): {found}",
    )


def domain(doctor: Doctor) -> Iterator[CheckResult]:
    found = doctor.run.resource.datazone.client().get_domain(identifier=doctor.settings.domain_id)
    status = found.get("status", "?")
    detail = (
        f"{found.get('name')!r} ({found['id']}), {status}, "
        f"{found.get('domainVersion', 'V1')}, portal {found.get('portalUrl')}"
    )
    ok = status == "AVAILABLE"
    yield CheckResult(
        "domain",
        "governance",
        Status.OK if ok else Status.FAIL,
        detail,
        "" if ok else "wait until the domain is AVAILABLE, or set DZLINEAGE_DOMAIN_ID",
    )


def project(doctor: Doctor) -> Iterator[CheckResult]:
    found = doctor.run.resource.datazone.client().get_project(
        domainIdentifier=doctor.settings.domain_id, identifier=doctor.settings.project_id
    )
    status = found.get("projectStatus", "ACTIVE")
    ok = status == "ACTIVE"
    yield CheckResult(
        "project",
        "governance",
        Status.OK if ok else Status.FAIL,
        f"{found['name']!r} ({found['id']}), {status}",
        "" if ok else f"set {env_name('project_id')} to an ACTIVE project of the domain",
    )


def asset_creation(doctor: Doctor) -> Iterator[CheckResult]:
    """What can be told, read only, of whether the caller may create assets in the project: a
    readable catalog search scoped to it (the sync's reconcile and ownership reads)."""
    doctor.run.resource.datazone.client().search(
        domainIdentifier=doctor.settings.domain_id,
        owningProjectIdentifier=doctor.settings.project_id,
        searchScope="ASSET",
        maxResults=1,
    )
    yield CheckResult(
        "asset-creation",
        "governance",
        Status.OK,
        "the project's assets can be searched (Search); CreateAsset itself is authorised by "
        "project membership and, on a V2 domain, policy grants, which no read here proves",
    )


def authorization(doctor: Doctor) -> Iterator[CheckResult]:
    """The grants and membership a V2 domain (or one with domain units) wants for what the
    sync would create and write, read only (:func:`authorization_problems`)."""
    problems = authorization_problems(doctor.run, plan_custom_types(doctor.run).policies)
    for problem in problems:
        status = Status.FAIL if problem.certain else Status.WARN
        yield CheckResult("authorization", "governance", status, problem.message, problem.fix)
    if not problems:
        yield CheckResult(
            "authorization",
            "governance",
            Status.OK,
            "the project holds the grants and membership for the types and assets it writes",
        )


def lineage_landed(doctor: Doctor) -> Iterator[CheckResult]:
    """The last sync's read-back: each synced table's ARN node has its topic upstream and each
    topic asset is linked to its node (:func:`last_sync_readback`)."""
    # A run posted under one of the sync's jobs by someone else replaces the sync's edge; the
    # read-back then takes the topic for one whose lineage changed, and compares nothing.
    foreign = doctor.run.foreign_runs
    for run in foreign:
        yield CheckResult(
            "lineage-landed",
            run.topic,
            Status.FAIL,
            f"the latest run of the sync's job in DataZone is not the sync's: {run.describe()}",
            "`dzlineage sync` posts the true edge again under a new run dated after it "
            "(`--reconcile` when it is dated before the sync's newest run); send that producer "
            "through the relay, which refuses the product's job namespaces (docs/relay.md)",
        )
    report = last_sync_readback(doctor.run)
    yield from _readback_rows("lineage-landed", "governance", report, "docs/lineage-nodes.md")
    if not report.mismatches and not foreign:
        status = Status.OK if report.checked else Status.WARN
        yield CheckResult("lineage-landed", "governance", status, report.summary)


def _readback_rows(
    check: str, side: str, report: ReadbackReport, naming_page: str
) -> Iterator[CheckResult]:
    """A FAIL row per mismatch of a read-back (``naming_page``: how that graph names nodes)."""
    for mismatch in report.mismatches:
        yield CheckResult(
            check,
            mismatch.topic,
            Status.FAIL,
            f"expected {mismatch.expected}; found {mismatch.found}",
            f"see {naming_page}; `dzlineage sync --reconcile` re-posts the lineage",
        )


#: The event doctor posts to learn whether the data side may call glue:PostLineageEvent: no
#: OpenLineage event at all (no eventType, no run, no job), which Glue refuses as
#: InvalidInputException, so nothing lands in the graph; AccessDeniedException says the action
#: is not allowed. AWS documents no way to ask for the permission without calling it.
GLUE_POST_PROBE = "{}"


def glue_lineage(doctor: Doctor) -> Iterator[CheckResult]:
    """Where the sync posts lineage to the Glue Data Catalog: the data side may read its
    lineage graph (GetLineageNode by a table topic's identity; no such node is an answer too)
    and may post to it (PostLineageEvent of :data:`GLUE_POST_PROBE`, refused as invalid)."""
    if not _glue_is_a_destination(doctor):
        yield _not_a_glue_destination(doctor, "glue-lineage")
        return
    glue = doctor.run.resource.data_catalog.client()
    topic = _a_table_topic(doctor) or next(iter(doctor.run.registry_topics), None)
    read: str | None = "no topic to read a node of"
    if topic is not None:
        identity = dataset_source_identifier(*doctor.run.topic_dataset(topic))
        try:
            glue.get_lineage_node(Identifier=identity)
            read = f"GetLineageNode answered (a node for {identity})"
        except glue.exceptions.EntityNotFoundException:
            read = f"GetLineageNode answered (no node yet for {identity})"
        except ClientError as error:
            # The post is probed all the same: a role missing both actions learns it in one run.
            yield _failed_row(doctor, "glue-lineage", "data_catalog", "glue", error, "")
            read = None
    try:
        glue.post_lineage_event(Event=GLUE_POST_PROBE)
    except glue.exceptions.InvalidInputException:
        pass
    else:
        yield CheckResult(
            "glue-lineage",
            "data",
            Status.WARN,
            f"glue.PostLineageEvent accepted an empty event ({GLUE_POST_PROBE}) that AWS "
            "documents as invalid: whether the data side may post is not known",
            "the next `dzlineage sync` that posts lineage reads it back (its `lineage read-back in "
            "glue` line; this doctor's glue-lineage-landed row after it)",
        )
        return
    if read is not None:
        yield CheckResult(
            "glue-lineage",
            "data",
            Status.OK,
            f"{read}; PostLineageEvent is allowed (an empty event, refused as invalid input: "
            "nothing posted)",
        )


def glue_lineage_landed(doctor: Doctor) -> Iterator[CheckResult]:
    """Where the sync posts to the Glue Data Catalog: the last sync's lineage is in its graph,
    each synced table's ARN node with its topic upstream (:func:`last_sync_readback`)."""
    if not _glue_is_a_destination(doctor):
        yield _not_a_glue_destination(doctor, "glue-lineage-landed")
        return
    report = last_sync_readback(doctor.run, graph="glue")
    yield from _readback_rows("glue-lineage-landed", "data", report, "docs/glue-lineage.md")
    if not report.mismatches:
        status = Status.OK if report.checked else Status.WARN
        yield CheckResult("glue-lineage-landed", "data", status, report.summary)


def _glue_is_a_destination(doctor: Doctor) -> bool:
    return "glue" in doctor.settings.lineage_destinations


def _not_a_glue_destination(doctor: Doctor, check: str) -> CheckResult:
    destinations = ",".join(doctor.settings.lineage_destinations)
    return CheckResult(
        check,
        "data",
        Status.OK,
        f"not checked: the sync posts lineage to {destinations}, not to the Glue Data Catalog "
        f"({env_name('lineage_destinations')})",
    )


def _a_table_topic(doctor: Doctor) -> str | None:
    """A topic of a table (a node once the sync posted its lineage), if the registry has one."""
    return next(
        (
            t
            for t in doctor.run.registry_topics
            if doctor.run.topology.lineage_for(t).kind is TopicKind.TABLE
        ),
        None,
    )


def custom_types(doctor: Doctor) -> Iterator[CheckResult]:
    for state in inspect_custom_types(doctor.run):
        subject = f"{state.kind} type {state.name}"
        if state.fit is None:
            yield CheckResult(
                "types", subject, Status.OK, "absent: the first sync creates it (revision 1)"
            )
        elif state.fit.usable:
            kept = f"; others' parts kept: {', '.join(state.fit.kept)}" if state.fit.kept else ""
            yield CheckResult(
                "types", subject, Status.OK, f"revision {state.revision} holds the product's{kept}"
            )
        else:
            yield CheckResult(
                "types",
                subject,
                Status.FAIL,
                f"revision {state.revision} is incompatible: {'; '.join(state.fit.problems)}",
                "add the product's part with the tool that manages the type (the sync adopts "
                "any latest revision that holds it); or let the sync create a new revision, "
                "which DataZone may refuse (ConflictException): see docs/doctor.md",
            )


def lineage_reads(doctor: Doctor) -> Iterator[CheckResult]:
    """The reads `trace`, `orphans` and the sync's lineage health make: ListLineageEvents,
    GetLineageEvent, GetLineageNode (by a table topic's sourceIdentifier: a node once the
    sync posted its lineage), ListLineageNodeHistory."""
    datazone = doctor.run.resource.datazone.client()
    domain_id = doctor.settings.domain_id
    tried = ["ListLineageEvents"]
    events = datazone.list_lineage_events(domainIdentifier=domain_id, maxResults=1)["items"]
    if events:
        datazone.get_lineage_event(domainIdentifier=domain_id, identifier=events[0]["id"])
        tried.append("GetLineageEvent")
    topic = _a_table_topic(doctor)
    if topic is not None:
        tried.append("GetLineageNode")
        try:
            node = datazone.get_lineage_node(
                domainIdentifier=domain_id,
                identifier=dataset_source_identifier(*doctor.run.topic_dataset(topic)),
            )
        except datazone.exceptions.ResourceNotFoundException:
            node = None
        if node is not None:
            datazone.list_lineage_node_history(
                domainIdentifier=domain_id, identifier=node["id"], maxResults=1
            )
            tried.append("ListLineageNodeHistory")
    yield CheckResult("lineage-reads", "governance", Status.OK, f"{', '.join(tried)} answered")


def ssm_headroom(doctor: Doctor) -> Iterator[CheckResult]:
    """The default tier (GetServiceSetting), every parameter of the account and Region
    (DescribeParameters, 50 a page) and how many the mapping needs."""
    ssm = doctor.run.resource.mapping_parameters.client()
    tier = ssm.get_service_setting(SettingId=PARAMETER_TIER_SETTING)["ServiceSetting"]
    prefix = doctor.settings.ssm_prefix.rstrip("/") + "/"
    total = ours = 0
    pages = ssm.get_paginator("describe_parameters").paginate(
        PaginationConfig={"PageSize": DESCRIBE_PARAMETERS_PAGE}
    )
    for page in pages:
        for parameter in page.get("Parameters", []):
            total += 1
            ours += parameter["Name"].startswith(prefix)
    settings = doctor.settings
    needed = mapping_parameters_needed(
        len(doctor.run.registry_topics),
        layout=settings.ssm_mapping_layout,
        tier=settings.ssm_tier,
    )
    yield ssm_capacity(tier["SettingValue"], total, ours, needed)


def quotas(doctor: Doctor) -> Iterator[CheckResult]:
    """Service Quotas' figures for DataZone, Glue and SSM against what the client paces at."""
    pacing = parse_rate_limits(doctor.run.resource.datazone.rate_limits) or dict(AWS_QUOTAS)
    for service, attribute in QUOTA_SIDES.items():
        # Each service's quotas are read with the credentials of the side that calls it: a
        # refusal is that side's row, and the other services are still read.
        side = doctor.side_of(attribute)
        if side in doctor.unassumable:
            yield _not_assumed("quota", side)
            continue
        client = doctor.resource(attribute).client("service-quotas")
        try:
            listed = _service_quotas(client, "list_service_quotas", service, applied=True)
            if not listed:
                listed = _service_quotas(
                    client, "list_aws_default_service_quotas", service, applied=False
                )
        except client.exceptions.NoSuchResourceException:
            listed = []
        except ClientError as error:
            yield _failed_row(doctor, "quota", attribute, "service-quotas", error, "")
            continue
        yield from quota_checks(service, listed, pacing)


def _service_quotas(
    client: Any, operation: str, service: str, *, applied: bool
) -> list[AccountQuota]:
    """The service's rate quotas (those with a ``Period``), in calls per second: a quota of
    resources (schemas per registry, say) is never compared with a rate."""
    pages = client.get_paginator(operation).paginate(ServiceCode=service)
    return [
        AccountQuota(q["QuotaName"], q["QuotaCode"], rate, applied)
        for page in pages
        for q in page.get("Quotas", [])
        if (rate := per_second(q["Value"], q.get("Period"))) is not None
    ]


def updated_time(doctor: Doctor) -> Iterator[CheckResult]:
    """A schema with two or more versions: its listed ``UpdatedTime`` against its latest
    version's ``CreatedTime`` (GetSchema each until one is found, then GetSchemaVersion).

    A latest version created in the same millisecond as its schema tells nothing (a frozen
    ``UpdatedTime`` would equal it too): the next schema is looked at instead."""
    registry = doctor.run.resource.schema_registry
    listed = list(doctor.run.registry_topics.values())
    looked_at = 0
    for entry in listed[:UPDATED_TIME_SAMPLE]:
        looked_at += 1
        schema = registry.get_schema(entry.schema_arn)
        latest = int(schema["LatestSchemaVersion"])
        if latest < 2:
            continue
        created = _aws_time(registry.get_schema_version(entry.schema_arn)["CreatedTime"])
        if created <= _aws_time(schema["CreatedTime"]):
            continue
        yield updated_time_check(
            entry.schema_name, _aws_time(entry.updated_time), latest, created, len(listed)
        )
        return
    yield updated_time_unknown(looked_at)


def change_queue(doctor: Doctor) -> Iterator[CheckResult]:
    """GetQueueAttributes of DZLINEAGE_CHANGE_QUEUE_URL's queue, when it is set."""
    url = doctor.settings.change_queue_url
    if not url:
        yield change_queue_row(None, None)
        return
    # The data side's options (region, endpoint, role) are the registry reader's.
    data_side = doctor.resource("schema_registry")
    reader = ChangeQueueResource(
        **{name: getattr(data_side, name) for name in AwsClientResource.model_fields}
    )
    yield change_queue_row(url, reader.attributes(url))


def _aws_time(value: str | datetime) -> datetime:
    return value if isinstance(value, datetime) else datetime.fromisoformat(value)


_MISSING_DOMAIN = f"set {env_name('domain_id')} to a domain of the governance account and Region"
#: The checks in the order they print; see the module docstring.
CHECKS: tuple[Check, ...] = (
    Check("identity", "datazone", "sts", identity, both_sides=True),
    Check(
        "registry",
        "schema_registry",
        "glue",
        registry,
        missing=f"set {env_name('registry_name')} to a registry of the data account and Region "
        "(aws glue list-registries)",
    ),
    Check("connectors", "msk", "kafkaconnect", connectors),
    Check("glue-catalog", "data_catalog", "glue", glue_catalog, needs=("registry", "connectors")),
    Check(
        "msk",
        "msk",
        "kafka",
        cluster,
        missing=f"set {env_name('msk_cluster_arn')} to a cluster of the data account",
    ),
    Check(
        "kafka-names", "msk", "kafkaconnect", kafka_names, needs=("registry", "connectors", "msk")
    ),
    Check("ssm-mapping", "mapping_parameters", "ssm", mapping_read),
    Check("domain", "datazone", "datazone", domain, missing=_MISSING_DOMAIN),
    Check(
        "project",
        "datazone",
        "datazone",
        project,
        needs=("domain",),
        missing=f"set {env_name('project_id')} to a project of domain (aws datazone list-projects)",
    ),
    Check("asset-creation", "datazone", "datazone", asset_creation, needs=("project",)),
    Check("types", "datazone", "datazone", custom_types, needs=("domain",)),
    Check("authorization", "datazone", "datazone", authorization, needs=("project", "types")),
    Check(
        "lineage-reads",
        "datazone",
        "datazone",
        lineage_reads,
        needs=("domain", "registry", "connectors", "msk"),
    ),
    Check(
        "lineage-landed",
        "datazone",
        "datazone",
        lineage_landed,
        needs=("lineage-reads", "ssm-mapping"),
    ),
    Check(
        "glue-lineage",
        "data_catalog",
        "glue",
        glue_lineage,
        needs=("registry", "connectors", "msk"),
    ),
    Check(
        "glue-lineage-landed",
        "data_catalog",
        "glue",
        glue_lineage_landed,
        needs=("glue-lineage", "ssm-mapping"),
    ),
    Check("ssm-capacity", "mapping_parameters", "ssm", ssm_headroom, needs=("registry",)),
    Check("quota", "datazone", "service-quotas", quotas, both_sides=True),
    Check("updated-time", "schema_registry", "glue", updated_time, needs=("registry",)),
    # The queue is the data side's (the registry's account), read with its credentials.
    Check(
        "change-queue",
        "schema_registry",
        "sqs",
        change_queue,
        missing=f"create the queue with deploy/change-events.yaml or correct "
        f"{env_name('change_queue_url')} (docs/change-events.md)",
    ),
)


def shared_checks() -> tuple[Check, ...]:
    """The checks of what every scope of DZLINEAGE_SCOPES shares, made once: the governance
    side's (DataZone, the SSM mapping) that need nothing of a scope's data side."""
    shared: list[Check] = []
    for check in CHECKS:
        governance = AWS_RESOURCES[check.resource][1] == "governance" and not check.both_sides
        if governance and all(need in {c.name for c in shared} for need in check.needs):
            shared.append(check)
    return tuple(shared)
