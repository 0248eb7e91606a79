"""Validate OpenLineage events against the official JSON Schemas in ``<repo>/../shared``.

The event is checked against the schema its ``schemaURL`` names, and every facet in it
against the schema its ``_schemaURL`` names, each resolved to the local copies of
``OpenLineage.json`` and ``facets/*.json`` (their ``$ref``s to one another included), so
nothing is fetched. A facet whose schema is not among the local copies is a violation too:
an event is only called valid when all of it was checked. Formats are checked as well
(``date-time``, ``uuid``, and ``uri`` as an absolute URI with a scheme).
"""

from __future__ import annotations

import json
import os
import re
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator, FormatChecker, ValidationError
from jsonschema.exceptions import best_match
from referencing import Registry, Resource
from referencing.exceptions import Unresolvable

SPEC_DIR = Path(__file__).resolve().parents[1].parent / "shared" / "openlineage-spec"

_URI = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:[^\s]*")
_FACET_MAPS = ("facets", "inputFacets", "outputFacets")


def validate_openlineage_event(event_json: str) -> None:
    """Raise ValidationError if ``event_json`` breaks the OpenLineage specification.

    Skips the calling test, with the reason, when the specification folder is missing.
    """
    registry = _registry()
    event = json.loads(event_json)
    _validate_against(event, event.get("schemaURL"), "event", registry)
    for path, facet in _facets(event):
        _validate_against(facet, facet.get("_schemaURL"), path, registry)


def _validate_against(instance: Any, schema_url: object, path: str, registry: Registry) -> None:
    if not isinstance(schema_url, str):
        raise ValidationError(f"{path}: has no schema URL to validate against")
    try:
        registry.resolver().lookup(schema_url)
    except Unresolvable as error:
        raise ValidationError(
            f"{path}: no local OpenLineage schema for {schema_url!r} in {SPEC_DIR}"
        ) from error
    validator = Draft202012Validator(
        {"$ref": schema_url}, registry=registry, format_checker=_FORMATS
    )
    error = best_match(validator.iter_errors(instance))
    if error is not None:
        location = "/".join(str(part) for part in error.absolute_path)
        raise ValidationError(f"{path}/{location}: {error.message} (schema {schema_url})")


def _facets(event: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """Every facet of the event, with where it is."""
    owners = [("run", event.get("run")), ("job", event.get("job"))]
    for side in ("inputs", "outputs"):
        owners += [(f"{side}[{i}]", dataset) for i, dataset in enumerate(event.get(side) or [])]
    return [
        (f"{owner_path}.{facet_map}.{key}", facet)
        for owner_path, owner in owners
        if isinstance(owner, dict)
        for facet_map in _FACET_MAPS
        for key, facet in (owner.get(facet_map) or {}).items()
    ]


_FORMATS = FormatChecker()


@_FORMATS.checks("uri")
def _is_uri(value: object) -> bool:
    return not isinstance(value, str) or bool(_URI.fullmatch(value))


@cache
def _registry() -> Registry:
    if not SPEC_DIR.is_dir():
        # CI always has shared/ beside the clone: there a missing spec is an error, not a skip.
        missing = f"OpenLineage specification folder {SPEC_DIR} is missing"
        if os.environ.get("CI"):
            pytest.fail(missing)
        pytest.skip(missing)
    documents = [SPEC_DIR / "OpenLineage.json", *sorted((SPEC_DIR / "facets").glob("*.json"))]
    resources = []
    for document in documents:
        contents = json.loads(document.read_text())
        resources.append((contents["$id"], Resource.from_contents(contents)))
    return Registry().with_resources(resources)
