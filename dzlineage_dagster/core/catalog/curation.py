"""What an asset revision keeps of people's work, decided without calling AWS.

A ``CreateAssetRevision`` is a whole snapshot: what it does not carry, the new revision does not
have. So the product builds each revision from the asset's latest revision and its own content:

- The product owns its forms (:data:`PRODUCT_FORM_NAMES`) and, of ``AssetCommonDetailsForm``,
  only ``sourceIdentifier`` (what links the asset to its lineage node). Those it writes; a
  person's edit of them is overridden, and said so (:attr:`CuratedRevision.overridden`).
- Everything else is people's and is kept as the latest revision has it: glossary terms, forms
  of other types, the common details form's other fields (``readMe``, ``customProperties``).
- The ``owners`` field of ``KafkaSchemaForm`` is shared: the product writes the owners the
  platform's configuration names, and keeps the owners a person added in DataZone and leaves
  out the ones a person removed there. The form's ``configured_owners`` field (the product's)
  holds what the product last wrote, so each revision tells a person's changes from the
  configuration's by itself, however many revisions ago they were made
  (:func:`merged_owners`).
- The name and the description are the product's until a person changes them: once the latest
  revision's text differs from what the product itself last wrote, the person's text wins and
  the product stops writing its own (:attr:`CuratedRevision.kept_text`). Without the product's
  last revision to compare with, a text that differs from the product's is taken as a person's,
  so a person's text is never dropped; and nothing is reported as overridden, since a person's
  edit of the product's forms can't be told from the product's own older content.
- The deprecation note the product puts before a retired asset's description is the product's:
  an asset revived (its schema back in the registry) loses it and keeps the text after it.
- A revision carries at most 10 forms: when the product's and the kept ones are more, no
  revision is made (:class:`CurationError`) rather than one that drops a form.
"""

from __future__ import annotations

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
class CuratedRevision:
    content: AssetContent
    #: What the product wrote over a person's edit: form names, ``Form.field`` names.
    overridden: tuple[str, ...]
    #: ``name``, ``description``: a person's text the revision keeps instead of the product's.
    kept_text: tuple[str, ...]
    #: The names of the forms that are not the product's and that the revision keeps.
    kept_forms: tuple[str, ...]


def curated_revision(
    product: AssetContent, latest: AssetContent, last_written: AssetContent | None
) -> CuratedRevision:
    """The next revision: the product's content over the latest revision, people's work kept.

    ``last_written`` is the revision the product itself wrote last (None when unknown); a
    person changed what differs between it and ``latest``. Raises :class:`CurationError` when
    the product's forms and the kept ones are more than DataZone's 10.
    """
    latest = replace(latest, description=without_deprecation_note(latest.description))
    if last_written is not None:
        last_written = replace(
            last_written, description=without_deprecation_note(last_written.description)
        )
    kept_text = tuple(
        field
        for field in ("name", "description")
        if _changed_by_a_person(
            getattr(latest, field), getattr(product, field), last_written, field
        )
    )
    overridden: list[str] = []
    forms = []
    for form in product.forms:
        current = latest.form(form.name)
        if form.name == COMMON_DETAILS_FORM_NAME:
            form = _common_details_over(form, current)
        elif form.name == SCHEMA_FORM_NAME:
            form = _owners_over(form, current)
        forms.append(form)
        if last_written is not None and current is not None:
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


def without_deprecation_note(description: str | None) -> str | None:
    """A description without the note the product's retirement put before it: the product's
    own text, gone once the topic is back. A person's text that merely starts like it stays."""
    if description is None:
        return None
    return _DEPRECATION_NOTE.sub("", description, count=1) or None


def _changed_by_a_person(
    now: str | None, product: str | None, last_written: AssetContent | None, field: str
) -> bool:
    written = getattr(last_written, field) if last_written is not None else product
    return now != written


def _common_details_over(product: AssetForm, current: AssetForm | None) -> AssetForm:
    """The product's common details fields over the current form's others (readMe, ...)."""
    fields = {**(current.fields() if current is not None else {}), **product.fields()}
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


def _owners_over(product: AssetForm, current: AssetForm | None) -> AssetForm:
    """The product's schema form with the owners field merged with a person's changes."""
    fields = product.fields()
    now = current.fields() if current is not None else {}
    # A field a person emptied may be gone: only a form without either field has none yet.
    untouched = SHARED_OWNERS_FIELD not in now and CONFIGURED_OWNERS_FIELD not in now
    owners = merged_owners(
        owners_of_text(fields.get(CONFIGURED_OWNERS_FIELD)),
        None if untouched else owners_of_text(now.get(SHARED_OWNERS_FIELD)),
        owners_of_text(now.get(CONFIGURED_OWNERS_FIELD)),
    )
    fields.pop(SHARED_OWNERS_FIELD, None)
    if owners:
        fields[SHARED_OWNERS_FIELD] = owners_text(owners)
    content = json.dumps(fields, separators=(",", ":"), sort_keys=True, ensure_ascii=False)
    return AssetForm(product.name, product.type_name, content, product.type_revision)


def _without_shared_owners(form: AssetForm | None) -> AssetForm | None:
    if form is None:
        return None
    fields = {k: v for k, v in form.fields().items() if k != SHARED_OWNERS_FIELD}
    return replace(form, content=json.dumps(fields, sort_keys=True))


def _overridden_edits(new: AssetForm, current: AssetForm, before: AssetForm | None) -> list[str]:
    """What a person changed in one of the product's forms since the product's last revision
    (``before``) and the new revision writes over: the form, or of the common details form the
    product's fields. A person's owners are merged, not overridden."""
    if new.name == SCHEMA_FORM_NAME:
        new, current, before = map(_without_shared_owners, (new, current, before))
    if new.name != COMMON_DETAILS_FORM_NAME:
        edited = not current.same_content(before) and not new.same_content(current)
        return [new.name] if edited else []
    ours, now = new.fields(), current.fields()
    then = before.fields() if before is not None else {}
    return [
        f"{new.name}.{field}"
        for field in sorted(PRODUCT_COMMON_DETAILS_FIELDS)
        if now.get(field) != then.get(field) and now.get(field) != ours.get(field)
    ]
