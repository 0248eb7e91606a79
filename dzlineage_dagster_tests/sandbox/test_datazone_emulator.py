"""The DataZone emulator, driven by real boto3 clients over HTTP through the sandbox endpoint."""

from __future__ import annotations

import json
import re
import string
import urllib.error
import urllib.request
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
from botocore.exceptions import ClientError
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

ROLE = "arn:aws:iam::123456789012:role/DataZoneDomainExecution"
#: OpenLineage's Glue namespace; the project posts its tables under ``<it>:table``.
GLUE_NAMESPACE = "arn:aws:glue:us-east-1:123456789012"
TOPIC_FORM_MODEL = """
$version: "2"
namespace sandbox.tests

/// A Kafka topic, as the catalog shows it.
@documentation("A Kafka topic")
structure TopicForm {
    @required
    @amazon.datazone#searchable(modes: ["TECHNICAL"])
    topic: String,
    partitions: Integer
    fields: Fields
}

list Fields {
    member: Field
}

structure Field {
    @required
    name: String
    type: String
}
"""
ID = re.compile(r"[a-z0-9]{14}")
HTTP_SETTINGS = settings(
    max_examples=40,
    suppress_health_check=[
        *settings.default.suppress_health_check,
        HealthCheck.function_scoped_fixture,
    ],
)


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


@pytest.fixture(scope="module")
def dz(sandbox):
    return sandbox.client("datazone")


@pytest.fixture(scope="module")
def unchecked_dz(sandbox):
    """A client that sends what it is given, so the emulator's own validation is what answers."""
    return sandbox.client("datazone", parameter_validation=False)


@dataclass(frozen=True)
class Catalog:
    domain_id: str
    project_id: str
    asset_type: str

    def topic_forms(self, topic: str, source_identifier: str | None = None) -> list[dict]:
        forms = [{"formName": "TopicForm", "content": json.dumps({"topic": topic})}]
        if source_identifier:
            common = json.dumps({"sourceIdentifier": source_identifier})
            forms.append({"formName": "AssetCommonDetailsForm", "content": common})
        return forms

    def create_asset(self, dz, name: str, **params: Any) -> dict[str, Any]:
        """CreateAsset of a KafkaTopic for topic ``name``; ``params`` override any member."""
        call = {
            "domainIdentifier": self.domain_id,
            "owningProjectIdentifier": self.project_id,
            "name": name,
            "typeIdentifier": self.asset_type,
            "formsInput": self.topic_forms(name),
            **params,
        }
        return dz.create_asset(**call)


def glue_table(**content: str) -> dict[str, Any]:
    """CreateAsset members for a managed Glue table asset with this GlueTableForm content."""
    return {
        "typeIdentifier": "amazon.datazone.GlueTableAssetType",
        "formsInput": [{"formName": "GlueTableForm", "content": json.dumps(content)}],
    }


@pytest.fixture
def catalog(dz) -> Catalog:
    """A fresh domain with a project, a TopicForm form type and a KafkaTopic asset type."""
    domain = dz.create_domain(name=unique("domain"), domainExecutionRole=ROLE)
    project = dz.create_project(domainIdentifier=domain["id"], name="owners")
    dz.create_form_type(
        domainIdentifier=domain["id"],
        owningProjectIdentifier=project["id"],
        name="TopicForm",
        model={"smithy": TOPIC_FORM_MODEL},
    )
    dz.create_asset_type(
        domainIdentifier=domain["id"],
        owningProjectIdentifier=project["id"],
        name="KafkaTopic",
        formsInput={
            "TopicForm": {"typeIdentifier": "TopicForm", "typeRevision": "1", "required": True}
        },
    )
    return Catalog(domain["id"], project["id"], "KafkaTopic")


# --- domains and projects ---------------------------------------------------------------------


def test_a_domain_is_created_with_aws_shaped_id_portal_and_arn(dz):
    name = unique("domain")
    created = dz.create_domain(name=name, domainExecutionRole=ROLE, description="d")

    assert created["ResponseMetadata"]["HTTPStatusCode"] == 201
    domain_id = created["id"]
    assert re.fullmatch(r"dzd_[a-z0-9]{14}", domain_id)
    assert created["portalUrl"] == f"https://{domain_id}.us-east-1.portal.sandbox.invalid"
    assert created["arn"] == f"arn:aws:datazone:us-east-1:123456789012:domain/{domain_id}"
    fetched = dz.get_domain(identifier=domain_id)
    assert (fetched["name"], fetched["status"], fetched["domainExecutionRole"]) == (
        name,
        "AVAILABLE",
        ROLE,
    )
    assert fetched["portalUrl"] == created["portalUrl"]
    assert isinstance(fetched["createdAt"], datetime)


def test_unknown_domains_are_not_found_and_names_are_unique(dz):
    with pytest.raises(ClientError, match=r"\(ResourceNotFoundException\)"):
        dz.get_domain(identifier="dzd_doesnotexist00")
    name = unique("domain")
    dz.create_domain(name=name, domainExecutionRole=ROLE)
    with pytest.raises(ClientError, match=r"\(ConflictException\)"):
        dz.create_domain(name=name, domainExecutionRole=ROLE)


def test_projects_are_created_fetched_and_unique_by_name(dz, catalog):
    created = dz.create_project(domainIdentifier=catalog.domain_id, name="analytics")
    assert created["ResponseMetadata"]["HTTPStatusCode"] == 201
    assert ID.fullmatch(created["id"])
    fetched = dz.get_project(domainIdentifier=catalog.domain_id, identifier=created["id"])
    assert (fetched["name"], fetched["domainId"]) == ("analytics", catalog.domain_id)
    with pytest.raises(ClientError, match=r"\(ConflictException\)"):
        dz.create_project(domainIdentifier=catalog.domain_id, name="analytics")
    with pytest.raises(ClientError, match=r"\(ResourceNotFoundException\)"):
        dz.get_project(domainIdentifier=catalog.domain_id, identifier="noproject")


