"""Whether a new Avro schema version is compatible under a Glue schema's ``Compatibility``.

The Glue Schema Registry checks a version registered by RegisterSchemaVersion against the
schema's compatibility mode; a version that fails the check is still numbered, with ``Status``
``FAILURE`` (RegisterSchemaVersion's API reference: "Returns an error if new version of schema
does not meet the compatibility requirements"). The modes, as CreateSchema's reference gives
them:

- ``NONE``: any version is accepted; ``DISABLED``: RegisterSchemaVersion is refused (an error,
  no version numbered: versioning is prevented);
- ``BACKWARD``: a reader of the new version reads data of the previous version;
  ``BACKWARD_ALL``: of every previous version;
- ``FORWARD``: a reader of the previous version reads data of the new one; ``FORWARD_ALL``:
  readers of every previous version do;
- ``FULL``/``FULL_ALL``: both, against the previous version / every previous version.

"Previous" is among the versions a reader can use: AVAILABLE ones (a FAILURE version never
served, a deleted one no longer does). Reading is Avro's schema resolution (the Avro
specification, "Schema Resolution"): matching names, the numeric and string/bytes promotions,
record fields matched by name or the reader's aliases (a reader field the writer lacks needs a
default), enum symbols the reader knows (or a reader default), unions branch by branch.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import fastavro

#: The writer's type -> the reader types its values are promoted to.
PROMOTIONS = {
    "int": {"long", "float", "double"},
    "long": {"float", "double"},
    "float": {"double"},
    "string": {"bytes"},
    "bytes": {"string"},
}
NAMED = ("record", "enum", "fixed")
MODES = (
    "NONE",
    "DISABLED",
    "BACKWARD",
    "BACKWARD_ALL",
    "FORWARD",
    "FORWARD_ALL",
    "FULL",
    "FULL_ALL",
)


def incompatibility(mode: str, new: str, previous: Sequence[str]) -> str | None:
    """Why the definition ``new`` fails ``mode`` against the ``previous`` AVAILABLE
    definitions (oldest first), or None when it is accepted."""
    if mode not in MODES:
        raise ValueError(f"compatibility {mode!r} is not one of {', '.join(MODES)}")
    # DISABLED: RegisterSchemaVersion refuses the call itself, before any check.
    if mode in ("NONE", "DISABLED") or not previous:
        return None
    against = previous if mode.endswith("_ALL") else previous[-1:]
    family = mode.removesuffix("_ALL")
    for number, old in enumerate(against, start=len(previous) - len(against) + 1):
        if family in ("BACKWARD", "FULL"):
            problem = cannot_read(reader=new, writer=old)
            if problem:
                return f"{mode}: the new version cannot read data of version {number}: {problem}"
        if family in ("FORWARD", "FULL"):
            problem = cannot_read(reader=old, writer=new)
            if problem:
                return f"{mode}: version {number} cannot read data of the new version: {problem}"
    return None


def cannot_read(reader: str, writer: str) -> str | None:
    """Why data written with the ``writer`` definition cannot be read with ``reader``'s, or
    None when Avro's schema resolution reads it."""
    readers: dict[str, Any] = {}
    writers: dict[str, Any] = {}
    parsed_reader = fastavro.parse_schema(json.loads(reader), readers)
    parsed_writer = fastavro.parse_schema(json.loads(writer), writers)
    return _Resolution(readers, writers).problem(parsed_reader, parsed_writer, "")


class _Resolution:
    def __init__(self, readers: Mapping[str, Any], writers: Mapping[str, Any]) -> None:
        self.readers = readers
        self.writers = writers
        #: Pairs of named types being compared: a recursive type is taken to match itself.
        self.assumed: set[tuple[str, str]] = set()

    def problem(self, reader: Any, writer: Any, path: str) -> str | None:
        reader, writer = _resolved(reader, self.readers), _resolved(writer, self.writers)
        if isinstance(writer, list):
            for branch in writer:
                problem = self.problem(reader, branch, path)
                if problem:
                    return problem
            return None
        if isinstance(reader, list):
            if any(self.problem(branch, writer, path) is None for branch in reader):
                return None
            return f"{path or 'the value'}: no branch of the reader's union reads {_kind(writer)}"
        reader_type, writer_type = _kind(reader), _kind(writer)
        if reader_type != writer_type:
            if reader_type in PROMOTIONS.get(writer_type, ()):
                return None
            return f"{path or 'the value'}: {writer_type} cannot be read as {reader_type}"
        if reader_type in NAMED:
            if _short(reader["name"]) != _short(writer["name"]) and _short(writer["name"]) not in {
                _short(alias) for alias in reader.get("aliases", ())
            }:
                return (
                    f"{path or 'the value'}: {reader_type} {writer['name']} cannot be read as "
                    f"{reader['name']}"
                )
            pair = (reader["name"], writer["name"])
            if pair in self.assumed:
                return None
            self.assumed.add(pair)
            problem = self._named(reader, writer, path)
            if problem:
                self.assumed.discard(pair)
            return problem
        if reader_type == "array":
            return self.problem(reader["items"], writer["items"], f"{path}[]")
        if reader_type == "map":
            return self.problem(reader["values"], writer["values"], f"{path}{{}}")
        return None

    def _named(self, reader: dict, writer: dict, path: str) -> str | None:
        kind = reader["type"]
        if kind == "record":
            return self._record(reader, writer, path)
        if kind == "enum":
            unknown = [s for s in writer["symbols"] if s not in reader["symbols"]]
            if unknown and "default" not in reader:
                return f"{path or 'the value'}: symbols {', '.join(unknown)} unknown to the reader"
        if kind == "fixed" and reader["size"] != writer["size"]:
            return f"{path or 'the value'}: fixed size {writer['size']} read as {reader['size']}"
        return None

    def _record(self, reader: dict, writer: dict, path: str) -> str | None:
        written = {field["name"]: field for field in writer["fields"]}
        for field in reader["fields"]:
            where = f"{path}.{field['name']}" if path else field["name"]
            names = [field["name"], *field.get("aliases", ())]
            match = next((written[name] for name in names if name in written), None)
            if match is None:
                if "default" not in field:
                    return f"{where}: a field the data lacks, with no default"
                continue
            problem = self.problem(field["type"], match["type"], where)
            if problem:
                return problem
        return None


def _resolved(schema: Any, named: Mapping[str, Any]) -> Any:
    """A reference to a named type as the type; a ``{"type": ...}`` wrapper (a logical type's)
    as the type it wraps when that is not itself a complex type."""
    if isinstance(schema, str):
        return named.get(schema, schema)
    if isinstance(schema, dict) and (
        not isinstance(schema["type"], str) or schema["type"] in named
    ):
        return _resolved(schema["type"], named)
    return schema


def _kind(schema: Any) -> str:
    if isinstance(schema, dict):
        return schema["type"]
    if isinstance(schema, list):
        return "union"
    return schema


def _short(name: str) -> str:
    return name.rsplit(".", 1)[-1]
