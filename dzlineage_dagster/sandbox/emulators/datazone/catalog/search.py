"""DataZone's ``Search`` over a domain's assets: which match its free text and filter clauses,
and in what order."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import replace
from datetime import datetime
from typing import Any

from dzlineage_dagster.sandbox.emulators.datazone.catalog.records import MANAGED_PREFIX, Asset


def matching_assets(assets: Iterable[Asset], params: dict[str, Any]) -> list[Asset]:
    """The assets a Search input asks for, in the order its ``sort`` asks for."""
    matches = [asset for asset in assets if _search_matches(asset, params)]
    sort = params.get("sort")
    if sort:
        matches.sort(
            key=lambda a: _sort_key(a, sort["attribute"]),
            reverse=sort.get("order") == "DESCENDING",
        )
    return matches


def indexed_as_of(assets: Iterable[Asset], at: datetime) -> list[Asset]:
    """The assets as a search index that has seen the writes up to ``at`` holds them: each at
    its newest revision made by then, none made after it (the ``search_lag_seconds`` switch,
    :mod:`dzlineage_dagster.sandbox.server.ambiguities`)."""
    seen = []
    for asset in assets:
        revisions = [r for r in asset.revisions if r.created_at <= at]
        if revisions:
            seen.append(replace(asset, revisions=revisions))
    return seen


def _searchable_values(asset: Asset) -> dict[str, list[Any]]:
    """Each attribute a search can name, with the asset's values for it."""
    revision = asset.latest
    short_type = asset.type_name.removeprefix(MANAGED_PREFIX)
    values: dict[str, list[Any]] = {
        "name": [revision.name],
        "description": [revision.description] if revision.description else [],
        "typeName": [asset.type_name, short_type],
        "typeIdentifier": [asset.type_name, short_type],
        "owningProjectId": [asset.owning_project_id],
        "externalIdentifier": [asset.external_identifier] if asset.external_identifier else [],
        "glossaryTerms": list(revision.glossary_terms),
    }
    for form in revision.forms:
        for key, value in json.loads(form.content or "{}").items():
            for prefix in (form.name, form.type.name):
                values.setdefault(f"{prefix}.{key}", []).extend(_scalars(value))
    return values


def _scalars(value: Any) -> Iterable[Any]:
    if isinstance(value, dict):
        for item in value.values():
            yield from _scalars(item)
    elif isinstance(value, list):
        for item in value:
            yield from _scalars(item)
    else:
        yield value


def _search_matches(asset: Asset, params: dict[str, Any]) -> bool:
    values = _searchable_values(asset)
    project = params.get("owningProjectIdentifier")
    if project and asset.owning_project_id != project:
        return False
    text = params.get("searchText")
    if text:
        attributes = [item["attribute"] for item in params.get("searchIn") or []] or list(values)
        needle = text.lower()
        haystack = [str(v).lower() for a in attributes for v in values.get(a, [])]
        if not any(needle in value for value in haystack):
            return False
    clause = params.get("filters")
    return clause is None or _clause_matches(clause, values)


def _clause_matches(clause: dict[str, Any], values: dict[str, list[Any]]) -> bool:
    if "and" in clause:
        return all(_clause_matches(c, values) for c in clause["and"])
    if "or" in clause:
        return any(_clause_matches(c, values) for c in clause["or"])
    condition = clause["filter"]
    candidates = values.get(condition["attribute"], [])
    operator = condition.get("operator") or "EQ"
    if "intValue" in condition:
        wanted = condition["intValue"]
        numbers = [v for v in candidates if isinstance(v, (int, float)) and not isinstance(v, bool)]
        compare = {
            "EQ": lambda v: v == wanted,
            "LE": lambda v: v <= wanted,
            "LT": lambda v: v < wanted,
            "GE": lambda v: v >= wanted,
            "GT": lambda v: v > wanted,
        }.get(operator, lambda v: False)
        return any(compare(v) for v in numbers)
    wanted = condition.get("value", "")
    if operator == "TEXT_SEARCH":
        return any(wanted.lower() in str(v).lower() for v in candidates)
    return any(str(v) == wanted for v in candidates)


def _sort_key(asset: Asset, attribute: str) -> Any:
    if attribute == "createdAt":
        return asset.revisions[0].created_at.timestamp()
    if attribute == "updatedAt":
        return asset.latest.created_at.timestamp()
    return str(next(iter(_searchable_values(asset).get(attribute, [])), ""))
