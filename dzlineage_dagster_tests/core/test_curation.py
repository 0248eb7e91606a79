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
    OverriddenEdit,
    curated_revision,
    owned_content_fingerprint,
    text_record,
)
from dzlineage_dagster.core.catalog.forms import (
    ASSET_COMMON_DETAILS_FORM_TYPE,
    KAFKA_SCHEMA_FORM,
    asset_common_details_content,
    forms_fingerprint,
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
            curated_revision(product(), latest, written, text_record(written))
        return
    revision = curated_revision(product(), latest, written, text_record(written)).content

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
    curated = curated_revision(product(), latest, written, text_record(written))
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


def test_edits_of_what_the_product_owns_are_overridden_and_named_with_both_values():
    written = as_written(product(version=1))
    edited_schema = AssetForm("KafkaSchemaForm", KAFKA_SCHEMA_FORM.name, schema_form(7).content)
    latest = AssetContent(
        written.name,
        written.description,
        (edited_schema, common_form("someone/else", readMe="# Orders")),
    )
    curated = curated_revision(product(), latest, written)
    assert curated.overridden == (
        OverriddenEdit("KafkaSchemaForm.schema_version", 7, 2),
        OverriddenEdit(
            "AssetCommonDetailsForm.sourceIdentifier",
            "someone/else",
            "kafka://b:9092/shop.sales.orders",
        ),
    )
    assert [edit.describe() for edit in curated.overridden] == [
        "KafkaSchemaForm.schema_version was set to 7 in DataZone; the product owns it, so the "
        "new revision puts back its own value 2",
        'AssetCommonDetailsForm.sourceIdentifier was set to "someone/else" in DataZone; the '
        "product owns it, so the new revision puts back its own value "
        '"kafka://b:9092/shop.sales.orders"',
    ]
    assert curated.content.form(COMMON_DETAILS_FORM_NAME).fields() == {
        "sourceIdentifier": "kafka://b:9092/shop.sales.orders",
        "readMe": "# Orders",
    }
    # The product moving its own sourceIdentifier is no person's edit.
    moved = curated_revision(product(source_identifier="kafka://new/t"), written, written)
    assert moved.overridden == ()


def test_a_person_removing_a_field_the_product_owns_is_named_and_a_long_value_is_cut():
    written = as_written(product(version=1))
    fields = written.form("KafkaSchemaForm").fields()
    del fields["registry_arn"]
    fields["schema_arn"] = "x" * 500
    latest = dataclasses.replace(
        written,
        forms=(AssetForm("KafkaSchemaForm", KAFKA_SCHEMA_FORM.name, json.dumps(fields), "1"),),
    )
    edits = {
        e.field: e.describe() for e in curated_revision(product(1), latest, written).overridden
    }
    assert edits["KafkaSchemaForm.registry_arn"].startswith(
        "KafkaSchemaForm.registry_arn was removed in DataZone; "
    )
    shown = edits["KafkaSchemaForm.schema_arn"].split("was set to ")[1].split(" in DataZone")[0]
    assert len(shown) == 200 and shown.endswith("…")


def test_a_field_others_added_to_the_products_form_type_is_kept():
    """A team's optional field on KafkaSchemaFormType (the type extension's case) is theirs."""
    written = as_written(product(version=1))
    fields = {**written.form("KafkaSchemaForm").fields(), "owner_team": "sales-data"}
    latest = dataclasses.replace(
        written,
        forms=(
            AssetForm("KafkaSchemaForm", KAFKA_SCHEMA_FORM.name, json.dumps(fields), "2"),
            *written.forms[1:],
        ),
    )
    curated = curated_revision(product(version=2), latest, written)
    assert curated.content.form("KafkaSchemaForm").fields()["owner_team"] == "sales-data"
    assert curated.overridden == ()


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
    revision = curated_revision(product(), latest, written, text_record(written))
    assert revision.content.description == description


def product_of(version: int, text: int) -> AssetContent:
    """The product's content at a schema version, its text one of a few (a cluster renamed)."""
    return dataclasses.replace(
        product(version),
        name=f"msk{text}.shop.sales.orders",
        description=f"Kafka topic shop.sales.orders on MSK cluster msk{text}",
    )


#: What a person may do between two of the product's revisions.
edits = st.fixed_dictionaries(
    {},
    optional={
        "name": st.text(min_size=1, max_size=12),
        "description": texts,
        "terms": term_ids,
        "readMe": st.text(max_size=12),
        "steward": st.integers(0, 3),
        "schema_version": st.integers(50, 99),
    },
)


def edited(latest: AssetContent, edit: dict) -> AssetContent:
    """The person's revision: ``edit`` made to the latest one."""
    forms = {form.name: form for form in latest.forms}
    common = forms[COMMON_DETAILS_FORM_NAME].fields()
    if "readMe" in edit:
        common["readMe"] = edit["readMe"]
    forms[COMMON_DETAILS_FORM_NAME] = dataclasses.replace(
        forms[COMMON_DETAILS_FORM_NAME], content=json.dumps(common)
    )
    if "schema_version" in edit:
        schema = {**forms["KafkaSchemaForm"].fields(), "schema_version": edit["schema_version"]}
        forms["KafkaSchemaForm"] = dataclasses.replace(
            forms["KafkaSchemaForm"], content=json.dumps(schema)
        )
    if "steward" in edit:
        forms[f"StewardForm{edit['steward']}"] = steward_form(edit["steward"])
    return AssetContent(
        edit.get("name", latest.name),
        edit.get("description", latest.description),
        tuple(forms.values()),
        tuple(edit.get("terms", latest.glossary_terms)),
    )


@given(st.lists(st.tuples(st.one_of(st.none(), edits), st.integers(0, 2)), min_size=3, max_size=8))
def test_a_persons_work_survives_any_number_of_the_products_revisions(history):
    """Revision after revision, each built as the sync builds it (on the latest revision, with
    the product's own last revision and its record of its own text), a person's edits in
    between: what the person did last is there, whatever the product wrote since; what the
    product owns is the product's, and a person's edit of it is named once, when overridden."""
    ours = product_of(1, 0)
    latest = written = as_written(ours)
    record = text_record(ours)
    persons: dict = {}
    for version, (edit, text) in enumerate(history, start=2):
        if edit is not None:
            latest = as_written(edited(latest, edit))
            persons.update(edit)
        ours = product_of(version, text)
        revision = curated_revision(ours, latest, written, record)
        content = revision.content
        for field in ("name", "description"):
            if field in persons and persons[field] != getattr(ours, field):
                # A description the person removed (None) stays removed too.
                assert getattr(content, field) == persons[field]
                assert field in revision.kept_text
            elif field not in persons:
                assert getattr(content, field) == getattr(ours, field)
        assert content.glossary_terms == tuple(persons.get("terms", ()))
        common = content.form(COMMON_DETAILS_FORM_NAME).fields()
        assert common.get("readMe") == persons.get("readMe")
        assert common["sourceIdentifier"] == "kafka://b:9092/shop.sales.orders"
        assert content.form("KafkaSchemaForm").fields()["schema_version"] == version
        person_set_version = edit is not None and "schema_version" in edit
        assert [e.field for e in revision.overridden] == (
            ["KafkaSchemaForm.schema_version"] if person_set_version else []
        )
        steward = {f.name for f in content.forms if f.name.startswith("StewardForm")}
        assert steward == {f.name for f in latest.forms if f.name.startswith("StewardForm")}
        latest = written = as_written(content)
        record = text_record(ours)
        persons.pop("schema_version", None)
        for field in ("name", "description"):
            if getattr(content, field) == getattr(ours, field):
                persons.pop(field, None)  # the person's text is the product's: no longer theirs


def test_without_a_record_of_its_own_text_the_product_keeps_any_text_not_its_current_one():
    """A mapping written before the record existed, or lost: the latest text is a person's
    unless it is the product's current one (keeping the product's old text at worst)."""
    old = as_written(product_of(1, 0))
    assert curated_revision(product_of(2, 1), old, old).kept_text == ("name", "description")
    assert curated_revision(product_of(2, 1), old, old, "not a record").kept_text == (
        "name",
        "description",
    )
    # With the record, the product's own old text follows the product.
    assert curated_revision(product_of(2, 1), old, old, text_record(old)).kept_text == ()


def test_the_product_owned_fingerprint_is_the_products_last_forms_until_a_person_edits_one():
    configured = owned_schema_form(["team:sales"])
    ours = AssetContent("n", "d", (configured, common_form()))
    wrote = forms_fingerprint([form.input() for form in ours.forms])
    assert owned_content_fingerprint(ours) == wrote
    # A person's owners, readMe and forms are theirs: still the product's fingerprint.
    curated = AssetContent(
        "Orders",
        None,
        (
            owned_schema_form(["team:sales"], ["ana@example.com"]),
            common_form(readMe="# Orders"),
            steward_form(1),
        ),
        ("term1",),
    )
    assert owned_content_fingerprint(curated) == wrote
    fields = {**configured.fields(), "schema_version": 99}
    edited_schema = dataclasses.replace(configured, content=json.dumps(fields))
    assert owned_content_fingerprint(dataclasses.replace(ours, forms=(edited_schema,))) != wrote
    moved = dataclasses.replace(ours, forms=(configured, common_form("someone/else")))
    assert owned_content_fingerprint(moved) != wrote


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


@given(texts, texts, texts)
def test_a_text_is_a_persons_exactly_when_it_is_neither_the_products_last_nor_its_current(
    written, latest, current
):
    """With the record of the product's own last text, the latest text is kept exactly when it
    is not that text and not the product's current one (whichever it is, the revision has it)."""
    before = dataclasses.replace(as_written(product(1)), description=written)
    now = dataclasses.replace(before, description=latest)
    ours = dataclasses.replace(product(2), description=current)
    revision = curated_revision(ours, now, before, text_record(before))
    kept = latest not in (written, current)
    assert ("description" in revision.kept_text) == kept
    assert revision.content.description == (latest if kept else current)
