from __future__ import annotations

import dataclasses
import json
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dzlineage_dagster.core.catalog.forms import (
    ASSET_COMMON_DETAILS_FORM_TYPE,
    KAFKA_SCHEMA_FORM,
    KAFKA_TOPIC_ASSET_TYPE,
    MSK_SOURCE_REFERENCE_FORM,
    RELATIONAL_TABLE_FORM_TYPE,
    AssetTypeDefinition,
    AssetTypeForm,
    FormField,
    FormTypeDefinition,
    asset_common_details_content,
    forms_fingerprint,
    kafka_schema_form_content,
    msk_source_form_content,
    relational_table_content,
)
from dzlineage_dagster.core.schemas.avro import Column

_MEMBER = re.compile(r"    (?P<name>[A-Za-z_][A-Za-z0-9_]*): (?P<type>[A-Z][A-Za-z]*)")
_TRAIT = re.compile(
    r"    @(?P<trait>required|amazon\.datazone#searchable|documentation\((?P<doc>.*)\))"
)


def fields_of_smithy_model(model: str, name: str) -> tuple[FormField, ...]:
    """Read a model back, accepting only the Smithy subset DataZone form types use."""
    lines = model.removesuffix("\n").split("\n")
    assert lines[0] == f"structure {name} {{"
    assert lines[-1] == "}"
    fields: list[FormField] = []
    traits: dict[str, str | bool] = {}
    for line in lines[1:-1]:
        if not line:
            assert not traits, "a blank line between a member's traits"
            continue
        trait, member = _TRAIT.fullmatch(line), _MEMBER.fullmatch(line)
        if trait:
            key = trait["trait"].split("(")[0]
            assert key not in traits, f"trait {key} twice"
            traits[key] = json.loads(trait["doc"]) if trait["doc"] is not None else True
        else:
            assert member, f"not a trait or member: {line!r}"
            fields.append(
                FormField(
                    member["name"],
                    member["type"],  # type: ignore[arg-type]
                    required=bool(traits.get("required")),
                    searchable=bool(traits.get("amazon.datazone#searchable")),
                    description=str(traits.get("documentation", "")),
                )
            )
            traits = {}
    assert not traits, "traits after the last member"
    return tuple(fields)


@pytest.mark.parametrize("form", [KAFKA_SCHEMA_FORM, MSK_SOURCE_REFERENCE_FORM])
def test_project_form_models_describe_their_fields(form: FormTypeDefinition) -> None:
    assert fields_of_smithy_model(form.smithy_model(), form.name) == form.fields


def test_kafka_schema_form_model() -> None:
    model = KAFKA_SCHEMA_FORM.smithy_model()
    assert model.startswith(
        "structure KafkaSchemaFormType {\n"
        "    @required\n"
        "    @amazon.datazone#searchable\n"
        '    @documentation("The Kafka topic the schema describes.")\n'
        "    kafka_topic: String\n\n"
    )
    assert [field.name for field in KAFKA_SCHEMA_FORM.fields] == [
        "kafka_topic",
        "schema_version",
        "schema_arn",
        "registry_arn",
        "compatibility_mode",
        "data_format",
        "owners",
        "configured_owners",
    ]
    assert [field.name for field in MSK_SOURCE_REFERENCE_FORM.fields] == [
        "cluster_arn",
        "cluster_type",
        "bootstrap_brokers",
    ]


FIELDS = st.builds(
    FormField,
    name=st.from_regex(r"\A[A-Za-z_][A-Za-z0-9_]{0,20}\Z"),
    smithy_type=st.sampled_from(["String", "Integer", "Long", "Boolean", "Float", "Double"]),
    required=st.booleans(),
    searchable=st.booleans(),
    description=st.text(max_size=40),
)
FORM_TYPES = st.builds(
    FormTypeDefinition,
    name=st.from_regex(r"\A[A-Za-z][A-Za-z0-9_]{0,30}\Z"),
    description=st.text(max_size=40),
    fields=st.lists(FIELDS, min_size=1, max_size=6, unique_by=lambda f: f.name).map(tuple),
)


