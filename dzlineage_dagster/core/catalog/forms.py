"""The project's DataZone form types and asset type, each defined once in Python.

From one :class:`FormTypeDefinition` come the Smithy model sent to ``CreateFormType``, the
fingerprint that says whether the deployed revision is still current (types are immutable: a
changed model is a new revision), and the checked JSON content of a form of that type.

What DataZone expects, as checked against AWS's material:

- A form type model is a Smithy ``structure`` named like the form type, one member per field,
  with ``@required`` and ``@amazon.datazone#searchable`` traits (the DataZone user guide's
  "Create custom asset types" example; the CreateFormType API reference names the searchable
  trait) and ``@documentation("...")`` for a member's description (used in DataZone models
  in AWS's own samples).
- System form types are named ``amazon.datazone.<Name>``: ``AssetCommonDetailsFormType``
  (whose ``sourceIdentifier`` links an asset to its lineage node, as AWS's Data Solutions
  Framework fills it for Kafka topics) and ``RelationalTableFormType`` (``tableName`` and
  ``columns`` of ``columnName``/``dataType``, per the user guide also descriptions).
- ``CreateAssetType`` takes at most 10 forms; a form name matches ``(?![0-9_])\\w+``, up to
  128 characters; a form's content is at most 300000 characters (botocore's model).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from dzlineage_dagster.core.schemas.avro import Column

SmithyType = Literal["String", "Integer", "Long", "Boolean", "Float", "Double"]

ASSET_COMMON_DETAILS_FORM_TYPE = "amazon.datazone.AssetCommonDetailsFormType"
RELATIONAL_TABLE_FORM_TYPE = "amazon.datazone.RelationalTableFormType"

MAX_FORM_CONTENT_LENGTH = 300_000
MAX_ASSET_TYPE_FORMS = 10
MAX_DESCRIPTION_LENGTH = 2048

_SMITHY_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_FORM_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,127}")
_INTEGER_RANGES = {"Integer": 2**31, "Long": 2**63}
_CONTENT_TYPES: dict[str, tuple[type, ...]] = {
    "String": (str,),
    "Integer": (int,),
    "Long": (int,),
    "Boolean": (bool,),
    "Float": (int, float),
    "Double": (int, float),
}


def _check_description(description: str, what: str) -> None:
    if len(description) > MAX_DESCRIPTION_LENGTH:
        raise ValueError(f"{what}: description is longer than {MAX_DESCRIPTION_LENGTH}")


@dataclass(frozen=True)
class FormField:
    """One member of a form type: its Smithy type, traits and documentation."""

    name: str
    smithy_type: SmithyType
    required: bool = False
    searchable: bool = False
    description: str = ""

    def __post_init__(self) -> None:
        if not _SMITHY_IDENTIFIER.fullmatch(self.name):
            raise ValueError(f"form field name {self.name!r} is not a Smithy identifier")
        if self.smithy_type not in _CONTENT_TYPES:
            raise ValueError(
                f"form field {self.name!r}: Smithy type must be one of {sorted(_CONTENT_TYPES)}"
            )

    def smithy_member(self) -> str:
        """The field as a member of the form type's Smithy structure, traits first."""
        traits = []
        if self.required:
            traits.append("@required")
        if self.searchable:
            traits.append("@amazon.datazone#searchable")
        if self.description:
            traits.append(f"@documentation({_smithy_string(self.description)})")
        lines = [*traits, f"{self.name}: {self.smithy_type}"]
        return "\n".join(f"    {line}" for line in lines)

    def check_value(self, value: object) -> None:
        """Raise ValueError unless ``value`` is content DataZone accepts for this field."""
        # bool is an int in Python, but not in a form's JSON.
        is_boolean_field = self.smithy_type == "Boolean"
        if isinstance(value, bool) != is_boolean_field or not isinstance(
            value, _CONTENT_TYPES[self.smithy_type]
        ):
            raise ValueError(
                f"form field {self.name!r} is a {self.smithy_type}, not {type(value).__name__}"
            )
        limit = _INTEGER_RANGES.get(self.smithy_type)
        if limit is not None and isinstance(value, int) and not -limit <= value < limit:
            raise ValueError(
                f"form field {self.name!r}: {value} is out of {self.smithy_type} range"
            )


