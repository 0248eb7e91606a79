"""The asset stage: the topic's DataZone asset, created, revised when its content changed, or
left alone; its mapping record is staged for the runner to write."""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from email.utils import parsedate_to_datetime
from typing import Any, Literal

from botocore.exceptions import ClientError

from dzlineage_dagster.core.catalog.curation import (
    AssetContent,
    AssetForm,
    CurationError,
    curated_revision,
    text_record,
)
from dzlineage_dagster.core.catalog.forms import (
    ASSET_COMMON_DETAILS_FORM_TYPE,
    KAFKA_SCHEMA_FORM,
    KAFKA_TOPIC_ASSET_TYPE,
    MSK_SOURCE_REFERENCE_FORM,
    RELATIONAL_TABLE_FORM_TYPE,
    asset_common_details_content,
    fitting_relational_table_content,
    forms_fingerprint,
    kafka_schema_form_content,
    msk_source_form_content,
)
from dzlineage_dagster.core.catalog.planning import (
    DesiredTopicState,
    asset_action,
    datazone_asset_name,
)
from dzlineage_dagster.core.connectors.topics import TopicKind
from dzlineage_dagster.core.lineage.openlineage import dataset_source_identifier
from dzlineage_dagster.core.mapping.ssm_names import MappingRecord
from dzlineage_dagster.core.ownership.owners import InvalidOwner, Owner
from dzlineage_dagster.sync.catalog.owners import configured_owners
from dzlineage_dagster.sync.checks.topic_identity import refuse_second_asset
from dzlineage_dagster.sync.errors import SyncError, error_code
from dzlineage_dagster.sync.run_state import SyncRun
from dzlineage_dagster.sync.stages.schema import SchemaSnapshot

#: ``adopted``: an existing asset of the schema became the topic's (a lost or wrong mapping);
#: ``replayed``: nothing new was made, DataZone had it: it answered a client token it had
#: already seen, or the asset's latest revision already held the content (a crashed run's).
AssetAction = Literal["created", "revised", "unchanged", "adopted", "replayed"]


@dataclass(frozen=True)
class AssetOutcome:
    action: AssetAction
    record: MappingRecord
    url: str | None


def topic_source_identifier(run: SyncRun, topic: str) -> str:
    """What DataZone links the topic's lineage node to the asset by: the lineage stage's topic
    dataset (:meth:`SyncRun.topic_dataset`), so the node and the asset are the same topic."""
    return dataset_source_identifier(*run.topic_dataset(topic))


def topic_forms_input(run: SyncRun, snapshot: SchemaSnapshot) -> list[dict[str, str]]:
    cluster = run.cluster
    table_form, kept = fitting_relational_table_content(
        list(snapshot.columns), table_name=snapshot.topic
    )
    if kept < len(snapshot.columns):
        run.log.warning(
            f"{snapshot.topic}: {len(snapshot.columns)} columns exceed DataZone's form size "
            f"limit; the asset's table form lists the first {kept}"
        )
    contents = {
        KAFKA_SCHEMA_FORM.name: kafka_schema_form_content(
            topic=snapshot.topic,
            schema_version=snapshot.version,
            schema_arn=snapshot.schema_arn,
            registry_arn=snapshot.registry_arn,
            compatibility=snapshot.compatibility,
            data_format=snapshot.data_format,
            owners=[owner.name for owner in topic_configured_owners(run, snapshot.topic)],
        ),
        MSK_SOURCE_REFERENCE_FORM.name: msk_source_form_content(
            cluster_arn=cluster.arn,
            cluster_type=cluster.cluster_type,
            bootstrap_brokers=cluster.bootstrap_brokers,
        ),
        ASSET_COMMON_DETAILS_FORM_TYPE: asset_common_details_content(
            topic_source_identifier(run, snapshot.topic)
        ),
        RELATIONAL_TABLE_FORM_TYPE: table_form,
    }
    return [
        KAFKA_TOPIC_ASSET_TYPE.form_input(type_name, content)
        for type_name, content in contents.items()
    ]


