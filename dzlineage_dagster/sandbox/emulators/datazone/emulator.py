"""The DataZone operations: each handler takes the validated input of one operation and answers
with its output, on the state of :mod:`~dzlineage_dagster.sandbox.emulators.datazone.domain`."""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import timedelta
from typing import Any, TypeVar

from werkzeug.wrappers import Request, Response

from dzlineage_dagster.sandbox.emulators.datazone.access.authorization import (
    caller_principal,
)
from dzlineage_dagster.sandbox.emulators.datazone.access.policies import PolicyOperations
from dzlineage_dagster.sandbox.emulators.datazone.catalog.glossary import Glossaries
from dzlineage_dagster.sandbox.emulators.datazone.catalog.listings import Listing
from dzlineage_dagster.sandbox.emulators.datazone.catalog.ownership import ADMIN_CATEGORY
from dzlineage_dagster.sandbox.emulators.datazone.catalog.records import (
    MANAGED_PREFIX,
    Asset,
    AssetRevision,
    AssetTypeRevision,
    FormEntry,
    FormTypeRevision,
    Project,
    TypeRevision,
    add_revision,
    revision_of,
    with_common_details,
)
from dzlineage_dagster.sandbox.emulators.datazone.catalog.search import (
    indexed_as_of,
    matching_assets,
)
from dzlineage_dagster.sandbox.emulators.datazone.catalog.smithy_forms import FormModel
from dzlineage_dagster.sandbox.emulators.datazone.common import invalid, new_id, not_found, now
from dzlineage_dagster.sandbox.emulators.datazone.domain import Domain
from dzlineage_dagster.sandbox.emulators.datazone.lineage import (
    LineageEventRecord,
    LineageGraph,
    RunEvent,
)
from dzlineage_dagster.sandbox.protocol.aws import (
    AwsServiceError,
    RestJsonEmulator,
    RestJsonService,
)
from dzlineage_dagster.sandbox.server.ambiguities import Ambiguities

#: The request environ key through which the sandbox server hands a deferred fault (one whose
#: effect comes after the call succeeded, e.g. ``fail-after-accept``) to the emulator.
DEFERRED_FAULT_ENVIRON_KEY = "dzlineage.sandbox.deferred_fault"

#: Where the emulated domains' portals "are": ``.invalid`` never resolves (RFC 2606), so a
#: portal link from the sandbox says plainly that it points at no real DataZone portal.
SANDBOX_PORTAL_DOMAIN = "portal.sandbox.invalid"

#: A form type or asset type revision.
TypeT = TypeVar("TypeT", bound=TypeRevision)


