"""What an asset revision keeps of people's work, decided without calling AWS.

A ``CreateAssetRevision`` is a whole snapshot: what it does not carry, the new revision does not
have. So the product builds each revision from the asset's latest revision and its own content.
A person's edit is told from the product's by what the product itself wrote, never by comparing
one revision with the one before it: a revision the product made keeps people's text, so the
revision before the latest one says nothing about who wrote what.

- The product owns the fields of its forms (:data:`PRODUCT_FORM_NAMES`) that its form types
  define (:data:`PRODUCT_FORM_FIELDS`), all of ``RelationalTableForm`` and, of
  ``AssetCommonDetailsForm``, only ``sourceIdentifier`` (what links the asset to its lineage
  node). Those it writes; a person's edit of them is put right, and said so, field by field
  with both values (:attr:`CuratedRevision.overridden`). What a person changed there is what
  differs from the product's own last revision of the form: the product writes its own fields
  whole, so that revision holds its own content, whoever revised the asset since.
- Everything else is people's and is kept as the latest revision has it: glossary terms, forms
  of other types, the other fields of the product's forms (``readMe``, ``customProperties``, a
  field a team added to the product's form type).
- The ``owners`` field of ``KafkaSchemaForm`` is shared: the product writes the owners the
  platform's configuration names, and keeps the owners a person added in DataZone and leaves
  out the ones a person removed there. The form's ``configured_owners`` field (the product's)
  holds what the product last wrote, so each revision tells a person's changes from the
  configuration's by itself, however many revisions ago they were made
  (:func:`merged_owners`).
- The name and the description are the product's until a person changes them. The product
  keeps a record of its own last text (:func:`text_record`: a digest of each, kept in the
  topic's mapping), whether or not the revision carried it: a latest text that differs from
  that record is a person's, is kept, and the product stops writing its own
  (:attr:`CuratedRevision.kept_text`), on this revision and every later one. Without the
  record (an asset adopted by its ``externalIdentifier``, a mapping lost or written before the
  record existed), a text that differs from the product's current one is taken as a person's,
  so a person's text is never dropped.
- The deprecation note the product puts before a retired asset's description is the product's:
  an asset revived (its schema back in the registry) loses it and keeps the text after it.
- A revision carries at most 10 forms: when the product's and the kept ones are more, no
  revision is made (:class:`CurationError`) rather than one that drops a form.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from dzlineage_dagster.core.catalog.forms import (
    ASSET_COMMON_DETAILS_FORM_TYPE,
    KAFKA_SCHEMA_FORM,
    KAFKA_TOPIC_ASSET_TYPE,
    MAX_ASSET_TYPE_FORMS,
    MSK_SOURCE_REFERENCE_FORM,
    forms_fingerprint,
    owners_of_text,
    owners_text,
)
from dzlineage_dagster.core.catalog.reconcile import DEPRECATED_MARK

PRODUCT_FORM_NAMES = frozenset(form.form_name for form in KAFKA_TOPIC_ASSET_TYPE.forms)
COMMON_DETAILS_FORM_NAME = next(
    form.form_name
    for form in KAFKA_TOPIC_ASSET_TYPE.forms
    if form.type_name == ASSET_COMMON_DETAILS_FORM_TYPE
)
#: The fields of ``AssetCommonDetailsForm`` the product writes; the others are people's.
PRODUCT_COMMON_DETAILS_FIELDS = frozenset({"sourceIdentifier"})
SCHEMA_FORM_NAME = next(
    form.form_name
    for form in KAFKA_TOPIC_ASSET_TYPE.forms
    if form.type_name == KAFKA_SCHEMA_FORM.name
)
#: The field of ``KafkaSchemaForm`` that people edit too, and the product's record of what it
#: wrote there.
SHARED_OWNERS_FIELD, CONFIGURED_OWNERS_FIELD = "owners", "configured_owners"
#: Form name -> the fields the product writes in it; a form not named is the product's whole
#: (``RelationalTableForm``: AWS's type, whose every field the product fills).
PRODUCT_FORM_FIELDS: Mapping[str, frozenset[str]] = {
    form.form_name: frozenset(field.name for field in definition.fields)
    for form in KAFKA_TOPIC_ASSET_TYPE.forms
    for definition in (KAFKA_SCHEMA_FORM, MSK_SOURCE_REFERENCE_FORM)
    if form.type_name == definition.name
} | {COMMON_DETAILS_FORM_NAME: PRODUCT_COMMON_DETAILS_FIELDS}
#: Hex digits of each text's SHA-256 in a :func:`text_record`: 32 bits, so a person's text is
#: taken for the product's old one about once in 4 billion edits; each of the packed mapping's
#: records grows by about 17 characters.
_TEXT_DIGEST_LENGTH = 8
_TEXT_FIELDS = ("name", "description")


#: What the retirement puts before a deprecated asset's description.
_DEPRECATION_NOTE = re.compile(
    rf"\A{re.escape(DEPRECATED_MARK)}: schema \S+ was deleted from the registry\.(?: |\Z)"
)


class CurationError(ValueError):
    """The revision cannot keep people's work and the product's together."""


@dataclass(frozen=True)
class AssetForm:
    """One form of an asset: as GetAsset shows it, or as CreateAsset's ``formsInput`` takes it
    (``type_revision`` None: the revision the asset type pins)."""

    name: str
    type_name: str
    content: str
    type_revision: str | None = None

    @classmethod
    def from_input(cls, form: Mapping[str, str]) -> AssetForm:
        return cls(
            form["formName"], form["typeIdentifier"], form["content"], form.get("typeRevision")
        )

    def input(self) -> dict[str, str]:
        entry = {"formName": self.name, "typeIdentifier": self.type_name, "content": self.content}
        if self.type_revision is not None:
            entry["typeRevision"] = self.type_revision
        return entry

    def fields(self) -> dict[str, Any]:
        return json.loads(self.content or "{}")

    def same_content(self, other: AssetForm | None) -> bool:
        return (
            other is not None
            and self.type_name == other.type_name
            and self.fields() == other.fields()
        )


@dataclass(frozen=True)
class AssetContent:
    """What an asset revision says: name, description, forms and glossary terms."""

    name: str
    description: str | None
    forms: tuple[AssetForm, ...]
    glossary_terms: tuple[str, ...] = ()

    @classmethod
    def from_asset(cls, asset: Mapping[str, Any]) -> AssetContent:
        """The content of a GetAsset (or CreateAsset, CreateAssetRevision) answer."""
        return cls(
            name=asset["name"],
            description=asset.get("description") or None,
            forms=tuple(
                AssetForm(f["formName"], f["typeName"], f.get("content") or "", f["typeRevision"])
                for f in asset.get("formsOutput", [])
            ),
            glossary_terms=tuple(asset.get("glossaryTerms") or ()),
        )

    def form(self, name: str) -> AssetForm | None:
        return next((form for form in self.forms if form.name == name), None)

    def holds(self, other: AssetContent) -> bool:
        """Says what ``other`` says: the same text, terms, and forms of the same content."""
        return (
            (self.name, self.description) == (other.name, other.description)
            and sorted(self.glossary_terms) == sorted(other.glossary_terms)
            and {f.name for f in self.forms} == {f.name for f in other.forms}
            and all(form.same_content(self.form(form.name)) for form in other.forms)
        )


@dataclass(frozen=True)
class OverriddenEdit:
    """A person's value of a field the product owns, and the product's that replaces it (None:
    no value: the person removed the field, or the product writes none)."""

    #: ``Form.field``.
    field: str
    persons: object
    products: object

    def describe(self) -> str:
        """``KafkaSchemaForm.schema_version was set to 99 in DataZone; ... its own value 4``."""
        done = "was removed" if self.persons is None else f"was set to {_shown(self.persons)}"
        undone = (
            "leaves it out, as the product writes none"
            if self.products is None
            else f"puts back its own value {_shown(self.products)}"
        )
        return f"{self.field} {done} in DataZone; the product owns it, so the new revision {undone}"


@dataclass(frozen=True)
class CuratedRevision:
    content: AssetContent
    #: What the product writes over a person's edit of a field it owns.
    overridden: tuple[OverriddenEdit, ...]
    #: ``name``, ``description``: a person's text the revision keeps instead of the product's.
    kept_text: tuple[str, ...]
    #: The names of the forms that are not the product's and that the revision keeps.
    kept_forms: tuple[str, ...]


def curated_revision(
    product: AssetContent,
    latest: AssetContent,
    last_written: AssetContent | None,
    written_text: str = "",
) -> CuratedRevision:
    """The next revision: the product's content over the latest revision, people's work kept.

    ``last_written`` is the revision the product itself wrote last (None when unknown): its own
    forms' content, what tells a person's edit of a field the product owns. ``written_text`` is
    the :func:`text_record` of the name and description the product last wrote as its own
    (empty when unknown). Raises :class:`CurationError` when the product's forms and the kept
    ones are more than DataZone's 10.
    """
    latest = replace(latest, description=without_deprecation_note(latest.description))
    written = _text_digests(written_text)
    kept_text = tuple(
        field
        for field in _TEXT_FIELDS
        if _a_persons_text(getattr(latest, field), getattr(product, field), written.get(field))
    )
    overridden: list[OverriddenEdit] = []
    forms = []
    for form in product.forms:
        current = latest.form(form.name)
        form = _product_fields_over(form, current)
        forms.append(form)
        if last_written is not None:
            overridden += _overridden_edits(form, current, last_written.form(form.name))
    kept_forms = [form for form in latest.forms if form.name not in PRODUCT_FORM_NAMES]
    if len(forms) + len(kept_forms) > MAX_ASSET_TYPE_FORMS:
        raise CurationError(
            f"the asset has {len(kept_forms)} forms that are not the product's "
            f"({', '.join(f.name for f in kept_forms)}); with the product's {len(forms)} that is "
            f"more than DataZone's {MAX_ASSET_TYPE_FORMS} forms a revision can carry: no revision "
            "is made, so none of them is lost; remove or merge some of those forms"
        )
    content = AssetContent(
        name=latest.name if "name" in kept_text else product.name,
        description=latest.description if "description" in kept_text else product.description,
        forms=(*forms, *kept_forms),
        glossary_terms=latest.glossary_terms,
    )
    return CuratedRevision(
        content, tuple(overridden), kept_text, tuple(form.name for form in kept_forms)
    )


def text_record(content: AssetContent) -> str:
    """What the product keeps of the name and description it wrote: a digest of each (16 hex
    digits in all), enough to tell whether a text is still the one it wrote."""
    return "".join(_text_digest(getattr(content, field)) for field in _TEXT_FIELDS)


def owned_content_fingerprint(content: AssetContent) -> str:
    """The :func:`~dzlineage_dagster.core.catalog.forms.forms_fingerprint` of the part of an
    asset's forms the product owns, its ``owners`` as the configuration has them: equal to the
    fingerprint of the forms the product last wrote while nobody edited a field it owns."""
    forms = []
    for form in content.forms:
        if form.name not in PRODUCT_FORM_NAMES:
            continue
        fields = _product_fields_of(form.name, form.fields())
        fields.pop(SHARED_OWNERS_FIELD, None)
        if form.name == SCHEMA_FORM_NAME and CONFIGURED_OWNERS_FIELD in fields:
            fields[SHARED_OWNERS_FIELD] = fields[CONFIGURED_OWNERS_FIELD]
        forms.append(
            {"formName": form.name, "typeIdentifier": form.type_name, "content": json.dumps(fields)}
        )
    return forms_fingerprint(forms)


def without_deprecation_note(description: str | None) -> str | None:
    """A description without the note the product's retirement put before it: the product's
    own text, gone once the topic is back. A person's text that merely starts like it stays."""
    if description is None:
        return None
    return _DEPRECATION_NOTE.sub("", description, count=1) or None


