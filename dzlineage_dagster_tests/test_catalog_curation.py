"""A data steward curates a topic's asset; the sync's next revision keeps their work (issue 17,
case 1), through the headless CLI and through the Dagster job."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, replace

import pytest

from dzlineage_dagster.cli import main as dzlineage
from dzlineage_dagster.core.catalog.curation import AssetContent, text_record
from dzlineage_dagster.resources import LineageSyncResource
from dzlineage_dagster.sync.catalog.custom_types import ensure_custom_types
from dzlineage_dagster.sync.errors import SyncError
from dzlineage_dagster.sync.run_state import SyncRun
from dzlineage_dagster.sync.stages.asset import AssetWrite, plan_topic_asset
from dzlineage_dagster.sync.stages.schema import read_schema
from dzlineage_dagster_tests.platform import DemoPlatform, writes
from dzlineage_dagster_tests.stored_mapping import put_mapping, stored_mappings
from dzlineage_dagster_tests.test_catalog_operators import (
    action_of,
    asset,
    kafka_form,
    rows_of,
    sync_output,
)
from dzlineage_dagster_tests.test_catalog_sync import latest_metadata, topic_assets

TOPIC = "shop.sales.orders"
STEWARD_FORM_MODEL = """
structure StewardNotesFormType {
    @required
    steward: String
    notes: String
}
"""


@dataclass(frozen=True)
class Curation:
    asset_id: str
    term_id: str
    glossary_id: str = ""
    name: str = "Orders (curated)"
    description: str = "Every order a customer placed, one row per order. Owned by Sales Ops."
    readme: str = "# Orders\nAsk #sales-data before joining on customer_id."
    notes: dict | None = None

    def forms_output(self, current: dict) -> dict[str, dict]:
        return {form["formName"]: form for form in current["formsOutput"]}


def form_input(form_output: dict, **content: object) -> dict:
    """A form of GetAsset's answer as CreateAssetRevision takes it, its content amended."""
    return {
        "formName": form_output["formName"],
        "typeIdentifier": form_output["typeName"],
        "typeRevision": form_output["typeRevision"],
        "content": json.dumps({**json.loads(form_output.get("content") or "{}"), **content}),
    }


def curate(platform: DemoPlatform, topic: str, source_identifier: str | None = None) -> Curation:
    """What a steward does in the portal, as one hand-made revision: a new name and
    description, a glossary term, a readMe, and a form of a form type of their own."""
    datazone = platform.client("datazone")
    settings = platform.settings
    domain = {"domainIdentifier": settings.domain_id}
    stewards = datazone.create_project(**domain, name="data-stewards")["id"]
    platform.grant_type_policies(stewards)
    glossary = datazone.create_glossary(
        **domain, owningProjectIdentifier=stewards, name="Sales glossary"
    )
    term = datazone.create_glossary_term(
        **domain, glossaryIdentifier=glossary["id"], name="Order", shortDescription="A sale."
    )
    datazone.create_form_type(
        **domain,
        name="StewardNotesFormType",
        model={"smithy": STEWARD_FORM_MODEL},
        owningProjectIdentifier=stewards,
        status="ENABLED",
    )
    [asset_id] = topic_assets(platform)[platform.schema_arn(topic)]
    curation = Curation(asset_id, term["id"], glossary["id"])
    current = asset(platform, asset_id)
    forms = curation.forms_output(current)
    common = {"readMe": curation.readme}
    if source_identifier is not None:
        common["sourceIdentifier"] = source_identifier
    datazone.create_asset_revision(
        **domain,
        identifier=asset_id,
        name=curation.name,
        description=curation.description,
        typeRevision=current["typeRevision"],
        glossaryTerms=[term["id"]],
        formsInput=[
            *(form_input(f) for name, f in forms.items() if name != "AssetCommonDetailsForm"),
            form_input(forms["AssetCommonDetailsForm"], **common),
            {
                "formName": "StewardNotes",
                "typeIdentifier": "StewardNotesFormType",
                "typeRevision": "1",
                "content": json.dumps({"steward": "ana", "notes": "PII: customer_id"}),
            },
        ],
    )
    return curation