PROJECT_NAME_CHARACTERS = string.ascii_letters + string.digits + "_ -"


def around(limit: int, alphabet: str | None = None) -> st.SearchStrategy[str]:
    """Texts near both length limits (0-1 and ``limit``), where validation mistakes show."""
    text = st.text if alphabet is None else lambda **size: st.text(alphabet, **size)
    return st.one_of(text(max_size=3), text(min_size=limit - 2, max_size=limit + 2))


@HTTP_SETTINGS
@given(name=st.one_of(st.text(max_size=70), around(64, PROJECT_NAME_CHARACTERS)))
def test_project_names_are_validated_as_the_model_says(unchecked_dz, catalog, name):
    valid = 1 <= len(name) <= 64 and set(name) <= set(PROJECT_NAME_CHARACTERS)
    try:
        unchecked_dz.create_project(domainIdentifier=catalog.domain_id, name=name)
        accepted = True
    except ClientError as error:
        code = error.response["Error"]["Code"]
        assert code in ("ValidationException", "ConflictException")
        accepted = code == "ConflictException"
        if not accepted:
            assert (
                "Value at 'name' failed to satisfy constraint" in error.response["Error"]["Message"]
            )
    assert accepted == valid


# --- validation against the model ---------------------------------------------------------


def test_a_missing_required_member_is_named(unchecked_dz, catalog):
    with pytest.raises(ClientError) as raised:
        unchecked_dz.create_asset(
            domainIdentifier=catalog.domain_id, owningProjectIdentifier=catalog.project_id
        )
    error = raised.value.response
    assert error["ResponseMetadata"]["HTTPStatusCode"] == 400
    assert error["Error"]["Code"] == "ValidationException"
    assert error["Error"]["Message"].startswith("2 validation errors detected: ")
    assert (
        "Value null at 'name' failed to satisfy constraint: Member must not be null"
        in (error["Error"]["Message"])
    )
    assert "Value null at 'typeIdentifier'" in error["Error"]["Message"]


@pytest.mark.parametrize(
    ("params", "message"),
    [
        (
            {"domainIdentifier": "not-a-domain"},
            "Value at 'domainIdentifier' failed to satisfy constraint: Member must satisfy "
            "regular expression pattern: dzd[-_][a-zA-Z0-9_-]{1,36}",
        ),
        (
            {"formsInput": [{"formName": "TopicForm", "content": "x" * 300_001}]},
            "Value at 'formsInput.1.member.content' failed to satisfy constraint: "
            "Member must have length less than or equal to 300000",
        ),
        (
            {"formsInput": [{"content": "{}"}]},
            "Value null at 'formsInput.1.member.formName'",
        ),
        (
            {"formsInput": [{"formName": f"F{i}"} for i in range(11)]},
            "Value at 'formsInput' failed to satisfy constraint: "
            "Member must have length less than or equal to 10",
        ),
        (
            {"externalIdentifier": "e" * 601},
            "Value at 'externalIdentifier' failed to satisfy constraint",
        ),
        ({"clientToken": "has space"}, "Value at 'clientToken' failed to satisfy constraint"),
    ],
)
def test_constraint_violations_are_named(unchecked_dz, catalog, params, message):
    with pytest.raises(ClientError, match=r"\(ValidationException\)") as raised:
        catalog.create_asset(unchecked_dz, "topic", **params)
    assert message in raised.value.response["Error"]["Message"]


def test_enums_ranges_and_unions_are_validated(unchecked_dz, catalog):
    with pytest.raises(ClientError, match="Member must satisfy enum value set: \\[ASSET, "):
        unchecked_dz.search(domainIdentifier=catalog.domain_id, searchScope="TABLES")
    with pytest.raises(ClientError, match="Member must have value less than or equal to 50"):
        unchecked_dz.list_lineage_events(domainIdentifier=catalog.domain_id, maxResults=51)
    two_members = {"filter": {"attribute": "name", "value": "a"}, "and": []}
    with pytest.raises(ClientError, match="exactly one member set"):
        unchecked_dz.search(
            domainIdentifier=catalog.domain_id, searchScope="ASSET", filters=two_members
        )


def test_a_value_of_the_wrong_type_is_a_serialization_error(unchecked_dz, catalog):
    with pytest.raises(ClientError, match=r"\(SerializationException\)"):
        unchecked_dz.create_project(domainIdentifier=catalog.domain_id, name=42)


def test_operations_the_sandbox_does_not_emulate_say_so(dz, catalog):
    with pytest.raises(ClientError, match=r"\(NotImplemented\).*ListEnvironments") as raised:
        dz.list_environments(domainIdentifier=catalog.domain_id, projectIdentifier="p")
    assert raised.value.response["ResponseMetadata"]["HTTPStatusCode"] == 501