def _text_digest(text: str | None) -> str:
    encoded = json.dumps(text, ensure_ascii=False).encode("utf-8", errors="surrogatepass")
    return hashlib.sha256(encoded).hexdigest()[:_TEXT_DIGEST_LENGTH]


def _text_digests(record: str) -> dict[str, str]:
    """Field -> digest of a :func:`text_record`; empty when there is none or it is not one (an
    edited mapping): the product's last text is then unknown."""
    if not re.fullmatch(rf"[0-9a-f]{{{_TEXT_DIGEST_LENGTH * len(_TEXT_FIELDS)}}}", record):
        return {}
    return {
        field: record[index * _TEXT_DIGEST_LENGTH : (index + 1) * _TEXT_DIGEST_LENGTH]
        for index, field in enumerate(_TEXT_FIELDS)
    }


def _a_persons_text(now: str | None, product: str | None, written: str | None) -> bool:
    """Whether ``now`` is a person's text: not the product's own last one (``written``, its
    digest), or without that record, not the product's current one."""
    if now == product:
        return False
    return written is None or _text_digest(now) != written


def _product_fields_of(form_name: str, fields: Mapping[str, Any]) -> dict[str, Any]:
    owned = PRODUCT_FORM_FIELDS.get(form_name)
    return {k: v for k, v in fields.items() if owned is None or k in owned}