def topic_configured_owners(run: SyncRun, topic: str) -> tuple[Owner, ...]:
    """The owners the topic's schema tag and connectors name, written to its asset (one GetTags
    on the schema a run). A wrong owner stops the topic's asset stage, naming it, before any write."""
    try:
        if topic not in run.configured_owners:
            run.configured_owners[topic] = configured_owners(run, topic)
        return run.configured_owners[topic]
    except InvalidOwner as error:
        raise SyncError(
            f"{topic}: {error}; its asset is not written until it is fixed (the next "
            "`dzlineage sync` tries the topic again; in Dagster, materialize its partition: a "
            "fixed schema tag alone is no change the registry sensor sees)"
        ) from None


def client_token(*parts: object) -> str:
    """A clientToken (64 hex characters) that is the same whenever the write is the same."""
    return hashlib.sha256("\n".join(map(str, parts)).encode()).hexdigest()


@dataclass(frozen=True)
class AssetPlan:
    action: Literal["create", "revise", "unchanged", "not-cataloged"]
    forms: list[dict[str, str]]
    desired: DesiredTopicState | None
    stored: MappingRecord | None
    #: The asset type revision a write would use (None: no type yet).
    type_revision: str | None


def request_sent_at(response: dict[str, Any], took: float, fallback: datetime) -> datetime:
    """The earliest time, on AWS's clock, at which the request ``response`` answers can have
    been sent: the answer's ``Date`` header (whole seconds, rounded down) less the ``took``
    seconds the call took here. What AWS made for this request is dated no earlier, whatever
    this machine's clock says; ``fallback`` (on this machine's clock) without a header."""
    date = response.get("ResponseMetadata", {}).get("HTTPHeaders", {}).get("date")
    try:
        answered = parsedate_to_datetime(date)
    except (TypeError, ValueError):
        return fallback
    return answered - timedelta(seconds=took)


def plan_topic_asset(
    run: SyncRun, snapshot: SchemaSnapshot, type_revision: str | None
) -> AssetPlan:
    """What the asset stage would do for this schema (``type_revision`` None: no type yet)."""
    stored = run.mappings.get(snapshot.schema_arn)
    if snapshot.kind is not TopicKind.TABLE:
        return AssetPlan("not-cataloged", [], None, stored, type_revision)
    if stored is None:
        refuse_second_asset(run, snapshot.topic, snapshot.schema_arn)
    forms = topic_forms_input(run, snapshot)
    desired = DesiredTopicState(
        topic=snapshot.topic,
        schema_arn=snapshot.schema_arn,
        schema_version=snapshot.version,
        # Not the asset type revision: an asset stays on the revision it has until its own
        # content changes, so a type revision others made (or one keeping theirs) revises none.
        content_fingerprint=forms_fingerprint(forms),
    )
    return AssetPlan(asset_action(desired, stored).value, forms, desired, stored, type_revision)


def sync_topic_asset(run: SyncRun, snapshot: SchemaSnapshot) -> AssetOutcome | None:
    """Create the topic's asset, revise it when its content changed, or leave it alone.

    Only table topics are cataloged: heartbeat, transaction and schema-change topics are
    connector plumbing, not data anyone subscribes to (None for them).
    """
    plan = plan_topic_asset(run, snapshot, run.asset_type_revision)
    if plan.action == "not-cataloged":
        return None
    stored = plan.stored
    if plan.action == "unchanged":
        return AssetOutcome("unchanged", stored, run.asset_url(stored.asset_id))

    write = AssetWrite(
        run,
        snapshot,
        name=datazone_asset_name(run.cluster.name, snapshot.topic),
        forms=plan.forms,
        type_revision=plan.type_revision,
        content_key=plan.desired.content_fingerprint,
    )
    action: AssetAction
    if stored is not None:
        response, action = write.revise_or_recreate(stored)
    else:
        response, action = write.create_or_adopt()
    record = replace(
        plan.desired.to_record(
            asset_id=response["id"],
            asset_revision=str(response["revision"]),
            asset_type_revision=str(response["typeRevision"]),
            lineage_fingerprint=stored.lineage_fingerprint if stored else "",
            registry_arn=snapshot.registry_arn,
        ),
        # The product's own text, also when the asset keeps a person's: what the next
        # revision tells a person's text by (see core.catalog.curation).
        product_text=text_record(write.product_content),
    )
    run.mappings.stage(record)
    return AssetOutcome(action, record, run.asset_url(record.asset_id))