@pytest.mark.parametrize(
    ("method", "path", "body", "status", "code"),
    [
        ("GET", "/v2/no-such-route", None, 404, "UnknownOperationException"),
        ("POST", "/v2/domains", b"{not json", 400, "SerializationException"),
    ],
)
def test_requests_no_client_would_send_are_answered_as_aws_does(
    sandbox, method, path, body, status, code
):
    # The emulator reads no signature, only the service in its credential scope.
    scope = "Credential=testing/20240101/us-east-1/datazone/aws4_request"
    request = urllib.request.Request(
        f"{sandbox.endpoint_url}{path}",
        data=body,
        method=method,
        headers={
            "Authorization": f"AWS4-HMAC-SHA256 {scope}, SignedHeaders=host, Signature=0",
            "Content-Type": "application/json",
        },
    )
    with pytest.raises(urllib.error.HTTPError) as raised:
        urllib.request.urlopen(request, timeout=10)
    assert (raised.value.code, raised.value.headers["x-amzn-ErrorType"]) == (status, code)


# --- form and asset types ---------------------------------------------------------------------


def test_form_types_are_immutable_revisions(dz, catalog):
    def create(model: str) -> dict[str, Any]:
        return dz.create_form_type(
            domainIdentifier=catalog.domain_id,
            owningProjectIdentifier=catalog.project_id,
            name="TopicForm",
            model={"smithy": model},
        )

    assert create(TOPIC_FORM_MODEL)["revision"] == "1"
    changed = TOPIC_FORM_MODEL.replace("partitions: Integer", "partitions: Long")
    assert create(changed)["revision"] == "2"
    assert create(changed)["revision"] == "2"

    latest = dz.get_form_type(domainIdentifier=catalog.domain_id, formTypeIdentifier="TopicForm")
    first = dz.get_form_type(
        domainIdentifier=catalog.domain_id, formTypeIdentifier="TopicForm", revision="1"
    )
    assert (latest["revision"], latest["model"]["smithy"]) == ("2", changed)
    assert (first["revision"], first["model"]["smithy"]) == ("1", TOPIC_FORM_MODEL)
    assert latest["owningProjectId"] == catalog.project_id
    with pytest.raises(ClientError, match=r"\(ResourceNotFoundException\)"):
        dz.get_form_type(
            domainIdentifier=catalog.domain_id, formTypeIdentifier="TopicForm", revision="3"
        )


@pytest.mark.parametrize(
    ("model", "problem"),
    [
        ("structure BrokenForm {", "unexpected end of model"),
        ("structure BrokenForm { topic: NoSuchShape }", "unknown shape NoSuchShape"),
        ("structure A { a: String }\nstructure B { b: String }", "must define the structure"),
        ("structure BrokenForm { : String }", "expected a member name"),
    ],
)
def test_form_types_with_unreadable_models_are_rejected(dz, catalog, model, problem):
    with pytest.raises(ClientError, match=rf"\(ValidationException\).*{problem}"):
        dz.create_form_type(
            domainIdentifier=catalog.domain_id,
            owningProjectIdentifier=catalog.project_id,
            name="BrokenForm",
            model={"smithy": model},
        )


def test_every_domain_has_the_managed_types(dz, catalog):
    for form_type in (
        "amazon.datazone.AssetCommonDetailsFormType",
        "amazon.datazone.GlueTableFormType",
        "amazon.datazone.RelationalTableFormType",
    ):
        found = dz.get_form_type(domainIdentifier=catalog.domain_id, formTypeIdentifier=form_type)
        assert found["name"] == form_type
    common = dz.get_form_type(
        domainIdentifier=catalog.domain_id,
        formTypeIdentifier="amazon.datazone.AssetCommonDetailsFormType",
    )
    assert "sourceIdentifier: String" in common["model"]["smithy"]
    glue = dz.get_asset_type(
        domainIdentifier=catalog.domain_id, identifier="amazon.datazone.GlueTableAssetType"
    )
    assert glue["formsOutput"]["GlueTableForm"] == {
        "typeName": "amazon.datazone.GlueTableFormType",
        "typeRevision": "13",
        "required": True,
    }


def test_asset_types_are_immutable_and_carry_the_common_details_form(dz, catalog):
    def create(required: bool) -> dict[str, Any]:
        entry = {"typeIdentifier": "TopicForm", "typeRevision": "1", "required": required}
        return dz.create_asset_type(
            domainIdentifier=catalog.domain_id,
            owningProjectIdentifier=catalog.project_id,
            name="KafkaTopic",
            formsInput={"TopicForm": entry},
        )

    same = create(required=True)
    assert same["ResponseMetadata"]["HTTPStatusCode"] == 201
    assert same["revision"] == "1"
    assert create(required=False)["revision"] == "2"
    first = dz.get_asset_type(
        domainIdentifier=catalog.domain_id, identifier="KafkaTopic", revision="1"
    )
    assert first["formsOutput"] == {
        "AssetCommonDetailsForm": {
            "typeName": "amazon.datazone.AssetCommonDetailsFormType",
            "typeRevision": "6",
            "required": False,
        },
        "TopicForm": {"typeName": "TopicForm", "typeRevision": "1", "required": True},
    }
    latest = dz.get_asset_type(domainIdentifier=catalog.domain_id, identifier="KafkaTopic")
    assert latest["revision"] == "2"


def test_an_asset_type_needs_existing_form_type_revisions(dz, catalog):
    with pytest.raises(ClientError) as raised:
        dz.create_asset_type(
            domainIdentifier=catalog.domain_id,
            owningProjectIdentifier=catalog.project_id,
            name="Broken",
            formsInput={"TopicForm": {"typeIdentifier": "TopicForm", "typeRevision": "9"}},
        )
    assert raised.value.response["Error"] == {
        "Code": "ValidationException",
        "Message": f"Object type Form#{catalog.domain_id}#TopicForm with version 9 not found",
    }


# --- assets -----------------------------------------------------------------------------------