def assert_keeps_the_curation(platform: DemoPlatform, curation: Curation) -> dict:
    """The asset's latest revision: the product's new schema version, the steward's work."""
    revised = asset(platform, curation.asset_id)
    assert (revised["name"], revised["description"]) == (curation.name, curation.description)
    assert revised["glossaryTerms"] == [curation.term_id]
    forms = curation.forms_output(revised)
    assert json.loads(forms["StewardNotes"]["content"]) == {
        "steward": "ana",
        "notes": "PII: customer_id",
    }
    common = json.loads(forms["AssetCommonDetailsForm"]["content"])
    assert common["readMe"] == curation.readme
    assert kafka_form(revised)["schema_version"] == 2
    return common


def steward_revision(platform: DemoPlatform, asset_id: str, **changes: object) -> None:
    """A person's revision in the portal: the latest revision with ``changes`` made to its
    ``name``, ``description``, ``glossaryTerms``, or a form's fields (by form name)."""
    current = asset(platform, asset_id)
    text = {key: changes.pop(key, current.get(key)) for key in ("name", "description")}
    terms = changes.pop("glossaryTerms", current.get("glossaryTerms"))
    platform.client("datazone").create_asset_revision(
        domainIdentifier=platform.settings.domain_id,
        identifier=asset_id,
        **{key: value for key, value in text.items() if value is not None},
        typeRevision=current["typeRevision"],
        **({"glossaryTerms": terms} if terms else {}),
        formsInput=[
            form_input(form, **changes.get(form["formName"], {})) for form in current["formsOutput"]
        ],
    )


def test_a_stewards_work_survives_every_revision_the_product_makes(platform, capsys, caplog):
    """Four schema versions, each a revision by the product, with a steward's edits before
    most of them: nothing of theirs is ever taken back, and their edit of a field the product
    owns is put right with a WARNING naming the field and both values."""
    sync_output(capsys)
    curation = curate(platform, TOPIC)
    datazone = platform.client("datazone")
    second_term = datazone.create_glossary_term(
        domainIdentifier=platform.settings.domain_id,
        glossaryIdentifier=curation.glossary_id,
        name="Sale",
        shortDescription="An order paid for.",
    )["id"]
    expected = {
        "name": curation.name,
        "description": curation.description,
        "glossaryTerms": [curation.term_id],
        "readMe": curation.readme,
        "notes": "PII: customer_id",
    }

    def steward_edits(**edits: object) -> None:
        expected.update(edits)
        steward_revision(
            platform,
            curation.asset_id,
            name=expected["name"],
            description=expected["description"],
            glossaryTerms=expected["glossaryTerms"],
            AssetCommonDetailsForm={"readMe": expected["readMe"]},
            StewardNotes={"notes": expected["notes"]},
        )

    def new_version_keeps_the_stewards_work(version: int, column: str) -> dict:
        platform.register_new_version(TOPIC, column)
        caplog.clear()
        assert action_of(sync_output(capsys), TOPIC) == "revised"
        revised = asset(platform, curation.asset_id)
        forms = curation.forms_output(revised)
        assert {
            "name": revised["name"],
            "description": revised.get("description"),
            "glossaryTerms": revised.get("glossaryTerms"),
            "readMe": json.loads(forms["AssetCommonDetailsForm"]["content"]).get("readMe"),
            "notes": json.loads(forms["StewardNotes"]["content"]).get("notes"),
        } == expected, f"version {version}"
        assert kafka_form(revised)["schema_version"] == version
        return revised

    new_version_keeps_the_stewards_work(2, "coupon_code")
    steward_edits(
        description="Every order, one row per order. Reviewed by Sales Ops in Q3.",
        glossaryTerms=[curation.term_id, second_term],
        readMe="# Orders\nJoin on order_id only.",
    )
    new_version_keeps_the_stewards_work(3, "gift_wrap")
    # Between two product revisions, nothing but a field the product owns.
    steward_revision(platform, curation.asset_id, KafkaSchemaForm={"schema_version": 99})
    new_version_keeps_the_stewards_work(4, "loyalty_points")
    warnings = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert [w for w in warnings if "KafkaSchemaForm.schema_version" in w] == [
        f"{TOPIC}: asset {curation.asset_id}: KafkaSchemaForm.schema_version was set to 99 in "
        "DataZone; the product owns it, so the new revision puts back its own value 4"
    ], warnings
    steward_edits(name="Orders (gold)", notes="PII: customer_id, email")
    new_version_keeps_the_stewards_work(5, "channel")
    new_version_keeps_the_stewards_work(6, "region")  # and again, with no edit in between
    # What told the steward's text from the product's: the product's own, in the mapping.
    record = stored_mappings(platform.settings)[platform.schema_arn(TOPIC)]
    assert record.product_text == text_record(product_text(platform, TOPIC))