@dataclass(frozen=True)
class FormTypeDefinition:
    """A custom form type: its name, description and fields."""

    name: str
    description: str
    fields: tuple[FormField, ...]

    def __post_init__(self) -> None:
        if not _FORM_NAME.fullmatch(self.name):
            raise ValueError(f"form type name {self.name!r} must match {_FORM_NAME.pattern}")
        _check_description(self.description, f"form type {self.name!r}")
        names = [field.name for field in self.fields]
        if not names or len(set(names)) != len(names):
            raise ValueError(f"form type {self.name!r} needs fields with distinct names")

    def smithy_model(self) -> str:
        """The ``model.smithy`` for CreateFormType."""
        members = "\n\n".join(field.smithy_member() for field in self.fields)
        return f"structure {self.name} {{\n{members}\n}}\n"

    def fingerprint(self) -> str:
        """A stable hash of what CreateFormType is sent: name, description and model."""
        return _sha256_of(
            {"name": self.name, "description": self.description, "model": self.smithy_model()}
        )

    def content(self, values: Mapping[str, object]) -> str:
        """The JSON content of a form of this type; None values are left out.

        Raises ValueError for an unknown field, a missing required one or a value of the
        wrong type, so that what CreateAsset would refuse fails here, with the field named.
        """
        fields = {field.name: field for field in self.fields}
        unknown = sorted(set(values) - set(fields))
        if unknown:
            raise ValueError(f"form type {self.name!r} has no fields {unknown}")
        present = {name: value for name, value in values.items() if value is not None}
        missing = [f.name for f in self.fields if f.required and f.name not in present]
        if missing:
            raise ValueError(f"form type {self.name!r} requires {missing}")
        for name, value in present.items():
            fields[name].check_value(value)
        return _content_json(present)


@dataclass(frozen=True)
class AssetTypeForm:
    """A form of an asset type: the name it has on assets, its form type, whether required."""

    form_name: str
    type_name: str
    required: bool


@dataclass(frozen=True)
class AssetTypeDefinition:
    """A custom asset type: the forms every asset of the type carries."""

    name: str
    description: str
    forms: tuple[AssetTypeForm, ...]

    def __post_init__(self) -> None:
        _check_description(self.description, f"asset type {self.name!r}")
        if not 1 <= len(self.name) <= 256:
            raise ValueError(f"asset type name {self.name!r} must have 1 to 256 characters")
        form_names = [form.form_name for form in self.forms]
        if len(form_names) > MAX_ASSET_TYPE_FORMS or len(set(form_names)) != len(form_names):
            raise ValueError(
                f"asset type {self.name!r} needs at most {MAX_ASSET_TYPE_FORMS} forms with "
                "distinct names"
            )
        bad = [name for name in form_names if not _FORM_NAME.fullmatch(name)]
        if bad:
            raise ValueError(f"asset type {self.name!r}: form names {bad} are not valid")

    def forms_input(self, type_revisions: Mapping[str, str]) -> dict[str, dict[str, object]]:
        """CreateAssetType's ``formsInput``, given each form type's revision by type name."""
        missing = sorted({f.type_name for f in self.forms} - set(type_revisions))
        if missing:
            raise ValueError(f"asset type {self.name!r}: no revision given for {missing}")
        return {
            form.form_name: {
                "typeIdentifier": form.type_name,
                "typeRevision": type_revisions[form.type_name],
                "required": form.required,
            }
            for form in self.forms
        }

    def fingerprint(self, type_revisions: Mapping[str, str]) -> str:
        """A stable hash of what CreateAssetType is sent, form type revisions included."""
        return _sha256_of(
            {
                "name": self.name,
                "description": self.description,
                "formsInput": self.forms_input(type_revisions),
            }
        )

    def form_input(
        self, type_name: str, content: str, type_revision: str | None = None
    ) -> dict[str, str]:
        """One entry of CreateAsset's ``formsInput`` for this type's form of ``type_name``."""
        form = next((form for form in self.forms if form.type_name == type_name), None)
        if form is None:
            raise ValueError(f"asset type {self.name!r} has no form of type {type_name!r}")
        entry = {"formName": form.form_name, "typeIdentifier": type_name, "content": content}
        if type_revision is not None:
            entry["typeRevision"] = type_revision
        return entry