def test_an_asset_is_created_at_revision_one_with_resolved_forms(dz, catalog):
    created = catalog.create_asset(dz, "orders", externalIdentifier=unique("ext"))

    assert created["ResponseMetadata"]["HTTPStatusCode"] == 201
    assert ID.fullmatch(created["id"])
    assert (created["revision"], created["typeIdentifier"], created["typeRevision"]) == (
        "1",
        "KafkaTopic",
        "1",
    )
    assert created["formsOutput"] == [
        {
            "formName": "TopicForm",
            "typeName": "TopicForm",
            "typeRevision": "1",
            "content": json.dumps({"topic": "orders"}),
        }
    ]
    fetched = dz.get_asset(domainIdentifier=catalog.domain_id, identifier=created["id"])
    assert fetched["formsOutput"] == created["formsOutput"]
    assert fetched["externalIdentifier"] == created["externalIdentifier"]


def test_the_asset_type_must_exist_at_the_revision(dz, catalog):
    for type_params in ({"typeIdentifier": "NoSuchType"}, {"typeRevision": "7"}):
        with pytest.raises(ClientError, match=r"\(ResourceNotFoundException\)"):
            catalog.create_asset(dz, "orders", **type_params)


def test_required_forms_and_fields_are_enforced(dz, catalog):
    with pytest.raises(ClientError, match=r"\(ValidationException\).*requires the forms"):
        catalog.create_asset(dz, "orders", formsInput=[])

    def content_error(content: dict[str, Any]) -> str:
        forms = [{"formName": "TopicForm", "content": json.dumps(content)}]
        with pytest.raises(ClientError, match=r"\(ValidationException\)") as raised:
            catalog.create_asset(dz, "orders", formsInput=forms)
        return raised.value.response["Error"]["Message"]

    assert content_error({}) == "$.TopicForm.topic: is missing but it is required"
    assert content_error({"topic": "t", "partitions": "3"}) == (
        "$.TopicForm.partitions: string found, integer expected"
    )
    assert content_error({"topic": "t", "fields": [{"type": "int"}]}) == (
        "$.TopicForm.fields[0].name: is missing but it is required"
    )
    assert content_error({"topic": "t", "owner": "me"}) == (
        "$.TopicForm.owner: is not defined in the schema and the schema does not allow "
        "additional properties"
    )


def test_forms_must_use_the_revision_the_asset_type_pins(dz, catalog):
    dz.create_form_type(
        domainIdentifier=catalog.domain_id,
        owningProjectIdentifier=catalog.project_id,
        name="TopicForm",
        model={"smithy": TOPIC_FORM_MODEL + "\nstructure Unused { a: String }"},
    )
    forms = [{"formName": "TopicForm", "typeRevision": "2", "content": '{"topic": "t"}'}]
    with pytest.raises(ClientError) as raised:
        catalog.create_asset(dz, "orders", formsInput=forms)
    assert raised.value.response["Error"]["Message"] == (
        f"Form TopicForm expected form {catalog.domain_id}#TopicForm@1 "
        f"but was provided {catalog.domain_id}#TopicForm@2"
    )


def test_managed_forms_check_their_content_too(dz, catalog):
    with pytest.raises(ClientError, match=r"\$\.GlueTableForm\.tableName: is missing"):
        catalog.create_asset(dz, "orders", **glue_table(databaseName="lake"))


@HTTP_SETTINGS
@given(name=around(256))
def test_asset_names_may_be_any_text_of_1_to_256_characters(unchecked_dz, catalog, name):
    try:
        catalog.create_asset(unchecked_dz, name)
        accepted = True
    except ClientError as error:
        assert "Value at 'name' failed to satisfy constraint" in error.response["Error"]["Message"]
        accepted = False
    assert accepted == (1 <= len(name) <= 256)


def test_external_identifiers_are_unique_in_the_domain(dz, catalog):
    external = unique("ext")
    first = catalog.create_asset(dz, "orders", externalIdentifier=external)
    with pytest.raises(ClientError, match=r"\(ConflictException\)") as raised:
        catalog.create_asset(dz, "orders-again", externalIdentifier=external)
    assert raised.value.response["ResponseMetadata"]["HTTPStatusCode"] == 409

    dz.delete_asset(domainIdentifier=catalog.domain_id, identifier=first["id"])
    catalog.create_asset(dz, "orders-again", externalIdentifier=external)


def test_a_repeated_client_token_answers_the_first_result_without_a_second_write(dz, catalog):
    token = unique("token")
    external = unique("ext")
    first = catalog.create_asset(dz, "orders", externalIdentifier=external, clientToken=token)
    again = catalog.create_asset(dz, "orders", externalIdentifier=external, clientToken=token)

    assert again["id"] == first["id"]
    found = dz.search(domainIdentifier=catalog.domain_id, searchScope="ASSET", searchText="orders")
    assert [item["assetItem"]["identifier"] for item in found["items"]] == [first["id"]]
    other = catalog.create_asset(dz, "orders", clientToken=unique("token"))
    assert other["id"] != first["id"]