class DataZoneEmulator(PolicyOperations, RestJsonEmulator):
    """DataZone for one region and account, all state in the instance."""

    def __init__(
        self,
        *,
        region: str,
        account_id: str,
        lineage_processing_seconds: float = 0.0,
        listing_processing_seconds: float = 0.0,
        ownership_transfer_seconds: float = 0.0,
    ) -> None:
        self.region = region
        self.account_id = account_id
        self.user_id = new_id()
        #: How long DataZone takes to process an accepted lineage event (AWS: asynchronous).
        self.lineage_processing = timedelta(seconds=lineage_processing_seconds)
        #: How long DataZone takes to publish a listing (AWS: CREATING, then ACTIVE).
        self.listing_processing = timedelta(seconds=listing_processing_seconds)
        #: How long an UpdateAssetOwner transfer runs (AWS: IN_PROGRESS, then SUCCEEDED).
        self.ownership_transfer = timedelta(seconds=ownership_transfer_seconds)
        #: The deferred fault of the request this thread is answering (see handle()).
        self._request = threading.local()
        self._domains: dict[str, Domain] = {}
        #: Each domain's glossaries, by domain id.
        self._domain_glossaries: dict[str, Glossaries] = {}
        #: Which reading of an undocumented behaviour to answer (the sandbox's switches).
        self.ambiguities = Ambiguities()
        #: (domain, run id, event type) of the events refused once under lineage_conflict=other.
        self._conflicted_posts: set[tuple[str, str, str]] = set()
        self._service = RestJsonService(
            "datazone",
            {
                "CreateDomain": self._create_domain,
                "GetDomain": self._get_domain,
                "CreateProject": self._create_project,
                "GetProject": self._get_project,
                "ListProjects": self._list_projects,
                "CreateFormType": self._create_form_type,
                "GetFormType": self._get_form_type,
                "CreateAssetType": self._create_asset_type,
                "GetAssetType": self._get_asset_type,
                "CreateAsset": self._create_asset,
                "GetAsset": self._get_asset,
                "CreateAssetRevision": self._create_asset_revision,
                "ListAssetRevisions": self._list_asset_revisions,
                "DeleteAsset": self._delete_asset,
                "UpdateAssetOwner": self._update_asset_owner,
                "Search": self._search,
                "CreateListingChangeSet": self._create_listing_change_set,
                "GetListing": self._get_listing,
                "SearchListings": self._search_listings,
                "CreateGlossary": self._create_glossary,
                "GetGlossary": self._get_glossary,
                "CreateGlossaryTerm": self._create_glossary_term,
                "GetGlossaryTerm": self._get_glossary_term,
                "PostLineageEvent": self._post_lineage_event,
                "GetLineageNode": self._get_lineage_node,
                "ListLineageNodeHistory": self._list_lineage_node_history,
                "ListLineageEvents": self._list_lineage_events,
                "GetLineageEvent": self._get_lineage_event,
                **self.policy_handlers(),
                "DeleteLineageEvent": self._delete_lineage_event,
                "QueryGraph": self._query_graph,
            },
        )

    def handle(self, request: Request) -> Response:
        # The handler runs on this thread: it reads the fault from here, not from its params.
        self._request.deferred_fault = request.environ.get(DEFERRED_FAULT_ENVIRON_KEY)
        # Whose policies and memberships count: the IAM principal that signed the request.
        self._request.caller = caller_principal(
            request.headers.get("Authorization"), self.account_id
        )
        try:
            return super().handle(request)
        finally:
            self._request.deferred_fault = None

    def _domain(self, params: dict[str, Any], key: str = "domainIdentifier") -> Domain:
        """The domain, its ownership transfers settled up to now."""
        domain = self._domains.get(params[key])
        if domain is None:
            raise not_found(f"Domain {params[key]} not found")
        domain.transfers.settle(domain.assets, now())
        return domain

    # domains and projects

    def _create_domain(self, params: dict[str, Any]) -> dict[str, Any]:
        if any(d.name == params["name"] for d in self._domains.values()):
            raise AwsServiceError("ConflictException", f"Domain {params['name']} already exists")
        if params.get("domainVersion") == "V2" and not (
            params.get("serviceRole") and params.get("domainExecutionRole")
        ):
            # A SageMaker Unified Studio domain acts through both roles (admin guide,
            # "AmazonSageMakerDomainExecution role" and "AmazonSageMakerDomainService role").
            raise invalid("A V2 domain needs a serviceRole and a domainExecutionRole")
        domain_id = f"dzd_{new_id()}"
        default_role = f"arn:aws:iam::{self.account_id}:role/AmazonDataZoneDomainExecution"
        domain = Domain(
            id=domain_id,
            name=params["name"],
            description=params.get("description"),
            arn=f"arn:aws:datazone:{self.region}:{self.account_id}:domain/{domain_id}",
            portal_url=f"https://{domain_id}.{self.region}.{SANDBOX_PORTAL_DOMAIN}",
            root_domain_unit_id=new_id(),
            execution_role=params.get("domainExecutionRole") or default_role,
            service_role=params.get("serviceRole"),
            domain_version=params.get("domainVersion") or "V1",
            tags=params.get("tags") or {},
            kms_key=params.get("kmsKeyIdentifier"),
            single_sign_on=params.get("singleSignOn"),
            created_at=now(),
        )
        self._domains[domain_id] = domain
        return domain.output()

    def _get_domain(self, params: dict[str, Any]) -> dict[str, Any]:
        return self._domain(params, "identifier").output()

    def _create_project(self, params: dict[str, Any]) -> dict[str, Any]:
        domain = self._domain(params)
        if any(p.name == params["name"] for p in domain.projects.values()):
            raise AwsServiceError(
                "ConflictException", f"A project named {params['name']} already exists"
            )
        category = params.get("projectCategory")
        administration = domain.administration_project()
        if category == ADMIN_CATEGORY and administration is not None:
            raise AwsServiceError(
                "ConflictException",
                f"Domain {domain.id} already has an administration project ({administration.id})",
            )
        project = Project(
            id=new_id(),
            name=params["name"],
            description=params.get("description"),
            glossary_terms=tuple(params.get("glossaryTerms") or ()),
            created_at=now(),
            created_by=self.user_id,
            category=category,
        )
        domain.authorization.place_project(project.id, params.get("domainUnitId"))
        domain.projects[project.id] = project
        # The project's creator is its owner (DataZone: a project's creator is a member).
        authorization = domain.authorization
        authorization.add_member(
            project.id, authorization.profile_of(self._caller), "PROJECT_OWNER"
        )
        return _project_output(domain, project)

    def _get_project(self, params: dict[str, Any]) -> dict[str, Any]:
        domain = self._domain(params)
        return _project_output(domain, domain.project(params["identifier"]))

    def _list_projects(self, params: dict[str, Any]) -> dict[str, Any]:
        domain = self._domain(params)
        projects = [
            p
            for p in domain.projects.values()
            if params.get("name") in (None, p.name)
            and params.get("projectCategory") in (None, p.category)
        ]
        page, next_token = self._service.page(projects, params, default_size=50)
        items = [_project_summary(domain, p) for p in page]
        return {"items": items, "nextToken": next_token}

    # form and asset types

    def _create_form_type(self, params: dict[str, Any]) -> dict[str, Any]:
        domain = self._domain(params)
        project = domain.project(params["owningProjectIdentifier"])
        self.authorize_creation(domain, "CreateFormType", project.id)
        name = params["name"]
        if name.startswith(MANAGED_PREFIX):
            raise invalid(f"Form type names starting with {MANAGED_PREFIX} are reserved")
        smithy = params["model"]["smithy"]
        try:
            model = FormModel.parse(smithy, name)
        except ValueError as error:
            raise invalid(f"Invalid Smithy model for form type {name}: {error}") from error
        form_type = self._add_type_revision(
            "Form",
            domain.form_types.setdefault(name, []),
            lambda latest: latest.smithy == smithy,
            lambda revision: FormTypeRevision(
                name=name,
                revision=revision,
                smithy=smithy,
                model=model,
                owning_project_id=project.id,
                status=params.get("status") or "ENABLED",
                description=params.get("description"),
                created_at=now(),
                created_by=self.user_id,
            ),
        )
        return {**_type_origin(domain, form_type), "description": form_type.description}

    def _get_form_type(self, params: dict[str, Any]) -> dict[str, Any]:
        domain = self._domain(params)
        form_type = domain.form_type(params["formTypeIdentifier"], params.get("revision"))
        if form_type is None:
            raise not_found(f"Form type {params['formTypeIdentifier']} not found")
        return {
            **_type_origin(domain, form_type),
            "model": {"smithy": form_type.smithy},
            "status": form_type.status,
            "createdAt": form_type.created_at,
            "createdBy": form_type.created_by,
            "description": form_type.description,
        }

    def _create_asset_type(self, params: dict[str, Any]) -> dict[str, Any]:
        domain = self._domain(params)
        project = domain.project(params["owningProjectIdentifier"])
        self.authorize_creation(domain, "CreateAssetType", project.id)
        name = params["name"]
        entries = {}
        for form_name, entry in params["formsInput"].items():
            form_type = domain.form_type(entry["typeIdentifier"], entry["typeRevision"])
            if form_type is None:
                name_given = domain.local_name(entry["typeIdentifier"])
                raise domain.unknown_form_type(name_given, entry["typeRevision"])
            entries[form_name] = FormEntry(form_type.ref, bool(entry.get("required")))
        forms = with_common_details(entries)
        created_at = now()
        asset_type = self._add_type_revision(
            "Asset",
            domain.asset_types.setdefault(name, []),
            lambda latest: (
                latest.forms == forms and latest.description == params.get("description")
            ),
            lambda revision: AssetTypeRevision(
                name=name,
                revision=revision,
                owning_project_id=project.id,
                description=params.get("description"),
                created_at=created_at,
                created_by=self.user_id,
                forms=forms,
            ),
        )
        return _asset_type_output(domain, asset_type)

    def _add_type_revision(
        self,
        kind: str,
        history: list[TypeT],
        is_same: Callable[[TypeT], bool],
        build: Callable[[str], TypeT],
    ) -> TypeT:
        """A new revision of a changed type, or, under the API reference's reading of the name
        ("must be unique within the domain"), ConflictException."""
        if history and self.ambiguities.types_conflict and not is_same(history[-1]):
            raise AwsServiceError(
                "ConflictException", f"{kind} type {history[-1].name} already exists"
            )
        return add_revision(history, is_same, build)

    def _get_asset_type(self, params: dict[str, Any]) -> dict[str, Any]:
        domain = self._domain(params)
        asset_type = domain.asset_type(params["identifier"], params.get("revision"))
        if asset_type is None:
            raise not_found(f"Asset type {params['identifier']} not found")
        return _asset_type_output(domain, asset_type)

    # assets

    def _create_asset(self, params: dict[str, Any]) -> dict[str, Any]:
        domain = self._domain(params)
        project = domain.project(params["owningProjectIdentifier"])
        external_identifier = params.get("externalIdentifier")
        if external_identifier and any(
            a.external_identifier == external_identifier for a in domain.assets.values()
        ):
            raise AwsServiceError(
                "ConflictException",
                f"An asset with externalIdentifier {external_identifier} already exists",
            )
        asset_type = domain.asset_type(params["typeIdentifier"], params.get("typeRevision"))
        if asset_type is None:
            raise not_found(
                "The given Asset's input resource doesn't exist. "
                "Try creating Asset's input resource before accessing it."
            )
        self.authorize_asset_write(domain, "CreateAsset", project.id, asset_type)
        asset = Asset(
            id=new_id(),
            owning_project_id=project.id,
            type_name=asset_type.name,
            external_identifier=external_identifier,
            lineage_node_id=new_id(),
            revisions=[self._asset_revision(domain, asset_type, params, "1")],
        )
        domain.assets[asset.id] = asset
        return _asset_output(domain, asset, asset.latest)

    def _create_asset_revision(self, params: dict[str, Any]) -> dict[str, Any]:
        domain = self._domain(params)
        asset = domain.asset(params["identifier"])
        domain.transfers.refuse_change(asset.id, now(), "revise")
        asset_type = domain.asset_type(asset.type_name, params.get("typeRevision"))
        if asset_type is None:
            raise not_found(f"Asset type {asset.type_name}@{params['typeRevision']} not found")
        self.authorize_asset_write(
            domain, "CreateAssetRevision", asset.owning_project_id, asset_type
        )
        revision = str(int(asset.latest.revision) + 1)
        asset.revisions.append(self._asset_revision(domain, asset_type, params, revision))
        return _asset_output(domain, asset, asset.latest)

    def _asset_revision(
        self,
        domain: Domain,
        asset_type: AssetTypeRevision,
        params: dict[str, Any],
        revision: str,
    ) -> AssetRevision:
        return AssetRevision(
            revision=revision,
            name=params["name"],
            description=params.get("description"),
            type_revision=asset_type.revision,
            forms=tuple(domain.checked_forms(asset_type, params.get("formsInput") or [])),
            glossary_terms=self._glossaries(domain).attached_terms(params.get("glossaryTerms")),
            created_at=now(),
            created_by=self.user_id,
        )

    def _get_asset(self, params: dict[str, Any]) -> dict[str, Any]:
        domain = self._domain(params)
        asset = domain.asset(params["identifier"])
        revision = revision_of(asset.revisions, params.get("revision"))
        if revision is None:
            raise not_found(f"Revision {params['revision']} of asset {asset.id} doesn't exist")
        output = _asset_output(domain, asset, revision)
        listing = domain.listings.of_asset(asset.id)
        if listing is not None:
            output["listing"] = {"listingId": listing.id, "listingStatus": listing.status(now())}
        transfer = domain.transfers.of_asset(asset.id)
        if transfer is not None:
            output["ownershipTransfer"] = transfer.output(now())
        return output

    def _list_asset_revisions(self, params: dict[str, Any]) -> dict[str, Any]:
        domain = self._domain(params)
        asset = domain.asset(params["identifier"])
        newest_first = list(reversed(asset.revisions))
        page, next_token = self._service.page(newest_first, params, default_size=50)
        items = [
            {
                "domainId": domain.id,
                "id": asset.id,
                "revision": r.revision,
                "createdBy": r.created_by,
                "createdAt": r.created_at,
            }
            for r in page
        ]
        return {"items": items, "nextToken": next_token}

    def _delete_asset(self, params: dict[str, Any]) -> None:
        domain = self._domain(params)
        asset_id = domain.asset(params["identifier"]).id
        domain.transfers.refuse_change(asset_id, now(), "delete")
        del domain.assets[asset_id]
        domain.listings.withdraw(asset_id, at=now())

    def _update_asset_owner(self, params: dict[str, Any]) -> dict[str, Any]:
        domain = self._domain(params)
        asset = domain.asset(params["identifier"])
        transfer = domain.transfers.start(
            asset,
            domain.project(params["targetProjectIdentifier"]),
            domain.administration_project(),
            at=now(),
            by=self.user_id,
            processing=self.ownership_transfer,
            fails=getattr(self._request, "deferred_fault", None) == "fail-after-accept",
        )
        return {
            "id": asset.id,
            "revision": asset.latest.revision,
            "ownershipTransfer": transfer.output(now()),
        }

    # search

    def _search(self, params: dict[str, Any]) -> dict[str, Any]:
        domain = self._domain(params)
        matches = []
        if params["searchScope"] == "ASSET":
            lag = timedelta(seconds=self.ambiguities.search_lag_seconds)
            matches = matching_assets(indexed_as_of(domain.assets.values(), now() - lag), params)
            matches = [a for a in matches if a.id not in self.ambiguities.search_omits]
        page, next_token = self._service.page(matches, params, default_size=50)
        with_forms = "FORMS" in (params.get("additionalAttributes") or [])
        items = [{"assetItem": _asset_item(domain, a, with_forms)} for a in page]
        return {"items": items, "nextToken": next_token, "totalMatchCount": len(matches)}

    # listings

    def _create_listing_change_set(self, params: dict[str, Any]) -> dict[str, Any]:
        domain = self._domain(params)
        if params["entityType"] != "ASSET":
            raise invalid(f"The sandbox lists assets only, not {params['entityType']}")
        asset = domain.asset(params["entityIdentifier"])
        at = now()
        domain.transfers.refuse_change(asset.id, at, "change the listing of")
        listing: Listing
        if params["action"] == "PUBLISH":
            listing = domain.listings.publish(
                asset,
                params.get("entityRevision"),
                at=at,
                by=self.user_id,
                processing=self.listing_processing,
            )
        else:
            listing = domain.listings.unpublish(asset, at=at, by=self.user_id)
        return listing.change_output(at)

    def _get_listing(self, params: dict[str, Any]) -> dict[str, Any]:
        domain = self._domain(params)
        listing = domain.listings.get(params["identifier"])
        revision = listing.revision(params.get("listingRevision"))
        return listing.output(domain.id, revision, now())

    def _search_listings(self, params: dict[str, Any]) -> dict[str, Any]:
        """What a user of any project finds in the catalog: listed assets as published."""
        domain = self._domain(params)
        shown = domain.listings.visible(now())
        by_asset = {listing.asset.id: (listing, revision) for listing, revision in shown}
        matches = matching_assets(
            [listing.as_published(revision) for listing, revision in shown], params
        )
        page, next_token = self._service.page(matches, params, default_size=50)
        with_forms = "FORMS" in (params.get("additionalAttributes") or [])
        items = [
            {"assetListing": by_asset[asset.id][0].search_item(by_asset[asset.id][1], with_forms)}
            for asset in page
        ]
        return {"items": items, "nextToken": next_token, "totalMatchCount": len(matches)}

    # glossaries

    def _glossaries(self, domain: Domain) -> Glossaries:
        return self._domain_glossaries.setdefault(domain.id, Glossaries())

    def _create_glossary(self, params: dict[str, Any]) -> dict[str, Any]:
        domain = self._domain(params)
        project = domain.project(params["owningProjectIdentifier"])
        self.authorize_creation(domain, "CreateGlossary", project.id)
        glossary = self._glossaries(domain).create_glossary(project.id, params, self.user_id)
        return glossary.output(domain.id)

    def _get_glossary(self, params: dict[str, Any]) -> dict[str, Any]:
        domain = self._domain(params)
        return self._glossaries(domain).glossary(params["identifier"]).output(domain.id)

    def _create_glossary_term(self, params: dict[str, Any]) -> dict[str, Any]:
        domain = self._domain(params)
        return self._glossaries(domain).create_term(params, self.user_id).output(domain.id)

    def _get_glossary_term(self, params: dict[str, Any]) -> dict[str, Any]:
        domain = self._domain(params)
        return self._glossaries(domain).term(params["identifier"]).output(domain.id)

    # lineage

    def _lineage(self, params: dict[str, Any]) -> tuple[Domain, LineageGraph]:
        """The domain and its lineage graph, processed up to now."""
        domain = self._domain(params)
        domain.lineage.colon_joins_glue = self.ambiguities.glue_colon_join
        domain.lineage.runs_show_latest_event = self.ambiguities.run_event_merge == "latest"
        domain.lineage.node_schema = self.ambiguities.node_schema
        domain.lineage.advance(now())
        return domain, domain.lineage

    def _post_lineage_event(self, params: dict[str, Any]) -> dict[str, Any]:
        domain, lineage = self._lineage(params)
        event = RunEvent.parse(params["event"])
        first_post = (domain.id, event.run_id, event.event_type) not in self._conflicted_posts
        if self.ambiguities.lineage_conflict == "other" and first_post:
            # The `other` reading of PostLineageEvent's 409 (see .ambiguities): nothing stored.
            self._conflicted_posts.add((domain.id, event.run_id, event.event_type))
            raise AwsServiceError(
                "ConflictException", "A concurrent request is modifying this lineage; try again"
            )
        record = LineageEventRecord(
            id=new_id(),
            payload=params["event"],
            event=event,
            created_at=now(),
            created_by=self.user_id,
        )
        fails = getattr(self._request, "deferred_fault", None) == "fail-after-accept"
        lineage.accept(record, self.lineage_processing, fails=fails)
        return {"id": record.id, "domainId": domain.id}

    def _get_lineage_node(self, params: dict[str, Any]) -> dict[str, Any]:
        domain, _ = self._lineage(params)
        when = params.get("eventTimestamp")
        views = domain.lineage.node_views(params["identifier"], when, domain.assets)
        if not views:
            raise not_found(f"Lineage node {params['identifier']} not found")
        return views[-1].output(domain.id)

    def _list_lineage_node_history(self, params: dict[str, Any]) -> dict[str, Any]:
        domain, _ = self._lineage(params)
        views = domain.lineage.node_views(
            params["identifier"], None, domain.assets, every_version=True
        )
        if not views:
            raise not_found(f"Lineage node {params['identifier']} not found")
        direction = params.get("direction")
        after, before = params.get("eventTimestampGTE"), params.get("eventTimestampLTE")
        selected = [
            view
            for view in views
            if (after is None or view.event_time >= after)
            and (before is None or view.event_time <= before)
            and (direction != "UPSTREAM" or view.upstream)
            and (direction != "DOWNSTREAM" or view.downstream)
        ]
        if params.get("sortOrder", "DESCENDING") == "DESCENDING":
            selected.reverse()
        page, next_token = self._service.page(selected, params, default_size=50)
        return {"nodes": [view.summary(domain.id) for view in page], "nextToken": next_token}

    def _list_lineage_events(self, params: dict[str, Any]) -> dict[str, Any]:
        domain, lineage = self._lineage(params)
        at = now()
        after, before = params.get("timestampAfter"), params.get("timestampBefore")
        status = params.get("processingStatus")
        records = [
            r
            for r in lineage.events.values()
            if (after is None or r.event.event_time >= after)
            and (before is None or r.event.event_time <= before)
            and status in (None, r.processing_status(at))
        ]
        records.sort(
            key=lambda r: r.event.event_time, reverse=params.get("sortOrder") != "ASCENDING"
        )
        page, next_token = self._service.page(records, params, default_size=50)
        items = [
            {
                "id": r.id,
                "domainId": domain.id,
                "processingStatus": r.processing_status(at),
                "eventTime": r.event.event_time,
                "eventSummary": r.event.summary(),
                "createdBy": r.created_by,
                "createdAt": r.created_at,
            }
            for r in page
        ]
        return {"items": items, "nextToken": next_token}

    def _get_lineage_event(self, params: dict[str, Any]) -> dict[str, Any]:
        domain, lineage = self._lineage(params)
        record = lineage.events.get(params["identifier"])
        if record is None:
            raise not_found(f"Lineage event {params['identifier']} not found")
        return {
            "domainId": domain.id,
            "id": record.id,
            "event": record.payload,
            "createdBy": record.created_by,
            "processingStatus": record.processing_status(now()),
            "eventTime": record.event.event_time,
            "createdAt": record.created_at,
        }

    def _delete_lineage_event(self, params: dict[str, Any]) -> dict[str, Any]:
        domain, lineage = self._lineage(params)
        record = lineage.delete(params["identifier"])
        if record is None:
            raise not_found(f"Lineage event {params['identifier']} not found")
        return {
            "id": record.id,
            "domainId": domain.id,
            "processingStatus": record.processing_status(now()),
        }

    def _query_graph(self, params: dict[str, Any]) -> dict[str, Any]:
        """QueryGraph as botocore's model describes it: two match clauses, an
        ``entityPattern`` (a ``LINEAGE_NODE`` by id or sourceIdentifier) to start from and a
        ``relationPattern`` (``LINEAGE``, ``IN`` upstream or ``OUT`` downstream, at most
        ``maxPathLength`` hops, 1 to 5); the nodes reached, as ``lineageNode`` items, paged by
        up to 50. The model leaves open the hops when ``maxPathLength`` is absent (the sandbox
        takes 1) and whether the start node is an item (the sandbox leaves it out); its errors
        have no ResourceNotFoundException, so an unknown start node finds nothing. Entity
        filters are refused: the sandbox does not evaluate them."""
        domain, lineage = self._lineage(params)
        clauses = params["match"]
        entities = [c["entityPattern"] for c in clauses if "entityPattern" in c]
        relations = [c["relationPattern"] for c in clauses if "relationPattern" in c]
        if len(entities) != 1 or len(relations) != 1:
            raise invalid("match takes one entityPattern and one relationPattern")
        (entity,), (relation,) = entities, relations
        if entity.get("filters"):
            raise invalid("The sandbox does not evaluate QueryGraph entity filters")
        hops = relation.get("maxPathLength") or 1
        if not 1 <= hops <= 5:
            raise invalid("maxPathLength must be between 1 and 5")
        views = lineage.reachable(
            entity["identifier"], relation["relationDirection"] == "IN", hops, domain.assets
        )
        page, next_token = self._service.page(views, params, default_size=50)
        form_names = set((params.get("additionalAttributes") or {}).get("formNames") or ())
        items = [{"lineageNode": view.item(domain.id, form_names)} for view in page]
        return {"items": items, "nextToken": next_token}


