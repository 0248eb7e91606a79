"""What an asset revision keeps of people's work (core.curation), on arbitrary curation."""

from __future__ import annotations

import dataclasses
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dzlineage_dagster.core.catalog.curation import (
    COMMON_DETAILS_FORM_NAME,
    PRODUCT_FORM_NAMES,
    AssetContent,
    AssetForm,
    CurationError,
    curated_revision,
)
from dzlineage_dagster.core.catalog.forms import (
    ASSET_COMMON_DETAILS_FORM_TYPE,
    KAFKA_SCHEMA_FORM,
    asset_common_details_content,
    kafka_schema_form_content,
    owners_of_text,
)


def schema_form(version: int) -> AssetForm:
    content = kafka_schema_form_content("shop.sales.orders", version, "arn:s", "arn:r", None, None)
    return AssetForm("KafkaSchemaForm", KAFKA_SCHEMA_FORM.name, content)


def common_form(source_identifier: str = "kafka://b:9092/shop.sales.orders", **more) -> AssetForm:
    content = json.loads(asset_common_details_content(source_identifier))
    return AssetForm(
        COMMON_DETAILS_FORM_NAME, ASSET_COMMON_DETAILS_FORM_TYPE, json.dumps({**content, **more})
    )


def product(version: int = 2, source_identifier: str = "kafka://b:9092/shop.sales.orders"):
    return AssetContent(
        name="msk.shop.sales.orders",
        description="Kafka topic shop.sales.orders on MSK cluster msk",
        forms=(schema_form(version), common_form(source_identifier)),
    )


def as_written(content: AssetContent) -> AssetContent:
    """The content as GetAsset answers it: every form with its type revision."""
    return AssetContent(
        content.name,
        content.description,
        tuple(AssetForm(f.name, f.type_name, f.content, "1") for f in content.forms),
        content.glossary_terms,
    )


def steward_form(index: int) -> AssetForm:
    return AssetForm(f"StewardForm{index}", "StewardFormType", json.dumps({"owner": index}), "3")


texts = st.one_of(st.none(), st.text(min_size=1, max_size=20))
term_ids = st.lists(st.from_regex(r"[a-z0-9]{14}", fullmatch=True), max_size=20, unique=True)


@st.composite
def curations(draw):
    """The product's last revision, and the latest: a person's edit of it, or not."""
    written = as_written(product(version=1))
    name = draw(st.one_of(st.just(written.name), st.text(min_size=1, max_size=30)))
    description = draw(st.one_of(st.just(written.description), texts))
    readme = draw(st.one_of(st.none(), st.text(max_size=20)))
    common = common_form(**({"readMe": readme} if readme is not None else {}))
    foreign = tuple(steward_form(i) for i in range(draw(st.integers(0, 8))))
    latest = AssetContent(
        name,
        description,
        (written.forms[0], dataclasses.replace(common, type_revision="6"), *foreign),
        tuple(draw(term_ids)),
    )
    return written, latest


@given(curations())
def test_a_revision_never_loses_a_term_a_foreign_form_or_a_persons_text(curation):
    written, latest = curation
    foreign = [f for f in latest.forms if f.name not in PRODUCT_FORM_NAMES]
    if len(foreign) + len(product().forms) > 10:
        with pytest.raises(CurationError, match="no revision is made"):
            curated_revision(product(), latest, written)
        return
    revision = curated_revision(product(), latest, written).content

    assert revision.glossary_terms == latest.glossary_terms
    assert [f for f in revision.forms if f.name not in PRODUCT_FORM_NAMES] == foreign
    for field in ("name", "description"):
        person_changed_it = getattr(latest, field) != getattr(written, field)
        expected = getattr(latest if person_changed_it else product(), field)
        assert getattr(revision, field) == expected
    # The product's own forms are the product's; the common details keep the steward's readMe.
    assert revision.form("KafkaSchemaForm").same_content(schema_form(2))
    common = revision.form(COMMON_DETAILS_FORM_NAME).fields()
    assert common == {**latest.form(COMMON_DETAILS_FORM_NAME).fields(), **common_form().fields()}


@given(curations())
def test_the_revision_built_on_the_latest_is_held_by_its_answer(curation):
    written, latest = curation
    try:
        revision = curated_revision(product(), latest, written).content
    except CurationError:
        return
    answered = as_written(revision)
    assert answered.holds(revision) and revision.holds(answered)
    assert not as_written(written).holds(revision)  # the schema version moved on


def test_a_persons_text_is_kept_and_nothing_the_product_owns_is_reported_without_edits():
    written = as_written(product(version=1))
    latest = AssetContent("Orders (curated)", "Curated.", written.forms, ("term1",))
    curated = curated_revision(product(), latest, written)
    assert (curated.content.name, curated.content.description) == ("Orders (curated)", "Curated.")
    assert curated.kept_text == ("name", "description")
    assert curated.overridden == ()
    assert curated.content.glossary_terms == ("term1",)


def test_without_the_products_last_revision_a_differing_text_is_taken_as_a_persons():
    latest = AssetContent("Orders", None, as_written(product(version=1)).forms)
    curated = curated_revision(product(), latest, None)
    assert (curated.content.name, curated.content.description) == ("Orders", None)
    assert curated.overridden == ()
    unchanged = as_written(product(version=1))
    assert curated_revision(product(), unchanged, None).kept_text == ()