def test_asset_revisions_count_up_and_list_newest_first(dz, catalog):
    asset = catalog.create_asset(dz, "orders", externalIdentifier=unique("ext"))
    revised = dz.create_asset_revision(
        domainIdentifier=catalog.domain_id,
        identifier=asset["id"],
        name="orders-v2",
        formsInput=catalog.topic_forms("orders", source_identifier="kafka://c/orders"),
    )
    assert revised["ResponseMetadata"]["HTTPStatusCode"] == 200
    assert (revised["id"], revised["revision"], revised["name"]) == (asset["id"], "2", "orders-v2")
    assert revised["externalIdentifier"] == asset["externalIdentifier"]
    assert {f["formName"] for f in revised["formsOutput"]} == {
        "TopicForm",
        "AssetCommonDetailsForm",
    }

    first_page = dz.list_asset_revisions(
        domainIdentifier=catalog.domain_id, identifier=asset["id"], maxResults=1
    )
    second_page = dz.list_asset_revisions(
        domainIdentifier=catalog.domain_id,
        identifier=asset["id"],
        maxResults=1,
        nextToken=first_page["nextToken"],
    )
    assert [r["revision"] for r in first_page["items"] + second_page["items"]] == ["2", "1"]
    assert "nextToken" not in second_page
    old = dz.get_asset(domainIdentifier=catalog.domain_id, identifier=asset["id"], revision="1")
    assert old["name"] == "orders"
    assert (
        dz.get_asset(domainIdentifier=catalog.domain_id, identifier=asset["id"])["revision"] == "2"
    )


def test_revisions_of_unknown_assets_are_not_found(dz, catalog):
    with pytest.raises(ClientError, match="The given Asset doesn't exist"):
        dz.create_asset_revision(
            domainIdentifier=catalog.domain_id, identifier="nosuchasset000", name="x"
        )
    with pytest.raises(ClientError, match=r"\(ValidationException\).*nextToken"):
        asset = catalog.create_asset(dz, "orders")
        dz.list_asset_revisions(
            domainIdentifier=catalog.domain_id, identifier=asset["id"], nextToken="garbage"
        )


def test_a_deleted_asset_is_gone(dz, catalog):
    asset = catalog.create_asset(dz, "orders")
    deleted = dz.delete_asset(domainIdentifier=catalog.domain_id, identifier=asset["id"])
    assert deleted["ResponseMetadata"]["HTTPStatusCode"] == 204
    for call in (dz.get_asset, dz.delete_asset):
        with pytest.raises(ClientError, match=r"\(ResourceNotFoundException\)"):
            call(domainIdentifier=catalog.domain_id, identifier=asset["id"])


# --- search -----------------------------------------------------------------------------------


def _search_ids(dz, catalog: Catalog, **params: Any) -> list[str]:
    found = dz.search(domainIdentifier=catalog.domain_id, searchScope="ASSET", **params)
    return [item["assetItem"]["identifier"] for item in found["items"]]


def test_search_by_text_by_type_and_by_form_field(dz, catalog):
    orders = catalog.create_asset(dz, "cdc.public.orders")
    customers = catalog.create_asset(dz, "cdc.public.customers")
    table = catalog.create_asset(
        dz, "orders_table", **glue_table(databaseName="lake", tableName="orders")
    )

    assert _search_ids(dz, catalog, searchText="ORDERS") == [orders["id"], table["id"]]
    by_type = {"filter": {"attribute": "typeName", "value": "KafkaTopic"}}
    assert _search_ids(dz, catalog, filters=by_type) == [orders["id"], customers["id"]]
    glue = {"filter": {"attribute": "typeName", "value": "GlueTableAssetType"}}
    assert _search_ids(dz, catalog, filters=glue) == [table["id"]]
    either = {"or": [by_type, glue]}
    both = {
        "and": [
            by_type,
            {"filter": {"attribute": "TopicForm.topic", "value": "cdc.public.customers"}},
        ]
    }
    assert len(_search_ids(dz, catalog, filters=either)) == 3
    assert _search_ids(dz, catalog, filters=both) == [customers["id"]]
    text_in_name = [{"attribute": "name"}]
    assert _search_ids(dz, catalog, searchText="lake", searchIn=text_in_name) == []
    assert _search_ids(dz, catalog, searchText="lake") == [table["id"]]


def test_search_pages_and_counts(dz, catalog):
    ids = [catalog.create_asset(dz, f"topic-{i}")["id"] for i in range(5)]
    pages, token = [], None
    while True:
        params = {"nextToken": token} if token else {}
        page = dz.search(
            domainIdentifier=catalog.domain_id, searchScope="ASSET", maxResults=2, **params
        )
        assert page["totalMatchCount"] == 5
        pages.append([item["assetItem"]["identifier"] for item in page["items"]])
        token = page.get("nextToken")
        if token is None:
            break
    assert pages == [ids[0:2], ids[2:4], ids[4:5]]
    sorted_desc = dz.search(
        domainIdentifier=catalog.domain_id,
        searchScope="ASSET",
        sort={"attribute": "name", "order": "DESCENDING"},
        additionalAttributes=["FORMS"],
    )
    first = sorted_desc["items"][0]["assetItem"]
    assert first["name"] == "topic-4"
    assert first["additionalAttributes"]["formsOutput"][0]["formName"] == "TopicForm"


# --- lineage ----------------------------------------------------------------------------------


def run_event(
    run_id: str,
    job: str,
    inputs: list[tuple[str, str]],
    outputs: list[tuple[str, str]],
    event_type: str = "COMPLETE",
    event_time: datetime | None = None,
) -> dict[str, Any]:
    """An OpenLineage RunEvent as the spec shapes it."""
    when = event_time or datetime.now(timezone.utc)
    return {
        "eventType": event_type,
        "eventTime": when.isoformat(),
        "producer": "https://github.com/example/dzlineage-tests",
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
        "run": {"runId": run_id},
        "job": {"namespace": "cdc", "name": job},
        "inputs": [{"namespace": ns, "name": name} for ns, name in inputs],
        "outputs": [{"namespace": ns, "name": name} for ns, name in outputs],
    }


def post(dz, catalog: Catalog, event: dict[str, Any], **params: Any) -> dict[str, Any]:
    body = json.dumps(event).encode()
    return dz.post_lineage_event(domainIdentifier=catalog.domain_id, event=body, **params)