# --- outputs ----------------------------------------------------------------------------------


def _project_output(domain: Domain, project: Project) -> dict[str, Any]:
    return {
        "domainId": domain.id,
        "id": project.id,
        "name": project.name,
        "description": project.description,
        "projectStatus": "ACTIVE",
        "createdBy": project.created_by,
        "createdAt": project.created_at,
        "lastUpdatedAt": project.created_at,
        "glossaryTerms": list(project.glossary_terms) or None,
        "domainUnitId": domain.authorization.project_units[project.id],
        "projectCategory": project.category,
    }


def _project_summary(domain: Domain, project: Project) -> dict[str, Any]:
    """A project as ListProjects lists it: GetProject's answer, its update time renamed."""
    output = _project_output(domain, project)
    summary = {name: output[name] for name in _PROJECT_SUMMARY_MEMBERS}
    return {**summary, "updatedAt": output["lastUpdatedAt"]}


#: What ListProjects' ProjectSummary shares with GetProject's answer.
_PROJECT_SUMMARY_MEMBERS = (
    "domainId", "id", "name", "description", "projectStatus", "createdBy", "createdAt",
    "domainUnitId", "projectCategory",
)  # fmt: skip


def _type_origin(domain: Domain, type_revision: TypeRevision) -> dict[str, Any]:
    return {
        "domainId": domain.id,
        "name": type_revision.name,
        "revision": type_revision.revision,
        "owningProjectId": type_revision.owning_project_id,
        "originDomainId": domain.id,
        "originProjectId": type_revision.owning_project_id,
    }