@settings(max_examples=200)
@given(FORM_TYPES)
def test_any_form_type_model_reads_back_to_its_fields(form: FormTypeDefinition) -> None:
    # Descriptions with quotes, backslashes and newlines must survive as Smithy strings.
    assert fields_of_smithy_model(form.smithy_model(), form.name) == form.fields


@settings(max_examples=100)
@given(FORM_TYPES, FORM_TYPES)
def test_form_fingerprint_changes_exactly_when_what_is_sent_changes(
    first: FormTypeDefinition, second: FormTypeDefinition
) -> None:
    assert first.fingerprint() == dataclasses.replace(first).fingerprint()
    same_request = (first.name, first.description, first.smithy_model()) == (
        second.name,
        second.description,
        second.smithy_model(),
    )
    assert (first.fingerprint() == second.fingerprint()) == same_request


def test_form_fingerprint_is_stable_across_runs() -> None:
    # A changed fingerprint creates a new form type revision in every domain: change it
    # on purpose only, together with this expectation (issue 20: the owners fields).
    assert KAFKA_SCHEMA_FORM.fingerprint() == (
        "f6f63e36e64f9f555fb694b53811551c8e147976433a99282a0c2d1c4af8699b"
    )


@pytest.mark.parametrize(
    ("make", "reason"),
    [
        (lambda: FormField("1abc", "String"), "not a Smithy identifier"),
        (lambda: FormField("a-b", "String"), "not a Smithy identifier"),
        (lambda: FormField("a", "Timestamp"), "Smithy type must be one of"),  # type: ignore[arg-type]
        (lambda: FormTypeDefinition("_Form", "", (FormField("a", "String"),)), "must match"),
        (
            lambda: FormTypeDefinition("amazon.datazone.X", "", (FormField("a", "String"),)),
            "must match",
        ),
        (lambda: FormTypeDefinition("F", "", ()), "distinct names"),
        (lambda: FormTypeDefinition("F", "", (FormField("a", "String"),) * 2), "distinct names"),
        (
            lambda: FormTypeDefinition("F", "d" * 2049, (FormField("a", "String"),)),
            "longer than 2048",
        ),
        (lambda: AssetTypeDefinition("T", "", (AssetTypeForm("1x", "F", True),)), "not valid"),
        (
            lambda: AssetTypeDefinition(
                "T", "", tuple(AssetTypeForm(f"f{i}", "F", True) for i in range(11))
            ),
            "at most 10 forms",
        ),
        (lambda: AssetTypeDefinition("", "", ()), "1 to 256"),
    ],
)
def test_definitions_refuse_what_datazone_would(make, reason: str) -> None:
    with pytest.raises(ValueError, match=reason):
        make()


def test_kafka_schema_form_content() -> None:
    content = kafka_schema_form_content(
        topic="cdc.public.orders",
        schema_version=3,
        schema_arn="arn:aws:glue:us-east-1:123456789012:schema/r/cdc.public.orders-value",
        registry_arn="arn:aws:glue:us-east-1:123456789012:registry/r",
        compatibility="BACKWARD",
        data_format="AVRO",
    )
    assert json.loads(content) == {
        "kafka_topic": "cdc.public.orders",
        "schema_version": 3,
        "schema_arn": "arn:aws:glue:us-east-1:123456789012:schema/r/cdc.public.orders-value",
        "registry_arn": "arn:aws:glue:us-east-1:123456789012:registry/r",
        "compatibility_mode": "BACKWARD",
        "data_format": "AVRO",
    }


def test_optional_fields_left_out_when_none() -> None:
    content = msk_source_form_content("arn:aws:kafka:us-east-1:1:cluster/c/u", "PROVISIONED")
    assert json.loads(content) == {
        "cluster_arn": "arn:aws:kafka:us-east-1:1:cluster/c/u",
        "cluster_type": "PROVISIONED",
    }