def node(dz, catalog: Catalog, identifier: str, **params: Any) -> dict[str, Any]:
    return dz.get_lineage_node(domainIdentifier=catalog.domain_id, identifier=identifier, **params)


def neighbours(found: dict[str, Any], direction: str) -> list[str]:
    return [reference["id"] for reference in found[f"{direction}Nodes"]]


TOPIC = ("kafka://broker-1:9092", "cdc.public.orders")
GLUE_TABLE = (f"{GLUE_NAMESPACE}:table", "lake/orders")
GLUE_TABLE_ARN = f"{GLUE_NAMESPACE}:table/lake/orders"


@pytest.mark.parametrize(
    ("naming", "lands_on"),
    [
        ("documented", f"{GLUE_NAMESPACE}/table/lake/orders"),
        ("colon-join", GLUE_TABLE_ARN),
    ],
)
def test_openlineages_glue_naming_lands_where_the_reading_says(
    sandbox, dz, catalog, naming, lands_on
):
    """DataZone's guide read literally files a dataset it does not name otherwise under
    ``<namespace>/<name>``; the colon-join reading makes OpenLineage's Glue naming the ARN.
    The project's naming lands on the ARN under both."""
    sandbox.control.set_ambiguities(glue_node_naming=naming)
    try:
        run_id = unique("run")
        post(
            dz,
            catalog,
            run_event(run_id, "ol-glue", [TOPIC], [(GLUE_NAMESPACE, "table/lake/orders")]),
        )
        post(dz, catalog, run_event(unique("run"), "dz-glue", [TOPIC], [GLUE_TABLE]))
        found = node(dz, catalog, lands_on)
        assert found["sourceIdentifier"] == lands_on
        assert node(dz, catalog, GLUE_TABLE_ARN)["sourceIdentifier"] == GLUE_TABLE_ARN
        if naming == "documented":
            assert found["id"] != node(dz, catalog, GLUE_TABLE_ARN)["id"]
    finally:
        sandbox.control.set_ambiguities(glue_node_naming="documented")


def test_a_run_event_builds_job_run_and_dataset_nodes_with_edges(dz, catalog):
    posted = post(dz, catalog, run_event("run-1", "sink", [TOPIC], [GLUE_TABLE]))
    assert ID.fullmatch(posted["id"])
    assert posted["domainId"] == catalog.domain_id

    topic = node(dz, catalog, "kafka://broker-1:9092/cdc.public.orders")
    table = node(dz, catalog, GLUE_TABLE_ARN)
    run = node(dz, catalog, "cdc.sink/run-1")
    job = node(dz, catalog, "cdc.sink")
    assert topic["typeName"] == table["typeName"] == "amazon.datazone.DatasetLineageNodeType"
    assert run["typeName"] == "amazon.datazone.JobRunLineageNodeType"
    assert job["typeName"] == "amazon.datazone.JobLineageNodeType"
    assert table["sourceIdentifier"] == GLUE_TABLE_ARN
    assert ID.fullmatch(run["id"])
    assert (neighbours(topic, "upstream"), neighbours(topic, "downstream")) == ([], [run["id"]])
    assert neighbours(run, "upstream") == [topic["id"]]
    assert neighbours(run, "downstream") == [table["id"]]
    assert neighbours(table, "upstream") == [run["id"]]
    assert node(dz, catalog, table["id"])["sourceIdentifier"] == GLUE_TABLE_ARN


@pytest.mark.parametrize(
    ("event", "problem"),
    [
        (b"{not json", "not valid JSON"),
        (b"[]", "must be a JSON object"),
        (
            json.dumps(
                {
                    "eventTime": "2024-01-01T00:00:00Z",
                    "producer": "p",
                    "dataset": {"namespace": "n", "name": "d"},
                }
            ).encode(),
            "Only OpenLineage RunEvents",
        ),
        (
            json.dumps(
                {
                    "eventTime": "2024-01-01T00:00:00Z",
                    "producer": "p",
                    "job": {"namespace": "n", "name": "j"},
                }
            ).encode(),
            "Only OpenLineage RunEvents",
        ),
        (json.dumps(run_event("r", "j", [], []) | {"eventType": "DONE"}).encode(), "eventType"),
        (
            json.dumps(run_event("r", "j", [], []) | {"eventTime": "yesterday"}).encode(),
            "eventTime",
        ),
        (json.dumps(run_event("r", "j", [("ns", "")], [])).encode(), "namespace and a name"),
    ],
)
def test_only_valid_run_events_are_accepted(dz, catalog, event, problem):
    with pytest.raises(ClientError, match=rf"\(ValidationException\).*{problem}"):
        dz.post_lineage_event(domainIdentifier=catalog.domain_id, event=event)


def test_an_event_over_300000_bytes_is_rejected(dz, catalog):
    event = run_event("r", "j", [], [])
    event["run"]["facets"] = {"padding": {"text": "x" * 300_000}}
    with pytest.raises(ClientError, match="Member must have length less than or equal to 300000"):
        post(dz, catalog, event)


def test_a_repeated_client_token_posts_the_event_once(dz, catalog):
    event = run_event("run-1", "sink", [TOPIC], [GLUE_TABLE])
    token = unique("token")
    first = post(dz, catalog, event, clientToken=token)
    again = post(dz, catalog, event, clientToken=token)

    assert again["id"] == first["id"]
    listed = dz.list_lineage_events(domainIdentifier=catalog.domain_id)["items"]
    assert [item["id"] for item in listed] == [first["id"]]


