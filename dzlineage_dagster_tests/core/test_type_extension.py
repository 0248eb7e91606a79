"""Types others extend (core.type_extension, core.smithy): a superset of the product's types is
used as it is; anything else gets a next revision that holds the product's part and keeps
others' fields and forms."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dzlineage_dagster.core.catalog.forms import (
    KAFKA_SCHEMA_FORM,
    KAFKA_TOPIC_ASSET_TYPE,
    MSK_SOURCE_REFERENCE_FORM,
)
from dzlineage_dagster.core.catalog.smithy import SmithyModel
from dzlineage_dagster.core.catalog.type_extension import asset_type_fit, form_type_fit

DEFINITIONS = [KAFKA_SCHEMA_FORM, MSK_SOURCE_REFERENCE_FORM]
REVISIONS = {form.type_name: "1" for form in KAFKA_TOPIC_ASSET_TYPE.forms}

member_names = st.from_regex(r"team_[a-z][a-z0-9_]{0,12}", fullmatch=True)
simple_types = st.sampled_from(["String", "Integer", "Long", "Boolean", "Double", "Timestamp"])
OPTIONAL = st.just(False)
docs = st.text(st.characters(blacklist_categories=["Cs", "Cc"]), max_size=20)


@st.composite
def others_members(draw, required=OPTIONAL):
    """Members a team adds: name, target, whether @required, and their Smithy text."""
    names = draw(st.lists(member_names, min_size=1, max_size=4, unique=True))
    members = []
    for name in names:
        is_required = draw(required)
        target = draw(st.one_of(simple_types, st.just("Tags")))
        doc = draw(docs)
        traits = ["@required"] if is_required else []
        if doc:
            traits.append(f"@documentation({_smithy_string(doc)})")
        members.append((name, target, is_required, "\n".join([*traits, f"{name}: {target}"])))
    return members


def _smithy_string(text: str) -> str:
    return json.dumps(text)


def extended(definition, members) -> str:
    """The product's model with the members added to its structure, and a list shape."""
    body = "\n".join(f"    {line}" for *_, text in members for line in text.splitlines())
    model = definition.smithy_model().rstrip().removesuffix("}") + body + "\n}\n"
    return f'$version: "2"\nnamespace team.forms\n\n{model}\nlist Tags {{ member: String }}\n'


@pytest.mark.parametrize("definition", DEFINITIONS, ids=lambda d: d.name)
def test_the_products_own_model_is_usable_and_would_be_recreated_unchanged(definition):
    fit = form_type_fit(definition, definition.smithy_model())
    assert fit.usable and fit.kept == ()
    assert fit.next_model == definition.smithy_model()


@given(definition=st.sampled_from(DEFINITIONS), members=others_members())
def test_a_model_others_extended_with_optional_fields_is_usable(definition, members):
    fit = form_type_fit(definition, extended(definition, members))
    assert fit.usable, fit.problems
    assert set(fit.kept) == {name for name, *_ in members} | {"Tags"}


@given(
    definition=st.sampled_from(DEFINITIONS),
    members=others_members(required=st.booleans()),
    dropped=st.integers(0, 2),
)
def test_the_next_revision_puts_the_products_part_back_and_keeps_others_optional(
    definition, members, dropped
):
    model = extended(definition, members)
    removed = definition.fields[dropped].name
    model = model.replace(f"    {removed}: ", f"    renamed_{removed}: ")
    fit = form_type_fit(definition, model)
    assert not fit.usable and f"{removed} is missing" in fit.problems
    required_others = [f"renamed_{removed}"] if definition.fields[dropped].required else []
    required_others += [name for name, _, is_required, _ in members if is_required]
    assert [p for p in fit.problems if "can't fill" in p] == [
        f"{name} is required and not the product's, so the product can't fill it"
        for name in required_others
    ]

    after = form_type_fit(definition, fit.next_model)
    assert after.usable, after.problems
    structure = SmithyModel(fit.next_model).structure(definition.name)
    for name, target, _, _ in members:
        assert structure.members[name].target == target
        assert not structure.members[name].has("required")
    assert "Tags" in SmithyModel(fit.next_model).shapes
    assert "namespace team.forms" in fit.next_model


def test_a_member_the_product_types_otherwise_or_must_search_is_a_problem():
    model = (
        KAFKA_SCHEMA_FORM.smithy_model()
        .replace("schema_version: Integer", "schema_version: String")
        .replace(
            '@amazon.datazone#searchable\n    @documentation("The ARN', '@documentation("The ARN'
        )
    )
    fit = form_type_fit(KAFKA_SCHEMA_FORM, model)
    assert fit.problems == (
        "schema_version is a String, the product's a Integer",
        "schema_arn is not searchable",
    )
    assert form_type_fit(KAFKA_SCHEMA_FORM, fit.next_model).usable


def test_an_unreadable_model_is_replaced_by_the_products():
    fit = form_type_fit(KAFKA_SCHEMA_FORM, "structure {")
    assert not fit.usable and "can't be read" in fit.problems[0]
    assert fit.next_model == KAFKA_SCHEMA_FORM.smithy_model()


def product_forms() -> dict[str, dict[str, object]]:
    return KAFKA_TOPIC_ASSET_TYPE.forms_input(REVISIONS)


def team_form(required: bool = False) -> dict[str, object]:
    return {"typeIdentifier": "TeamFormType", "typeRevision": "4", "required": required}


def test_an_asset_type_with_others_optional_forms_is_usable():
    fit = asset_type_fit(
        KAFKA_TOPIC_ASSET_TYPE, {**product_forms(), "Team": team_form()}, REVISIONS
    )
    assert fit.usable and fit.kept == ("Team",)


def test_the_next_asset_type_revision_keeps_others_forms_optional_and_the_products_current():
    latest = {**product_forms(), "Team": team_form(required=True)}
    latest["KafkaSchemaForm"] = {**latest["KafkaSchemaForm"], "typeRevision": "7"}
    del latest["RelationalTableForm"]
    fit = asset_type_fit(KAFKA_TOPIC_ASSET_TYPE, latest, REVISIONS)
    assert fit.problems == (
        "form KafkaSchemaForm is KafkaSchemaFormType revision 7, the product uses revision 1",
        "form RelationalTableForm is missing",
        "form Team is required and not the product's, so the product can't fill it",
    )
    assert fit.next_forms == {**product_forms(), "Team": team_form(required=False)}
    assert fit.kept == ("Team (as optional)",)
    assert asset_type_fit(KAFKA_TOPIC_ASSET_TYPE, fit.next_forms, REVISIONS).usable