@pytest.mark.parametrize(
    ("values", "reason"),
    [
        (
            {"kafka_topic": "t", "schema_arn": "a", "registry_arn": "r"},
            "requires \\['schema_version'\\]",
        ),
        (
            {"kafka_topic": "t", "schema_version": None, "schema_arn": "a", "registry_arn": "r"},
            "requires",
        ),
        (
            {"kafka_topic": "t", "schema_version": "3", "schema_arn": "a", "registry_arn": "r"},
            "is a Integer, not str",
        ),
        (
            {"kafka_topic": "t", "schema_version": True, "schema_arn": "a", "registry_arn": "r"},
            "is a Integer, not bool",
        ),
        (
            {"kafka_topic": "t", "schema_version": 2**31, "schema_arn": "a", "registry_arn": "r"},
            "out of Integer range",
        ),
        (
            {"kafka_topic": 5, "schema_version": 1, "schema_arn": "a", "registry_arn": "r"},
            "is a String, not int",
        ),
        (
            {
                "kafka_topic": "t",
                "schema_version": 1,
                "schema_arn": "a",
                "registry_arn": "r",
                "x": 1,
            },
            "no fields \\['x'\\]",
        ),
    ],
)
def test_form_content_is_checked_against_the_form_type(values: dict, reason: str) -> None:
    with pytest.raises(ValueError, match=reason):
        KAFKA_SCHEMA_FORM.content(values)


def test_boolean_fields_take_booleans_only() -> None:
    form = FormTypeDefinition("F", "", (FormField("flag", "Boolean", required=True),))
    assert form.content({"flag": False}) == '{"flag":false}'
    with pytest.raises(ValueError, match="is a Boolean, not int"):
        form.content({"flag": 1})


def test_asset_common_details_content_carries_the_source_identifier() -> None:
    content = asset_common_details_content("kafka://b-1.msk:9098/cdc.public.orders")
    assert json.loads(content) == {"sourceIdentifier": "kafka://b-1.msk:9098/cdc.public.orders"}
    with pytest.raises(ValueError, match="empty"):
        asset_common_details_content("")


def test_relational_table_content() -> None:
    columns = [Column("id", "int", False, None), Column("note", "string", True, "free text")]
    content = relational_table_content(columns, table_name="cdc.public.orders")
    assert json.loads(content) == {
        "tableName": "cdc.public.orders",
        "columns": [
            {"columnName": "id", "dataType": "int"},
            {"columnName": "note", "dataType": "string", "description": "free text"},
        ],
    }


def test_form_content_over_datazone_limit_is_refused() -> None:
    columns = [Column(f"column_{i}", "string", True, "d" * 100) for i in range(3000)]
    with pytest.raises(ValueError, match="more than DataZone's 300000"):
        relational_table_content(columns, table_name="t")


REVISIONS = {
    KAFKA_SCHEMA_FORM.name: "4",
    MSK_SOURCE_REFERENCE_FORM.name: "2",
    ASSET_COMMON_DETAILS_FORM_TYPE: "6",
    RELATIONAL_TABLE_FORM_TYPE: "1",
}


def test_kafka_topic_asset_type_forms_input() -> None:
    assert KAFKA_TOPIC_ASSET_TYPE.name == "KafkaTopicAssetType"
    assert KAFKA_TOPIC_ASSET_TYPE.forms_input(REVISIONS) == {
        "KafkaSchemaForm": {
            "typeIdentifier": "KafkaSchemaFormType",
            "typeRevision": "4",
            "required": True,
        },
        "MskSourceReferenceForm": {
            "typeIdentifier": "MskSourceReferenceFormType",
            "typeRevision": "2",
            "required": True,
        },
        "AssetCommonDetailsForm": {
            "typeIdentifier": "amazon.datazone.AssetCommonDetailsFormType",
            "typeRevision": "6",
            "required": False,
        },
        "RelationalTableForm": {
            "typeIdentifier": "amazon.datazone.RelationalTableFormType",
            "typeRevision": "1",
            "required": True,
        },
    }


def test_asset_type_needs_every_form_type_revision() -> None:
    missing = "['MskSourceReferenceFormType', 'amazon.datazone.AssetCommonDetailsFormType',"
    with pytest.raises(ValueError, match=re.escape(f"no revision given for {missing}")):
        KAFKA_TOPIC_ASSET_TYPE.forms_input({KAFKA_SCHEMA_FORM.name: "1"})


def test_asset_type_fingerprint_follows_form_type_revisions() -> None:
    same = KAFKA_TOPIC_ASSET_TYPE.fingerprint(dict(REVISIONS))
    assert same == KAFKA_TOPIC_ASSET_TYPE.fingerprint(REVISIONS)
    newer = KAFKA_TOPIC_ASSET_TYPE.fingerprint({**REVISIONS, KAFKA_SCHEMA_FORM.name: "5"})
    assert newer != same