@dataclass(frozen=True)
class AssetWrite:
    """One topic asset's content, and the DataZone writes that put it in place."""

    run: SyncRun
    snapshot: SchemaSnapshot
    name: str
    forms: list[dict[str, str]]
    type_revision: str
    #: Changes exactly when the content does: the client tokens of the writes derive from it.
    content_key: str
    #: What a revision sends when built on the asset's latest revision (the product's content
    #: with people's work kept, see :mod:`~dzlineage_dagster.core.catalog.curation`); None: the
    #: product's content alone.
    curated: AssetContent | None = None

    @property
    def product_content(self) -> AssetContent:
        return AssetContent(
            name=self.name,
            description=f"Kafka topic {self.snapshot.topic} on MSK cluster {self.run.cluster.name}",
            forms=tuple(map(AssetForm.from_input, self.forms)),
        )

    @property
    def content(self) -> AssetContent:
        return self.curated or self.product_content

    @property
    def _common(self) -> dict[str, Any]:
        content = self.content
        common = {
            "domainIdentifier": self.run.settings.domain_id,
            "name": content.name,
            "typeRevision": self.type_revision,
            "formsInput": [form.input() for form in content.forms],
        }
        if content.description is not None:
            common["description"] = content.description
        if content.glossary_terms:
            common["glossaryTerms"] = list(content.glossary_terms)
        return common

    def create(self, replacing: str = "") -> tuple[dict[str, Any], AssetAction]:
        """CreateAsset; its token covers the scope, the schema's generation and the content.

        The schema's creation time is its generation: a schema deleted and re-created under
        the same name (same ARN) gets a new token, so DataZone never replays the first
        generation's asset. ``replacing`` names an asset the same token made and that is gone.
        """
        settings = self.run.settings
        token = client_token(
            "create", settings.domain_id, settings.project_id, self.snapshot.schema_arn,
            self.snapshot.created_time, self.content_key, replacing,
        )  # fmt: skip
        sent = time.monotonic()
        response = self.run.resource.datazone.client().create_asset(
            **self._common,
            owningProjectIdentifier=settings.project_id,
            typeIdentifier=KAFKA_TOPIC_ASSET_TYPE.name,
            externalIdentifier=self.snapshot.schema_arn,
            clientToken=token,
        )
        self._check_answer("CreateAsset", response)
        if not self._replayed(response, time.monotonic() - sent):
            return response, "created"
        now = self._current(response["id"])
        if now is None:
            # The replayed asset was deleted since: this is a new creation, with its own token.
            return self.create(replacing=response["id"])
        if str(now["revision"]) != str(response["revision"]):
            # Revised since (curated in the portal, say): bring the product's content to it.
            created = AssetContent.from_asset(response)
            revised, _ = self.revise_latest(response["id"], now, created, text_record(created))
            return revised, "adopted"
        return response, "replayed"

    def revise(self, asset_id: str, revises: str) -> tuple[dict[str, Any], AssetAction]:
        """CreateAssetRevision; its token covers the asset and the revision it revises."""
        sent = time.monotonic()
        response = self.run.resource.datazone.client().create_asset_revision(
            **self._common,
            identifier=asset_id,
            clientToken=client_token("revise", asset_id, revises, self.content_key),
        )
        self._check_answer("CreateAssetRevision", response, asset_id)
        replayed = self._replayed(response, time.monotonic() - sent)
        return response, "replayed" if replayed else "revised"

    def revise_latest(
        self,
        asset_id: str,
        latest: dict[str, Any],
        last_written: AssetContent | None,
        written_text: str = "",
    ) -> tuple[dict[str, Any], AssetAction]:
        """Revise the asset's ``latest`` revision (GetAsset output) to the product's content,
        keeping people's work; ``last_written`` is the revision the product wrote last and
        ``written_text`` the record of its own last name and description (None, empty:
        unknown). No write when ``latest`` already holds that content."""
        topic = self.snapshot.topic
        try:
            curation = curated_revision(
                self.product_content, AssetContent.from_asset(latest), last_written, written_text
            )
        except CurationError as error:
            raise SyncError(f"{topic}: asset {asset_id}: {error}") from None
        for edit in curation.overridden:
            self.run.log.warning(f"{topic}: asset {asset_id}: {edit.describe()}")
        kept = [
            *(f"the {field} a person gave it" for field in curation.kept_text),
            *(f"form {name}" for name in curation.kept_forms),
        ]
        terms = len(curation.content.glossary_terms)
        if terms:
            kept.append(f"{terms} glossary term{'s' if terms > 1 else ''}")
        if kept:
            self.run.log.info(f"{topic}: asset {asset_id}: the revision keeps {', '.join(kept)}")
        revises = str(latest["revision"])
        held = AssetContent.from_asset(latest).holds(curation.content)
        if held and str(latest["typeRevision"]) == self.type_revision:
            return latest, "replayed"
        return replace(self, curated=curation.content).revise(asset_id, revises)

    def _check_answer(self, operation: str, response: dict[str, Any], asset_id: str = "") -> None:
        """Trust an answer only if it is the write that was asked for.

        A client token DataZone already saw returns the first answer unchanged; if that answer
        is not about this project, schema, name and content, the token replayed another write.
        """
        content = self.content
        got = AssetContent.from_asset(response)
        differences = [
            what
            for what, wrong in (
                ("asset id", bool(asset_id) and response.get("id") != asset_id),
                (
                    "externalIdentifier",
                    not asset_id and response.get("externalIdentifier") != self.snapshot.schema_arn,
                ),
                ("owning project", response.get("owningProjectId") != self.run.settings.project_id),
                ("name", got.name != content.name),
                ("type revision", str(response.get("typeRevision")) != self.type_revision),
                ("forms", any(not f.same_content(got.form(f.name)) for f in content.forms)),
                ("glossary terms", sorted(got.glossary_terms) != sorted(content.glossary_terms)),
            )
            if wrong
        ]
        if differences:
            raise SyncError(
                f"{operation} for {self.snapshot.topic} answered with asset "
                f"{response.get('id')} whose {', '.join(differences)} differ from the request: "
                "its client token replayed another write; the answer is not trusted"
            )

    def _replayed(self, response: dict[str, Any], took: float) -> bool:
        """Made before this request was sent (``took``: the seconds the call took here):
        DataZone answered a token it had already seen, for an earlier run or for another
        sync's request that came first (two syncs racing on one revision: only the one whose
        call made it reports it made). Either clock can tell: this run's start on this
        machine's (an earlier run's, within the second of this call, whose Date header cannot
        tell apart), or the call's Date header on AWS's (another run's, started before)."""
        created_at = response.get("createdAt")
        return created_at is not None and (
            created_at < self.run.started_at
            or created_at < request_sent_at(response, took, self.run.started_at)
        )

    def _current(self, asset_id: str, revision: str | None = None) -> dict[str, Any] | None:
        """The asset as it is now, or at ``revision`` (GetAsset); None when there is none."""
        datazone = self.run.resource.datazone.client()
        at_revision = {"revision": revision} if revision is not None else {}
        try:
            return datazone.get_asset(
                domainIdentifier=self.run.settings.domain_id, identifier=asset_id, **at_revision
            )
        except ClientError as error:
            if error_code(error) != "ResourceNotFoundException":
                raise
            return None

    def create_or_adopt(self) -> tuple[dict[str, Any], AssetAction]:
        try:
            return self.create()
        except ClientError as error:
            if error_code(error) != "ConflictException":
                raise
        # The asset exists but SSM forgot it (a crash before PutParameter, a lost parameter, a
        # schema re-created after its asset was deprecated): adopt it by its externalIdentifier
        # instead of creating a duplicate, and bring it to the registry's current content.
        existing = find_asset_by_external_identifier(
            self.run, self.snapshot.schema_arn, waits=ADOPTION_SEARCH_WAITS
        )
        if existing is None or existing.get("owningProjectId") != self.run.settings.project_id:
            refused = (
                f"DataZone refused to create an asset for {self.snapshot.schema_arn} (an asset "
                "with that externalIdentifier exists), but Search finds no asset of project "
                f"{self.run.settings.project_id} with it"
            )
            if existing is not None:
                raise SyncError(f"{refused}: is it owned by another project?")
            raise SyncError(
                f"{refused}, nor of any project, also {sum(ADOPTION_SEARCH_WAITS):g} seconds "
                "later; if it was made moments ago, Search may not show it yet and the next "
                "sync adopts it. Nothing was created"
            )
        self.run.log.warning(
            f"{self.snapshot.topic}: SSM had no mapping for asset {existing['id']}; adopted"
        )
        response, _ = self.revise_latest(existing["id"], existing, last_written=None)
        return response, "adopted"

    def revise_or_recreate(self, stored: MappingRecord) -> tuple[dict[str, Any], AssetAction]:
        """Revise the mapped asset from its latest revision (one GetAsset; a second one reads
        the product's own last revision, the mapping's, when someone revised the asset since:
        its forms are the product's own content), or recreate it when it was deleted."""
        asset_id = stored.asset_id
        latest = self._current(asset_id)
        if latest is None:
            self.run.log.warning(
                f"{self.snapshot.topic}: asset {asset_id} was deleted in DataZone; recreating it"
            )
            return self.create_or_adopt()
        written = (
            latest
            if str(latest["revision"]) == stored.asset_revision
            else self._current(asset_id, stored.asset_revision)
        )
        last_written = AssetContent.from_asset(written) if written is not None else None
        return self.revise_latest(asset_id, latest, last_written, stored.product_text)