def _product_fields_over(product: AssetForm, current: AssetForm | None) -> AssetForm:
    """The product's form: its own fields as it writes them now, the current form's others
    (a person's ``readMe``, a team's field on the product's type) kept, and the ``owners``
    merged with a person's changes."""
    now = current.fields() if current is not None else {}
    owned = PRODUCT_FORM_FIELDS.get(product.name)
    fields = {
        **{k: v for k, v in now.items() if owned is not None and k not in owned},
        **product.fields(),
    }
    if product.name == SCHEMA_FORM_NAME:
        fields.pop(SHARED_OWNERS_FIELD, None)
        owners = _owners_over(product.fields(), now)
        if owners:
            fields[SHARED_OWNERS_FIELD] = owners_text(owners)
    content = json.dumps(fields, separators=(",", ":"), sort_keys=True, ensure_ascii=False)
    return AssetForm(product.name, product.type_name, content, product.type_revision)


def merged_owners(
    configured: list[str], current: list[str] | None, current_configured: list[str]
) -> list[str]:
    """The owners a revision lists: the ``configured`` ones, less those a person removed, plus
    those a person added. A person added what the current field lists and the configuration,
    as last written (``current_configured``), did not; removed what it listed and the field
    does not. ``current`` None: the asset has no owners field yet, nobody changed anything."""
    if current is None:
        return configured
    removed = set(current_configured) - set(current)
    return [
        *(name for name in current if name in configured or name not in current_configured),
        *(name for name in configured if name not in current and name not in removed),
    ]


