"""A reader for the Smithy IDL of DataZone form type models, keeping where each shape and
member is written, so that a model others extended can be compared with the product's and
rewritten with only the product's part changed.

It reads what form type models use: control statements, ``namespace``/``use``/``metadata``/
``apply`` statements, shapes with traits, members with targets and defaults. An unreadable
model raises :class:`ValueError`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_TOKEN = re.compile(
    r"""(?P<skip>\s+|,|//[^\n]*)
    |(?P<string>"(?:[^"\\]|\\.)*")
    |(?P<word>[A-Za-z0-9_$.#]+)
    |(?P<punct>[{}()\[\]:=@])""",
    re.VERBOSE,
)
SHAPE_KINDS = frozenset(
    [
        "structure",
        "union",
        "map",
        "list",
        "set",
        "string",
        "enum",
        "intEnum",
        "blob",
        "boolean",
        "byte",
        "short",
        "integer",
        "long",
        "bigInteger",
        "float",
        "double",
        "bigDecimal",
        "timestamp",
        "document",
    ]
)
_CLOSING = {"[": "]", "{": "}", "(": ")"}


@dataclass(frozen=True)
class Span:
    start: int
    end: int


@dataclass(frozen=True)
class Trait:
    #: Without its namespace: ``required``, ``searchable``, ``documentation``.
    name: str
    span: Span


@dataclass(frozen=True)
class Member:
    name: str
    #: The target shape without its namespace (``String``, ``Columns``); empty for enum members.
    target: str
    traits: tuple[Trait, ...]
    span: Span

    def has(self, trait: str) -> bool:
        return any(t.name == trait for t in self.traits)


@dataclass(frozen=True)
class Shape:
    kind: str
    name: str
    members: dict[str, Member]
    #: From its first trait to its closing brace (or its name, when it has no members).
    span: Span


@dataclass(frozen=True)
class _Token:
    text: str
    span: Span


class SmithyModel:
    """A read model: its text and its shapes by name."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._tokens = list(_tokenize(text))
        self._pos = 0
        self.shapes: dict[str, Shape] = {}
        while self._peek() is not None:
            self._statement()

    def source(self, span: Span, without: tuple[Span, ...] = ()) -> str:
        """The model's text of ``span``, the ``without`` spans inside it cut out."""
        pieces, at = [], span.start
        for cut in sorted(without, key=lambda s: s.start):
            pieces.append(self.text[at : cut.start])
            at = cut.end
        pieces.append(self.text[at : span.end])
        return "".join(pieces)

    def structure(self, form_type_name: str) -> Shape:
        """The form type's structure: named like the form type, else the model's only one."""
        root = form_type_name.rsplit(".", 1)[-1]
        structures = [s for s in self.shapes.values() if s.kind == "structure"]
        named = [s for s in structures if s.name == root]
        if named:
            return named[0]
        if len(structures) != 1:
            raise ValueError(f"the model defines no structure {root}")
        return structures[0]

    def _next(self) -> _Token:
        if self._pos >= len(self._tokens):
            raise ValueError("unexpected end of model")
        self._pos += 1
        return self._tokens[self._pos - 1]

    def _peek(self) -> str | None:
        return self._tokens[self._pos].text if self._pos < len(self._tokens) else None

    def _expect(self, text: str) -> _Token:
        token = self._next()
        if token.text != text:
            raise ValueError(f"expected {text!r}, found {token.text!r}")
        return token

    def _skip_value(self) -> _Token:
        """Skip a node value (a string, a word, a bracketed list or object); its last token."""
        token = self._next()
        closing = _CLOSING.get(token.text)
        if closing is None:
            return token
        while self._peek() != closing:
            self._skip_value()
        return self._next()

    def _traits(self) -> list[Trait]:
        traits = []
        while self._peek() == "@":
            at = self._next()
            name = self._next()
            last = self._skip_value() if self._peek() == "(" else name
            traits.append(Trait(name.text.rsplit("#", 1)[-1], Span(at.span.start, last.span.end)))
        return traits

    def _statement(self) -> None:
        start = self._tokens[self._pos].span.start
        self._traits()
        token = self._next()
        if token.text in ("namespace", "use"):
            self._next()
        elif token.text.startswith("$"):  # a control statement: $version: "2"
            self._expect(":")
            self._skip_value()
        elif token.text == "metadata":
            self._next()
            self._expect("=")
            self._skip_value()
        elif token.text == "apply":
            self._next()
            if self._peek() == "@":
                self._traits()
            else:
                self._skip_value()
        elif token.text in SHAPE_KINDS:
            name = self._next()
            if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name.text):
                raise ValueError(f"expected a shape name, found {name.text!r}")
            last = name
            if self._peek() == "with":
                self._next()
                last = self._skip_value()
            members: dict[str, Member] = {}
            if self._peek() == "{":
                members, last = self._members()
            self.shapes[name.text] = Shape(
                token.text, name.text, members, Span(start, last.span.end)
            )
        else:
            raise ValueError(f"unexpected {token.text!r}")

    def _members(self) -> tuple[dict[str, Member], _Token]:
        self._expect("{")
        members: dict[str, Member] = {}
        while self._peek() != "}":
            start = self._tokens[self._pos].span.start
            traits = self._traits()
            name = self._next()
            if not re.fullmatch(r"\$?[A-Za-z_][A-Za-z0-9_]*", name.text):
                raise ValueError(f"expected a member name, found {name.text!r}")
            last, target = name, ""
            if self._peek() == ":":
                self._next()
                last = self._next()
                target = last.text.rsplit("#", 1)[-1]
            if self._peek() == "=":
                self._next()
                last = self._skip_value()
            members[name.text] = Member(
                name.text, target, tuple(traits), Span(start, last.span.end)
            )
        return members, self._next()


def _tokenize(text: str):
    pos = 0
    while pos < len(text):
        match = _TOKEN.match(text, pos)
        if match is None:
            raise ValueError(f"unexpected character {text[pos]!r} at offset {pos}")
        if match.lastgroup != "skip":
            yield _Token(match.group(), Span(match.start(), match.end()))
        pos = match.end()