KAFKA_SCHEMA_FORM = FormTypeDefinition(
    name="KafkaSchemaFormType",
    description="The Glue Schema Registry schema that describes a Kafka topic's records.",
    fields=(
        FormField(
            "kafka_topic",
            "String",
            required=True,
            searchable=True,
            description="The Kafka topic the schema describes.",
        ),
        FormField(
            "schema_version",
            "Integer",
            required=True,
            description="The latest version number of the schema in the registry.",
        ),
        FormField(
            "schema_arn",
            "String",
            required=True,
            searchable=True,
            description="The ARN of the schema in the Glue Schema Registry.",
        ),
        FormField(
            "registry_arn",
            "String",
            required=True,
            description="The ARN of the Glue Schema Registry that holds the schema.",
        ),
        FormField(
            "compatibility_mode",
            "String",
            description="The schema's compatibility mode, such as BACKWARD.",
        ),
        FormField(
            "data_format",
            "String",
            description="The schema's data format: AVRO, JSON or PROTOBUF.",
        ),
        FormField(
            "owners",
            "String",
            searchable=True,
            description="Who owns the topic, separated by commas: the owners the platform's "
            "configuration names, with the ones people added here and without the ones they "
            "removed here.",
        ),
        FormField(
            "configured_owners",
            "String",
            description="The owners the platform's configuration names (the schema's owner "
            "tag, the connectors' dzlineage.owners), as dzlineage last wrote them: what tells "
            "the owners people added or removed from the configured ones.",
        ),
    ),
)

MSK_SOURCE_REFERENCE_FORM = FormTypeDefinition(
    name="MskSourceReferenceFormType",
    description="The Amazon MSK cluster that hosts a Kafka topic.",
    fields=(
        FormField(
            "cluster_arn",
            "String",
            required=True,
            searchable=True,
            description="The ARN of the MSK cluster.",
        ),
        FormField(
            "cluster_type",
            "String",
            required=True,
            description="The cluster type: PROVISIONED or SERVERLESS.",
        ),
        FormField(
            "bootstrap_brokers",
            "String",
            description="The cluster's bootstrap brokers, comma-separated host:port pairs.",
        ),
    ),
)

KAFKA_TOPIC_ASSET_TYPE = AssetTypeDefinition(
    name="KafkaTopicAssetType",
    description="A Kafka topic on Amazon MSK, its records described by a Glue registry schema.",
    forms=(
        AssetTypeForm("KafkaSchemaForm", KAFKA_SCHEMA_FORM.name, required=True),
        AssetTypeForm("MskSourceReferenceForm", MSK_SOURCE_REFERENCE_FORM.name, required=True),
        # DataZone adds this form to every asset type, optional; declared here to say so.
        AssetTypeForm("AssetCommonDetailsForm", ASSET_COMMON_DETAILS_FORM_TYPE, required=False),
        AssetTypeForm("RelationalTableForm", RELATIONAL_TABLE_FORM_TYPE, required=True),
    ),
)


def kafka_schema_form_content(
    topic: str,
    schema_version: int,
    schema_arn: str,
    registry_arn: str,
    compatibility: str | None,
    data_format: str | None,
    owners: Sequence[str] = (),
) -> str:
    """The KafkaSchemaForm content for a topic's schema (its latest version) and the owners
    its configuration names (both owner fields left out when there are none, so a topic
    without configured owners keeps the content earlier versions wrote)."""
    listed = owners_text(owners)
    return KAFKA_SCHEMA_FORM.content(
        {
            "kafka_topic": topic,
            "schema_version": schema_version,
            "schema_arn": schema_arn,
            "registry_arn": registry_arn,
            "compatibility_mode": compatibility,
            "data_format": data_format,
            "owners": listed,
            "configured_owners": listed,
        }
    )