#: Seconds between the Searches for an asset DataZone says exists (its ConflictException on
#: the externalIdentifier) but Search does not list yet: its consistency is undocumented, and
#: Terraform's DataZone resources retry reads after creates. Bounded: 7 seconds at most.
ADOPTION_SEARCH_WAITS = (1.0, 2.0, 4.0)


def find_asset_by_external_identifier(
    run: SyncRun, schema_arn: str, waits: tuple[float, ...] = ()
) -> dict[str, Any] | None:
    """The asset whose ``externalIdentifier`` is the schema ARN, found whatever it was renamed
    to: this run's project's (GetAsset output) when Search lists one, another project's (its
    Search item) otherwise; None when there is none. ``waits``: the pauses before
    each further Search while Search lists none at all (another project's is an answer)."""
    project = run.settings.project_id
    for pause in (0.0, *waits):
        time.sleep(pause)
        found = [
            item
            for item in run.resource.datazone.search_assets(run.settings.domain_id, text=schema_arn)
            if item.get("externalIdentifier") == schema_arn
        ]
        ours = [item for item in found if item.get("owningProjectId") == project]
        if ours:
            return run.resource.datazone.client().get_asset(
                domainIdentifier=run.settings.domain_id, identifier=ours[0]["identifier"]
            )
        if found:
            return found[0]  # not read: the caller may not be allowed to read another's asset
    return None