def test_form_input_names_the_asset_type_form() -> None:
    assert KAFKA_TOPIC_ASSET_TYPE.form_input(RELATIONAL_TABLE_FORM_TYPE, "{}") == {
        "formName": "RelationalTableForm",
        "typeIdentifier": "amazon.datazone.RelationalTableFormType",
        "content": "{}",
    }
    assert (
        KAFKA_TOPIC_ASSET_TYPE.form_input(KAFKA_SCHEMA_FORM.name, "{}", "4")["typeRevision"] == "4"
    )
    with pytest.raises(ValueError, match="no form of type 'Other'"):
        KAFKA_TOPIC_ASSET_TYPE.form_input("Other", "{}")


FORM_INPUTS = st.lists(
    st.fixed_dictionaries(
        {
            "formName": st.text(min_size=1, max_size=10),
            "typeIdentifier": st.text(max_size=10),
            "content": st.dictionaries(st.text(max_size=5), st.integers(), max_size=4).map(
                json.dumps
            ),
        }
    ),
    max_size=5,
    unique_by=lambda form: form["formName"],
)


@settings(max_examples=200)
@given(FORM_INPUTS, st.randoms())
def test_forms_fingerprint_ignores_order_and_json_layout(forms, random) -> None:
    relaid = [
        {**form, "content": json.dumps(json.loads(form["content"]), indent=2, sort_keys=True)}
        for form in forms
    ]
    random.shuffle(relaid)
    assert forms_fingerprint(relaid) == forms_fingerprint(forms)


def test_forms_fingerprint_changes_with_content_type_or_name() -> None:
    base = [{"formName": "F", "typeIdentifier": "T", "content": '{"a":1}'}]
    fingerprint = forms_fingerprint(base)
    for change in ({"content": '{"a":2}'}, {"typeIdentifier": "U"}, {"formName": "G"}):
        assert forms_fingerprint([{**base[0], **change}]) != fingerprint
    assert forms_fingerprint([{**base[0], "typeRevision": "9"}]) == fingerprint


def test_a_table_too_wide_for_one_form_keeps_the_longest_prefix_that_fits():
    from dzlineage_dagster.core.catalog.forms import (
        MAX_FORM_CONTENT_LENGTH,
        fitting_relational_table_content,
        relational_table_content,
    )
    from dzlineage_dagster.core.schemas.avro import Column

    columns = [Column(f"column_{i:05d}", "string", True, None) for i in range(9000)]
    content, kept = fitting_relational_table_content(columns, table_name="wide")
    assert 0 < kept < len(columns)
    assert len(content) <= MAX_FORM_CONTENT_LENGTH
    assert content == relational_table_content(columns[:kept], table_name="wide")
    with pytest.raises(ValueError):
        relational_table_content(columns[: kept + 1], table_name="wide")
    narrow, all_kept = fitting_relational_table_content(columns[:10], table_name="narrow")
    assert all_kept == 10 and narrow == relational_table_content(columns[:10], table_name="narrow")


def test_a_struct_column_is_one_form_column_whose_description_names_nested_docs_and_symbols():
    from dzlineage_dagster.core.schemas.avro import Column, struct_type

    geo = (Column("lat", "double", False, "degrees north"),)
    fields = (
        Column("street", "string", False, None),
        Column("geo", struct_type(geo), True, None, fields=geo),
        Column("kind", "enum", False, None, symbols=("HOME", "WORK")),
    )
    columns = [
        Column("address", struct_type(fields), True, "where", fields=fields),
        Column("status", "enum", False, None, symbols=("NEW", "PAID")),
    ]
    content = json.loads(relational_table_content(columns, table_name="people"))
    assert content["columns"] == [
        {
            "columnName": "address",
            "dataType": "struct<street:string,geo:struct<lat:double>,kind:enum>",
            "description": (
                "where\naddress.geo.lat: degrees north\naddress.kind symbols: HOME, WORK"
            ),
        },
        {"columnName": "status", "dataType": "enum", "description": "Symbols: NEW, PAID"},
    ]