def owners_text(owners: Sequence[str]) -> str | None:
    """Owners as an owner field holds them: separated by commas (None: no owner)."""
    return ", ".join(owners) or None


def owners_of_text(text: str | None) -> list[str]:
    """The owners an owner field lists, in order; a person's entry may hold spaces."""
    return list(dict.fromkeys(name.strip() for name in (text or "").split(",") if name.strip()))


def msk_source_form_content(
    cluster_arn: str, cluster_type: str, bootstrap_brokers: str | None = None
) -> str:
    """The MskSourceReferenceForm content for the cluster hosting a topic."""
    return MSK_SOURCE_REFERENCE_FORM.content(
        {
            "cluster_arn": cluster_arn,
            "cluster_type": cluster_type,
            "bootstrap_brokers": bootstrap_brokers,
        }
    )


def asset_common_details_content(source_identifier: str) -> str:
    """The common details form: ``sourceIdentifier`` joins the asset to its lineage node."""
    if not source_identifier:
        raise ValueError("an asset's sourceIdentifier can't be empty")
    return _content_json({"sourceIdentifier": source_identifier})


def relational_table_content(columns: Sequence[Column], *, table_name: str) -> str:
    """The relational table form: the table's name and its columns' names, types and docs.

    The form's columns are flat: a struct column's type spells its fields out (Glue's
    ``struct<...>``), and its description adds a line per nested field with a doc or enum
    symbols (:meth:`Column.full_description`).
    """
    return _content_json(
        {
            "tableName": table_name,
            "columns": [
                {
                    "columnName": column.name,
                    "dataType": column.type,
                    **({"description": text} if (text := column.full_description()) else {}),
                }
                for column in columns
            ],
        }
    )


def fitting_relational_table_content(
    columns: Sequence[Column], *, table_name: str
) -> tuple[str, int]:
    """The relational table form with as many leading columns as DataZone's limit allows.

    Returns the content and how many columns it kept: a table too wide for one form is still
    cataloged, with its first columns, rather than not at all.
    """
    try:
        return relational_table_content(columns, table_name=table_name), len(columns)
    except ValueError:
        pass
    fits, too_many = 0, len(columns)  # the longest prefix that fits is in [fits, too_many)
    while too_many - fits > 1:
        middle = (fits + too_many) // 2
        try:
            relational_table_content(columns[:middle], table_name=table_name)
            fits = middle
        except ValueError:
            too_many = middle
    return relational_table_content(columns[:fits], table_name=table_name), fits


def forms_fingerprint(forms_input: Sequence[Mapping[str, str]]) -> str:
    """A stable hash of CreateAsset ``formsInput``'s names, types and contents.

    Independent of the forms' order and of key order and spacing in JSON contents, so that
    only a real change of content makes a new fingerprint (and an asset revision).
    """
    return _sha256_of(
        sorted(
            (
                {
                    "formName": form["formName"],
                    "typeIdentifier": form.get("typeIdentifier"),
                    "content": _canonical_content(form.get("content", "")),
                }
                for form in forms_input
            ),
            key=lambda form: form["formName"],
        )
    )


def _canonical_content(content: str) -> object:
    try:
        return json.loads(content)
    except ValueError:
        return content


def _content_json(content: object) -> str:
    text = json.dumps(content, separators=(",", ":"), sort_keys=True, ensure_ascii=False)
    if len(text) > MAX_FORM_CONTENT_LENGTH:
        raise ValueError(
            f"form content has {len(text)} characters, more than DataZone's "
            f"{MAX_FORM_CONTENT_LENGTH}"
        )
    return text


def _sha256_of(value: object) -> str:
    canonical = json.dumps(value, separators=(",", ":"), sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def _smithy_string(text: str) -> str:
    # JSON's string escapes (\" \\ \n \uXXXX) are all valid in a Smithy string; escaping
    # everything outside ASCII keeps line separators such as U+2028 out of the model's lines.
    return json.dumps(text)