def test_a_dataset_node_links_to_the_asset_with_its_source_identifier(dz, catalog):
    source = "kafka://broker-1:9092/cdc.public.orders"
    post(dz, catalog, run_event("run-1", "sink", [TOPIC], [GLUE_TABLE]))
    forms = catalog.topic_forms("cdc.public.orders", source_identifier=source)
    asset = catalog.create_asset(dz, "orders", formsInput=forms)
    unrelated = catalog.create_asset(dz, "customers")

    topic = node(dz, catalog, source)
    asset_node = node(dz, catalog, f"amazon.datazone.asset/{asset['id']}")
    assert neighbours(asset_node, "upstream") == [topic["id"]]
    assert asset_node["id"] in neighbours(topic, "downstream")
    assert asset_node["typeName"] == catalog.asset_type
    assert asset_node["formsOutput"] == asset["formsOutput"]
    assert node(dz, catalog, asset_node["id"])["sourceIdentifier"] == (
        f"amazon.datazone.asset/{asset['id']}"
    )
    lonely = node(dz, catalog, f"amazon.datazone.asset/{unrelated['id']}")
    assert neighbours(lonely, "upstream") == []


def test_repeated_events_update_one_node_and_add_history(dz, catalog):
    started = datetime(2024, 5, 1, 12, 0, tzinfo=timezone.utc)
    completed = started + timedelta(minutes=5)
    post(dz, catalog, run_event("run-1", "sink", [TOPIC], [GLUE_TABLE], "START", started))
    post(dz, catalog, run_event("run-1", "sink", [TOPIC], [GLUE_TABLE], "COMPLETE", completed))

    table = node(dz, catalog, GLUE_TABLE_ARN)
    assert table["eventTimestamp"] == completed
    history = dz.list_lineage_node_history(
        domainIdentifier=catalog.domain_id, identifier=GLUE_TABLE_ARN, sortOrder="ASCENDING"
    )["nodes"]
    assert [h["eventTimestamp"] for h in history] == [started, completed]
    assert {h["id"] for h in history} == {table["id"]}

    newest_first = dz.list_lineage_node_history(
        domainIdentifier=catalog.domain_id, identifier=table["id"], maxResults=1
    )
    assert [h["eventTimestamp"] for h in newest_first["nodes"]] == [completed]
    assert newest_first["nextToken"]
    later = dz.list_lineage_node_history(
        domainIdentifier=catalog.domain_id,
        identifier=table["id"],
        eventTimestampGTE=started + timedelta(minutes=1),
    )
    assert [h["eventTimestamp"] for h in later["nodes"]] == [completed]
    topic_source = "kafka://broker-1:9092/cdc.public.orders"
    for direction, expected in (("UPSTREAM", 0), ("DOWNSTREAM", 2)):
        topic_history = dz.list_lineage_node_history(
            domainIdentifier=catalog.domain_id, identifier=topic_source, direction=direction
        )
        assert len(topic_history["nodes"]) == expected


def test_a_node_can_be_read_as_it_was_at_an_event_time(dz, catalog):
    first_time = datetime(2024, 5, 1, 12, 0, tzinfo=timezone.utc)
    second_time = first_time + timedelta(hours=1)
    post(dz, catalog, run_event("run-1", "sink", [TOPIC], [GLUE_TABLE], event_time=first_time))
    other_table = (f"{GLUE_NAMESPACE}:table", "lake/orders_copy")
    post(dz, catalog, run_event("run-2", "copy", [TOPIC], [other_table], event_time=second_time))

    topic_source = "kafka://broker-1:9092/cdc.public.orders"
    now = node(dz, catalog, topic_source)
    then = node(dz, catalog, topic_source, eventTimestamp=first_time)
    assert len(neighbours(now, "downstream")) == 2
    assert len(neighbours(then, "downstream")) == 1
    assert then["eventTimestamp"] == first_time
    with pytest.raises(ClientError, match=r"\(ResourceNotFoundException\)"):
        node(dz, catalog, topic_source, eventTimestamp=first_time - timedelta(days=1))


def test_lineage_events_are_listed_and_read_back_unchanged(dz, catalog):
    early = datetime(2024, 5, 1, 12, 0, tzinfo=timezone.utc)
    late = early + timedelta(hours=1)
    first_event = run_event("run-1", "sink", [TOPIC], [GLUE_TABLE], event_time=early)
    first = post(dz, catalog, first_event)
    second = post(dz, catalog, run_event("run-2", "sink", [TOPIC], [], event_time=late))

    listed = dz.list_lineage_events(domainIdentifier=catalog.domain_id)["items"]
    assert [item["id"] for item in listed] == [second["id"], first["id"]]
    oldest = listed[1]
    assert (oldest["processingStatus"], oldest["eventTime"]) == ("SUCCESS", early)
    assert oldest["eventSummary"]["openLineageRunEventSummary"] == {
        "eventType": "COMPLETE",
        "runId": "run-1",
        "job": {"namespace": "cdc", "name": "sink"},
        "inputs": [{"namespace": TOPIC[0], "name": TOPIC[1]}],
        "outputs": [{"namespace": GLUE_TABLE[0], "name": GLUE_TABLE[1]}],
    }
    ascending = dz.list_lineage_events(domainIdentifier=catalog.domain_id, sortOrder="ASCENDING")
    assert [item["id"] for item in ascending["items"]] == [first["id"], second["id"]]
    after = dz.list_lineage_events(
        domainIdentifier=catalog.domain_id, timestampAfter=early + timedelta(minutes=1)
    )
    assert [item["id"] for item in after["items"]] == [second["id"]]
    failed = dz.list_lineage_events(domainIdentifier=catalog.domain_id, processingStatus="FAILED")
    assert failed["items"] == []

    fetched = dz.get_lineage_event(domainIdentifier=catalog.domain_id, identifier=first["id"])
    assert fetched["event"].read() == json.dumps(first_event).encode()
    assert (fetched["id"], fetched["domainId"], fetched["processingStatus"]) == (
        first["id"],
        catalog.domain_id,
        "SUCCESS",
    )
    assert fetched["eventTime"] == early