def test_edits_of_what_the_product_owns_are_overridden_and_named():
    written = as_written(product(version=1))
    edited_schema = AssetForm("KafkaSchemaForm", KAFKA_SCHEMA_FORM.name, schema_form(7).content)
    latest = AssetContent(
        written.name,
        written.description,
        (edited_schema, common_form("someone/else", readMe="# Orders")),
    )
    curated = curated_revision(product(), latest, written)
    assert curated.overridden == ("KafkaSchemaForm", "AssetCommonDetailsForm.sourceIdentifier")
    assert curated.content.form(COMMON_DETAILS_FORM_NAME).fields() == {
        "sourceIdentifier": "kafka://b:9092/shop.sales.orders",
        "readMe": "# Orders",
    }
    # The product moving its own sourceIdentifier is no person's edit.
    moved = curated_revision(product(source_identifier="kafka://new/t"), written, written)
    assert moved.overridden == ()


def test_past_ten_forms_no_revision_is_made_and_the_forms_are_named():
    written = as_written(product(version=1))
    # A person's revision dropped the optional common details form to make room for 9 forms.
    latest = AssetContent(
        written.name,
        written.description,
        (written.forms[0], *(steward_form(i) for i in range(9))),
    )
    with pytest.raises(CurationError) as raised:
        curated_revision(product(), latest, written)
    assert "9 forms that are not the product's (StewardForm0, " in str(raised.value)
    assert "more than DataZone's 10" in str(raised.value)


@pytest.mark.parametrize("before_the_note", [None, "Curated.", "DEPRECATED soon. Use v2."])
def test_a_revived_asset_loses_the_products_deprecation_note_and_keeps_what_follows(
    before_the_note,
):
    product_text = product().description
    deprecated = as_written(product(version=1))
    note = "DEPRECATED: schema arn:aws:glue:r:1:schema/reg/t was deleted from the registry"
    latest = dataclasses.replace(
        deprecated, description=f"{note}. {before_the_note or product_text}"
    )
    revision = curated_revision(product(), latest, None).content
    assert revision.description == (before_the_note or product_text)


@pytest.mark.parametrize("description", ["DEPRECATED soon. Use v2.", "DEPRECATED: see the wiki."])
def test_a_persons_text_that_starts_like_the_note_is_kept_whole(description):
    written = as_written(product(version=1))
    latest = dataclasses.replace(written, description=description)
    assert curated_revision(product(), latest, written).content.description == description


OWNER_NAMES = st.sampled_from(
    ["team:sales", "team:lakehouse", "ana@example.com", "bob@example.com", "Cy (on call)"]
)
OWNER_LISTS = st.lists(OWNER_NAMES, max_size=5, unique=True)


def owned_schema_form(configured: list[str], shown: list[str] | None = None) -> AssetForm:
    """The schema form with the product's configured owners, ``shown`` as a person left them."""
    fields = json.loads(
        kafka_schema_form_content("shop.sales.orders", 1, "arn:s", "arn:r", None, None, configured)
    )
    if shown is not None:
        fields.pop("owners", None)
        if shown:
            fields["owners"] = ", ".join(shown)
    return AssetForm("KafkaSchemaForm", KAFKA_SCHEMA_FORM.name, json.dumps(fields), "1")


def revised_owners(configured_then, shown, configured_now) -> list[str]:
    written = AssetContent("n", "d", (owned_schema_form(configured_then),))
    latest = AssetContent("n", "d", (owned_schema_form(configured_then, shown),))
    ours = AssetContent("n", "d", (owned_schema_form(configured_now),))
    revision = curated_revision(ours, latest, written)
    fields = revision.content.form("KafkaSchemaForm").fields()
    assert fields.get("configured_owners") == (", ".join(configured_now) or None)
    assert "KafkaSchemaForm" not in revision.overridden
    return owners_of_text(fields.get("owners"))


@given(OWNER_LISTS, OWNER_LISTS, OWNER_LISTS)
def test_the_owners_a_person_added_or_removed_stay_so_and_the_configured_ones_follow(
    configured_then, shown, configured_now
):
    owners = revised_owners(configured_then, shown, configured_now)
    added = set(shown) - set(configured_then)
    removed = set(configured_then) - set(shown)
    assert set(owners) == (set(configured_now) - removed) | added
    assert len(owners) == len(set(owners))


def test_without_a_persons_change_the_owners_are_the_configured_ones_in_order():
    then = ["team:sales", "ana@example.com"]
    assert revised_owners(then, then, ["bob@example.com", "team:sales"]) == [
        "team:sales",
        "bob@example.com",
    ]
    # An asset written before the owner fields existed has no person's change to keep.
    latest = AssetContent("n", "d", (schema_form(1),))
    ours = AssetContent("n", "d", (owned_schema_form(["team:sales"]),))
    revision = curated_revision(ours, latest, latest)
    assert revision.content.form("KafkaSchemaForm").fields()["owners"] == "team:sales"


def test_the_person_added_owners_survive_later_revisions_the_product_makes():
    """The person's change is read from the asset itself each time: the revision after the one
    that kept it still keeps it."""
    first = curated_revision(
        AssetContent("n", "d", (owned_schema_form(["team:sales", "bob@example.com"]),)),
        AssetContent("n", "d", (owned_schema_form(["team:sales"], ["Cy (on call)"]),)),
        AssetContent("n", "d", (owned_schema_form(["team:sales"]),)),
    ).content
    second = curated_revision(
        AssetContent("n", "d", (owned_schema_form(["team:lakehouse"]),)), first, first
    ).content
    owners = owners_of_text(second.form("KafkaSchemaForm").fields()["owners"])
    assert owners == ["Cy (on call)", "team:lakehouse"]
