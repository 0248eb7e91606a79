"""DataZone form type models: a reader for as much of the Smithy IDL as a form needs, and the
check of a form's JSON content against its model (required members, types, no unknown members).

Nothing here knows about AWS: an unreadable model raises :class:`ValueError`, and content
errors come back as messages worded as DataZone words them.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from dzlineage_dagster.core.schemas.json_schema import json_type

_SMITHY_TOKEN = re.compile(
    r"""(?P<skip>\s+|,|//[^\n]*)
    |(?P<string>"(?:[^"\\]|\\.)*")
    |(?P<word>[A-Za-z0-9_$.#]+)
    |(?P<punct>[{}()\[\]:=@])""",
    re.VERBOSE,
)
#: The JSON type a value of each Smithy type is, in form content.
_JSON_TYPE_OF_KIND = {
    "structure": "object",
    "union": "object",
    "map": "object",
    "list": "array",
    "set": "array",
    "string": "string",
    "enum": "string",
    "blob": "string",
    "boolean": "boolean",
    "byte": "integer",
    "short": "integer",
    "integer": "integer",
    "long": "integer",
    "bigInteger": "integer",
    "intEnum": "integer",
    "float": "number",
    "double": "number",
    "bigDecimal": "number",
    "timestamp": "any",  # epoch seconds or a date-time string
    "document": "any",
}
_SHAPE_KINDS = frozenset(_JSON_TYPE_OF_KIND)
#: The simple shapes of Smithy's prelude, by the kind of shape each is.
_PRELUDE = {
    name: name[0].lower() + name[1:]
    for name in (
        "Blob",
        "Boolean",
        "String",
        "Byte",
        "Short",
        "Integer",
        "Long",
        "Float",
        "Double",
        "BigInteger",
        "BigDecimal",
        "Timestamp",
        "Document",
    )
} | {
    f"Primitive{name}": name.lower()
    for name in ("Boolean", "Byte", "Short", "Integer", "Long", "Float", "Double")
}
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass(frozen=True)
class SmithyMember:
    target: str
    required: bool


@dataclass(frozen=True)
class SmithyShape:
    kind: str
    members: dict[str, SmithyMember]


class _SmithyParser:
    """Reads the shapes of a Smithy IDL model: kinds, members, their targets and @required."""

    def __init__(self, text: str) -> None:
        self._tokens = list(self._tokenize(text))
        self._pos = 0

    @staticmethod
    def _tokenize(text: str) -> Iterator[str]:
        pos = 0
        while pos < len(text):
            match = _SMITHY_TOKEN.match(text, pos)
            if match is None:
                raise ValueError(f"unexpected character {text[pos]!r} at offset {pos}")
            pos = match.end()
            if match.lastgroup != "skip":
                yield match.group()

    def _next(self) -> str:
        if self._pos >= len(self._tokens):
            raise ValueError("unexpected end of model")
        self._pos += 1
        return self._tokens[self._pos - 1]

    def _peek(self) -> str | None:
        return self._tokens[self._pos] if self._pos < len(self._tokens) else None

    def _expect(self, token: str) -> None:
        found = self._next()
        if found != token:
            raise ValueError(f"expected {token!r}, found {found!r}")

    def _skip_value(self) -> None:
        """Skip a node value: a string, a word, or a bracketed list or object."""
        closing = {"[": "]", "{": "}", "(": ")"}
        token = self._next()
        if token not in closing:
            return
        while self._peek() != closing[token]:
            self._skip_value()
        self._next()

    def _identifier(self) -> str:
        token = self._next()
        if not _IDENTIFIER.fullmatch(token):
            raise ValueError(f"expected a name, found {token!r}")
        return token

    def _trait(self) -> str:
        name = self._next().rsplit("#", 1)[-1]
        if self._peek() == "(":
            self._skip_value()
        return name

    def shapes(self) -> dict[str, SmithyShape]:
        shapes: dict[str, SmithyShape] = {}
        while self._peek() is not None:
            token = self._next()
            if token == "@":
                self._trait()
            elif token in ("namespace", "use"):
                self._next()
            elif token.startswith("$"):  # a control statement: $version: "2"
                self._expect(":")
                self._skip_value()
            elif token == "metadata":  # metadata key = value
                self._next()
                self._expect("=")
                self._skip_value()
            elif token == "apply":  # apply Target @trait, or apply Target { @trait ... }
                self._next()
                if self._peek() == "@":
                    self._next()
                    self._trait()
                else:
                    self._skip_value()
            elif token in _SHAPE_KINDS:
                name = self._identifier()
                if self._peek() == "with":
                    self._next()
                    self._skip_value()
                members = self._members() if self._peek() == "{" else {}
                shapes[name] = SmithyShape(token, members)
            else:
                raise ValueError(f"unexpected {token!r}")
        return shapes

    def _members(self) -> dict[str, SmithyMember]:
        self._expect("{")
        members: dict[str, SmithyMember] = {}
        traits: list[str] = []
        while (token := self._next()) != "}":
            if token == "@":
                traits.append(self._trait())
                continue
            if not _IDENTIFIER.fullmatch(token):
                raise ValueError(f"expected a member name, found {token!r}")
            target = ""
            if self._peek() == ":":
                self._next()
                target = self._next().rsplit("#", 1)[-1]
            if self._peek() == "=":
                self._next()
                self._skip_value()
            members[token] = SmithyMember(target, "required" in traits)
            traits = []
        return members


@dataclass(frozen=True)
class FormModel:
    """A form type's Smithy model: enough of it to check a form's JSON content."""

    root: str
    shapes: dict[str, SmithyShape]

    @classmethod
    def parse(cls, smithy: str, form_type_name: str) -> FormModel:
        """Raises ValueError when the model cannot be read or names unknown shapes."""
        shapes = _SmithyParser(smithy).shapes()
        structures = [name for name, shape in shapes.items() if shape.kind == "structure"]
        root = form_type_name.rsplit(".", 1)[-1]
        if root not in structures:
            if len(structures) != 1:
                raise ValueError(f"the model must define the structure {root}")
            root = structures[0]
        for shape in shapes.values():
            for member in shape.members.values():
                if member.target and member.target not in shapes and member.target not in _PRELUDE:
                    raise ValueError(f"unknown shape {member.target}")
        return cls(root, shapes)

    def content_errors(self, form_name: str, content: Any) -> list[str]:
        """JSON-schema-style errors of ``content`` (AWS words them like networknt's validator)."""
        errors: list[str] = []
        self._check(self.root, content, f"$.{form_name}", errors)
        return errors

    def _kind(self, target: str) -> str:
        return self.shapes[target].kind if target in self.shapes else _PRELUDE[target]

    def _check(self, target: str, value: Any, path: str, errors: list[str]) -> None:
        expected = _JSON_TYPE_OF_KIND[self._kind(target)]
        found = json_type(value)
        if expected != "any" and found != expected and (found, expected) != ("integer", "number"):
            errors.append(f"{path}: {found} found, {expected} expected")
            return
        shape = self.shapes.get(target)
        if shape is None:
            return
        if shape.kind in ("structure", "union"):
            self._check_structure(shape, value, path, errors)
        elif shape.kind in ("list", "set"):
            for index, item in enumerate(value):
                self._check(shape.members["member"].target, item, f"{path}[{index}]", errors)
        elif shape.kind == "map":
            for key, item in value.items():
                self._check(shape.members["value"].target, item, f"{path}.{key}", errors)

    def _check_structure(
        self, shape: SmithyShape, value: dict[str, Any], path: str, errors: list[str]
    ) -> None:
        for name, member in shape.members.items():
            if value.get(name) is None:
                if member.required:
                    errors.append(f"{path}.{name}: is missing but it is required")
            else:
                self._check(member.target, value[name], f"{path}.{name}", errors)
        for name in value.keys() - shape.members.keys():
            errors.append(
                f"{path}.{name}: is not defined in the schema and the schema does not allow "
                "additional properties"
            )