def product_text(platform: DemoPlatform, topic: str) -> AssetContent:
    """The name and description the product gives the topic's asset."""
    cluster = platform.settings.msk_cluster_arn.split("/")[1]
    return AssetContent(f"{cluster}.{topic}", f"Kafka topic {topic} on MSK cluster {cluster}", ())


def test_the_products_own_older_text_follows_the_product_and_a_persons_stays(platform, capsys):
    """The mapping's record of the product's own text is what tells: an asset whose name is
    the text an older release wrote (recorded so) takes the product's current name; its
    description, which a person wrote, stays. Without the record, both would stay."""
    sync_output(capsys)
    arn = platform.schema_arn(TOPIC)
    [asset_id] = topic_assets(platform)[arn]
    older = AssetContent(
        "cdc-demo/shop.sales.orders", product_text(platform, TOPIC).description, ()
    )
    steward_revision(platform, asset_id, name=older.name, description="Orders, by Sales Ops.")
    stored = stored_mappings(platform.settings)[arn]
    revision = str(asset(platform, asset_id)["revision"])
    put_mapping(
        platform.settings, replace(stored, asset_revision=revision, product_text=text_record(older))
    )
    platform.register_new_version(TOPIC, "coupon_code")

    assert action_of(sync_output(capsys), TOPIC) == "revised"
    revised = asset(platform, asset_id)
    assert (revised["name"], revised["description"]) == (
        product_text(platform, TOPIC).name,
        "Orders, by Sales Ops.",
    )


def test_a_stewards_curation_survives_the_next_revision_of_dzlineage_sync(platform, capsys):
    sync_output(capsys)
    curation = curate(platform, TOPIC)
    platform.register_new_version(TOPIC, "coupon_code")
    platform.control.clear_calls()

    out = sync_output(capsys)
    assert action_of(out, TOPIC) == "revised"
    # The cost of keeping it: the latest revision, and the product's own last one (a steward
    # revised the asset since), read once each before the one revision.
    counts = platform.control.call_counts()
    assert counts[("datazone", "GetAsset")] == 2
    assert counts[("datazone", "CreateAssetRevision")] == 1
    common = assert_keeps_the_curation(platform, curation)
    assert common["sourceIdentifier"].endswith(f"/{TOPIC}")

    # Nothing changed since: the next sync leaves the curated asset alone.
    platform.control.clear_calls()
    sync_output(capsys)
    assert writes(platform.control.call_counts(), "datazone") == {}


def test_a_stewards_curation_survives_the_dagster_job_and_an_overridden_field_is_warned(
    platform,
):
    assert platform.sync().success
    curation = curate(platform, TOPIC, source_identifier="my-team/orders")
    platform.register_new_version(TOPIC, "coupon_code")

    result = platform.sync([TOPIC])
    assert result.success, result.get_step_failure_events()
    assert latest_metadata(platform, "datazone_topic_asset", TOPIC)["action"] == "revised"
    common = assert_keeps_the_curation(platform, curation)
    # The sourceIdentifier links the asset to its lineage node: the product's, warned about.
    assert common["sourceIdentifier"] != "my-team/orders"
    warnings = [
        entry.user_message
        for entry in platform.instance.all_logs(result.run_id)
        if entry.level >= 30 and "AssetCommonDetailsForm.sourceIdentifier" in entry.user_message
    ]
    assert len(warnings) == 1 and TOPIC in warnings[0], warnings


def test_past_ten_forms_the_topic_fails_by_name_and_the_asset_keeps_every_form(platform, capsys):
    sync_output(capsys)
    curation = curate(platform, TOPIC)
    datazone = platform.client("datazone")
    domain = {"domainIdentifier": platform.settings.domain_id}
    current = asset(platform, curation.asset_id)
    forms = curation.forms_output(current)
    # A person's revision drops the optional common details form to attach 7 forms of theirs.
    kept = [form_input(f) for name, f in forms.items() if name != "AssetCommonDetailsForm"]
    notes = [
        {**form_input(forms["StewardNotes"]), "formName": f"StewardNotes{i}"} for i in range(6)
    ]
    datazone.create_asset_revision(
        **domain,
        identifier=curation.asset_id,
        name=curation.name,
        typeRevision=current["typeRevision"],
        formsInput=[*kept, *notes],
    )
    platform.register_new_version(TOPIC, "coupon_code")

    assert dzlineage(["sync"]) == 1
    out = capsys.readouterr().out
    assert re.search(
        rf"^{re.escape(TOPIC)}\s+FAILED\s+asset: {re.escape(TOPIC)}: asset {curation.asset_id}: "
        r"the asset has 7 forms that "
        r"are not the product's \(StewardNotes, StewardNotes0, .*more than DataZone's 10 forms",
        out,
        re.M,
    ), out
    assert len(asset(platform, curation.asset_id)["formsOutput"]) == 10