def _owners_over(product: Mapping[str, Any], now: Mapping[str, Any]) -> list[str]:
    """The owners the product's schema form lists: the configured ones merged with a person's
    changes (``now``: the current form's fields)."""
    # A field a person emptied may be gone: only a form without either field has none yet.
    untouched = SHARED_OWNERS_FIELD not in now and CONFIGURED_OWNERS_FIELD not in now
    return merged_owners(
        owners_of_text(product.get(CONFIGURED_OWNERS_FIELD)),
        None if untouched else owners_of_text(now.get(SHARED_OWNERS_FIELD)),
        owners_of_text(now.get(CONFIGURED_OWNERS_FIELD)),
    )


def _overridden_edits(
    new: AssetForm, current: AssetForm | None, before: AssetForm | None
) -> list[OverriddenEdit]:
    """The fields the product owns in this form that a person changed since the product's own
    last revision of it (``before``) and that the new revision writes over. A person's owners
    are merged, not overridden."""
    ours = _product_fields_of(new.name, new.fields())
    now = _product_fields_of(new.name, current.fields() if current is not None else {})
    then = _product_fields_of(new.name, before.fields() if before is not None else {})
    return [
        OverriddenEdit(f"{new.name}.{field}", now.get(field), ours.get(field))
        for field in sorted({*ours, *now, *then} - {SHARED_OWNERS_FIELD})
        if now.get(field) != then.get(field) and now.get(field) != ours.get(field)
    ]


def _shown(value: object, limit: int = 200) -> str:
    """A field's value in a log line, cut to ``limit`` characters (a table's columns are long)."""
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else f"{text[: limit - 1]}…"