def test_unknown_lineage_nodes_and_events_are_not_found(dz, catalog):
    with pytest.raises(ClientError, match=r"\(ResourceNotFoundException\)"):
        node(dz, catalog, "kafka://nowhere/none")
    with pytest.raises(ClientError, match=r"\(ResourceNotFoundException\)"):
        dz.get_lineage_event(domainIdentifier=catalog.domain_id, identifier="abcdefghijklmn")
    with pytest.raises(ClientError, match=r"\(ResourceNotFoundException\)"):
        post(dz, Catalog("dzd_nosuchdomain00", "", ""), run_event("r", "j", [], []))


def test_a_deleted_lineage_event_leaves_the_listings_and_a_repeat_answers_the_same(dz, catalog):
    kept = post(dz, catalog, run_event(unique("run"), "kept", [TOPIC], [GLUE_TABLE]))
    gone = post(dz, catalog, run_event(unique("run"), "gone", [TOPIC], [GLUE_TABLE]))
    deleted = dz.delete_lineage_event(domainIdentifier=catalog.domain_id, identifier=gone["id"])
    assert (deleted["id"], deleted["domainId"], deleted["processingStatus"]) == (
        gone["id"],
        catalog.domain_id,
        "SUCCESS",
    )
    again = dz.delete_lineage_event(domainIdentifier=catalog.domain_id, identifier=gone["id"])
    assert again["id"] == gone["id"]  # idempotent, as the model marks it
    listed = dz.list_lineage_events(domainIdentifier=catalog.domain_id)["items"]
    assert [item["id"] for item in listed] == [kept["id"]]
    with pytest.raises(ClientError, match=r"\(ResourceNotFoundException\)"):
        dz.get_lineage_event(domainIdentifier=catalog.domain_id, identifier=gone["id"])
    with pytest.raises(ClientError, match=r"\(ResourceNotFoundException\)"):
        dz.delete_lineage_event(domainIdentifier=catalog.domain_id, identifier="abcdefghij0123")
    # The nodes the event built stay: nothing documents that deleting an event changes them.
    assert node(dz, catalog, "cdc.gone")["typeName"] == "amazon.datazone.JobLineageNodeType"


def query(dz, catalog, identifier: str, direction: str, hops: int | None = None, **params):
    relation = {"relationType": "LINEAGE", "relationDirection": direction}
    if hops is not None:
        relation["maxPathLength"] = hops
    return dz.query_graph(
        domainIdentifier=catalog.domain_id,
        match=[
            {"entityPattern": {"entityType": "LINEAGE_NODE", "identifier": identifier}},
            {"relationPattern": relation},
        ],
        **params,
    )


def test_query_graph_walks_lineage_up_or_down_to_its_path_length(dz, catalog):
    source = ("postgres://db:5432", "shop.public.orders")
    post(dz, catalog, run_event("src", "source", [source], [TOPIC]))
    post(dz, catalog, run_event("snk", "sink", [TOPIC], [GLUE_TABLE]))
    table = node(dz, catalog, GLUE_TABLE_ARN)

    def sources(found: dict) -> list[str]:
        return [item["lineageNode"]["sourceIdentifier"] for item in found["items"]]

    assert sources(query(dz, catalog, GLUE_TABLE_ARN, "IN")) == ["cdc.sink/snk"]
    assert sources(query(dz, catalog, GLUE_TABLE_ARN, "IN", 4)) == [
        "cdc.sink/snk",
        "kafka://broker-1:9092/cdc.public.orders",
        "cdc.source/src",
        "postgres://db:5432/shop.public.orders",
    ]
    first = query(dz, catalog, "postgres://db:5432/shop.public.orders", "OUT", 4, maxResults=3)
    assert sources(first)[-1] == "cdc.sink/snk" and first["nextToken"]
    rest = query(
        dz,
        catalog,
        "postgres://db:5432/shop.public.orders",
        "OUT",
        4,
        nextToken=first["nextToken"],
    )
    assert sources(rest) == [GLUE_TABLE_ARN]
    (run,) = query(dz, catalog, table["id"], "IN")["items"]
    assert run["lineageNode"]["downstreamLineageNodeIds"] == [table["id"]]
    assert run["lineageNode"]["formsOutput"] == []
    # No ResourceNotFoundException in QueryGraph's errors: an unknown node finds nothing.
    assert query(dz, catalog, "kafka://nowhere:1/none", "OUT")["items"] == []


def test_query_graph_refuses_what_the_model_does_not_allow(dz, catalog):
    with pytest.raises(ClientError, match=r"\(ValidationException\).*maxPathLength"):
        query(dz, catalog, GLUE_TABLE_ARN, "IN", 6)
    with pytest.raises(ClientError, match=r"\(ValidationException\).*one entityPattern"):
        dz.query_graph(
            domainIdentifier=catalog.domain_id,
            match=[
                {"entityPattern": {"entityType": "LINEAGE_NODE", "identifier": GLUE_TABLE_ARN}},
                {"entityPattern": {"entityType": "LINEAGE_NODE", "identifier": GLUE_TABLE_ARN}},
            ],
        )