def test_a_replayed_answer_lacking_the_kept_forms_and_terms_is_not_trusted(platform):
    """The answer check compares everything a curated revision sent, people's part included."""
    run = SyncRun(LineageSyncResource.with_settings(platform.settings))
    ensure_custom_types(run)
    snapshot = read_schema(run, TOPIC)
    plan = plan_topic_asset(run, snapshot, run.asset_type_revision)
    write = AssetWrite(
        run, snapshot, name="orders", forms=plan.forms, type_revision=run.asset_type_revision,
        content_key=plan.desired.content_fingerprint,
    )  # fmt: skip
    created, _ = write.create()
    curation = curate(platform, TOPIC)
    latest = asset(platform, curation.asset_id)
    steward_forms = [f for f in AssetContent.from_asset(latest).forms if f.name == "StewardNotes"]
    curated = replace(
        write.product_content,
        forms=(*write.product_content.forms, *steward_forms),
        glossary_terms=(curation.term_id,),
    )
    write.revise(created["id"], "2")  # the product's content alone, under the same token

    platform.control.set_client_tokens(other_parameters="replay")
    with pytest.raises(SyncError) as raised:
        replace(write, curated=curated).revise(created["id"], "2")
    assert str(raised.value) == (
        f"CreateAssetRevision for {TOPIC} answered with asset {created['id']} whose forms, "
        "glossary terms differ from the request: its client token replayed another write; the "
        "answer is not trusted"
    )


def test_a_deprecated_asset_keeps_the_stewards_curation(platform, capsys):
    """Retiring a deleted schema's asset is a revision too: the deprecation note goes in front of
    the steward's description, and their glossary term and forms stay."""
    sync_output(capsys)
    curation = curate(platform, TOPIC)
    platform.client("glue").delete_schema(SchemaId={"SchemaArn": platform.schema_arn(TOPIC)})

    sync_output(capsys)
    deprecated = asset(platform, curation.asset_id)
    assert deprecated["description"].endswith(f". {curation.description}")
    assert deprecated["name"] == curation.name
    assert deprecated["glossaryTerms"] == [curation.term_id]
    forms = curation.forms_output(deprecated)
    assert json.loads(forms["StewardNotes"]["content"])["steward"] == "ana"
    assert json.loads(forms["AssetCommonDetailsForm"]["content"])["readMe"] == curation.readme


def test_a_stewards_edit_of_a_field_the_product_owns_is_put_right_by_reconcile(
    platform, capsys, caplog
):
    """The plain sync trusts the mapping (an unchanged topic costs no DataZone read); reconcile,
    which reads every asset's forms anyway, sees the edit and the repair's revision puts it
    right with a WARNING, keeping the steward's name."""
    sync_output(capsys)
    [asset_id] = topic_assets(platform)[platform.schema_arn(TOPIC)]
    steward_revision(
        platform, asset_id, name="Orders (curated)", KafkaSchemaForm={"schema_version": 99}
    )
    assert "reconcile: nothing to repair" not in sync_output(capsys, "--dry-run", "--reconcile")

    caplog.clear()
    out = sync_output(capsys, "--reconcile")
    assert [
        TOPIC,
        "product-fields",
        f"asset {asset_id}: fields the product owns are not what it last wrote (edited in "
        "DataZone): revise it -> revised",
    ] in rows_of(out, TOPIC), out
    warnings = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert (
        f"{TOPIC}: asset {asset_id}: KafkaSchemaForm.schema_version was set to 99 in DataZone; "
        "the product owns it, so the new revision puts back its own value 1"
    ) in warnings, warnings
    repaired = asset(platform, asset_id)
    assert kafka_form(repaired)["schema_version"] == 1
    assert repaired["name"] == "Orders (curated)"
    # A steward's own fields (owners, readMe) are no edit of the product's: nothing to repair.
    steward_revision(
        platform,
        asset_id,
        KafkaSchemaForm={"owners": "ana@example.com"},
        AssetCommonDetailsForm={"readMe": "# Orders"},
    )
    assert "reconcile: nothing to repair" in sync_output(capsys, "--reconcile")