def _asset_type_output(domain: Domain, asset_type: AssetTypeRevision) -> dict[str, Any]:
    return {
        **_type_origin(domain, asset_type),
        "description": asset_type.description,
        "formsOutput": {name: entry.output() for name, entry in asset_type.forms.items()},
        "createdAt": asset_type.created_at,
        "createdBy": asset_type.created_by,
        "updatedAt": asset_type.created_at,
        "updatedBy": asset_type.created_by,
    }


def _asset_output(domain: Domain, asset: Asset, revision: AssetRevision) -> dict[str, Any]:
    return {
        "id": asset.id,
        "name": revision.name,
        "typeIdentifier": asset.type_name,
        "typeRevision": revision.type_revision,
        "externalIdentifier": asset.external_identifier,
        "revision": revision.revision,
        **_asset_revision_details(asset, revision),
        "domainId": domain.id,
        "formsOutput": [form.output() for form in revision.forms],
        "readOnlyFormsOutput": [],
    }


def _asset_item(domain: Domain, asset: Asset, with_forms: bool) -> dict[str, Any]:
    """An asset as Search lists it: at its latest revision."""
    revision = asset.latest
    item = {
        "domainId": domain.id,
        "identifier": asset.id,
        "name": revision.name,
        "typeIdentifier": asset.type_name,
        "typeRevision": revision.type_revision,
        "externalIdentifier": asset.external_identifier,
        **_asset_revision_details(asset, revision),
    }
    if with_forms:
        item["additionalAttributes"] = {"formsOutput": [f.output() for f in revision.forms]}
    return item


def _asset_revision_details(asset: Asset, revision: AssetRevision) -> dict[str, Any]:
    """What GetAsset and Search both say of an asset at ``revision``."""
    first = asset.revisions[0]
    return {
        "description": revision.description,
        "createdAt": revision.created_at,
        "createdBy": revision.created_by,
        "firstRevisionCreatedAt": first.created_at,
        "firstRevisionCreatedBy": first.created_by,
        "glossaryTerms": list(revision.glossary_terms) or None,
        "owningProjectId": asset.owning_project_id,
    }
