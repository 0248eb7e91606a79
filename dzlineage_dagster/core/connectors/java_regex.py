"""The part of ``java.util.regex`` that connector configurations need, evaluated in Python.

Kafka Connect, Debezium and the Iceberg sink take Java regular expressions in their settings
(``topics.regex``, ``table.include.list``, ``RegexRouter``'s ``regex``, ``route-regex``) and
Java replacement strings (``$1``, ``${name}``). Python 3.11's ``re`` shares most of the syntax,
possessive quantifiers and atomic groups included; this module translates what differs:

- ``\\d``, ``\\w``, ``\\s``, ``\\b`` are ASCII-only in Java by default, so patterns compile with
  ``re.ASCII`` (which also makes case-insensitive matching ASCII-only, as Java's
  ``CASE_INSENSITIVE`` without ``UNICODE_CASE`` is);
- named groups ``(?<name>...)`` and back references ``\\k<name>``;
- POSIX and Java classes ``\\p{Alpha}``, ``\\p{Digit}``, ``\\p{javaLowerCase}``..., negated
  ``\\P{...}`` outside character classes;
- ``\\Q...\\E`` quoting, ``\\z`` / ``\\Z``, ``\\e``, ``\\h``, ``\\x{...}``.

What cannot be evaluated faithfully (class intersections ``&&``, nested classes, Unicode
scripts and categories, ``\\G``, the ``(?U)``/``(?d)`` flags...) raises
:class:`UnsupportedJavaRegex`, so a caller reports the setting as ambiguous instead of
guessing. A pattern Java itself rejects raises :class:`InvalidJavaRegex`.

Semantics the callers rely on: :meth:`JavaPattern.matches` is ``Matcher.matches()`` (the whole
input), and :meth:`JavaPattern.replace_first` / :meth:`JavaPattern.replace_all` are
``Matcher.replaceFirst`` / ``replaceAll``: they *search* (``find()``), so after a successful
``matches()`` a ``replaceFirst`` may still replace a shorter leftmost match, exactly as Kafka's
``RegexRouter`` does.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache


class InvalidJavaRegex(ValueError):
    """The pattern or replacement is not valid Java (Java would throw at configuration time)."""


class UnsupportedJavaRegex(ValueError):
    """Valid Java, but uses a feature this module cannot evaluate exactly."""


#: Java's POSIX classes (US-ASCII only, as Java defines them without UNICODE_CHARACTER_CLASS),
#: as the inside of a Python character class.
_POSIX_CLASSES = {
    "Lower": "a-z",
    "Upper": "A-Z",
    "ASCII": "\\x00-\\x7f",
    "Alpha": "a-zA-Z",
    "Digit": "0-9",
    "Alnum": "a-zA-Z0-9",
    "Punct": "!-/:-@\\[-`{-~",
    "Graph": "!-~",
    "Print": " -~",
    "Blank": " \\t",
    "Cntrl": "\\x00-\\x1f\\x7f",
    "XDigit": "0-9a-fA-F",
    "Space": " \\t\\n\\x0b\\f\\r",
    # java.lang.Character methods, restricted to ASCII: topic and table names are ASCII.
    "javaLowerCase": "a-z",
    "javaUpperCase": "A-Z",
    "javaWhitespace": " \\t\\n\\x0b\\f\\r\\x1c-\\x1f",
    "javaDigit": "0-9",
    "javaLetter": "a-zA-Z",
    "javaLetterOrDigit": "a-zA-Z0-9",
    "IsAlphabetic": "a-zA-Z",
    "IsDigit": "0-9",
    "IsLowercase": "a-z",
    "IsUppercase": "A-Z",
    "IsWhite_Space": " \\t\\n\\x0b\\f\\r\\x85\\xa0",
}
_HORIZONTAL_SPACE = " \\t\\xa0\\u1680\\u180e\\u2000-\\u200a\\u202f\\u205f\\u3000"
_SIMPLE_ESCAPES_OUTSIDE = {
    "z": "\\Z",
    "Z": "(?=\\n?\\Z)",
    "e": "\\x1b",
    "h": f"[{_HORIZONTAL_SPACE}]",
}
_SIMPLE_ESCAPES_INSIDE = {"e": "\\x1b", "h": _HORIZONTAL_SPACE}
_UNSUPPORTED_ESCAPES = {
    "G": "\\G (end of the previous match)",
    "R": "\\R (any line break)",
    "X": "\\X (grapheme cluster)",
    "v": "\\v (Java: vertical whitespace; Python: vertical tab)",
    "V": "\\V",
    "H": "\\H",
    "c": "\\c (control character)",
    "N": "\\N{name}",
}
_PY_SAME_ESCAPES = set("dDwWsSbBAtnrfa0123456789.\\[]{}()*+?^$|-/&")
_ALLOWED_INLINE_FLAGS = set("imsx-")
_QUANTIFIER = re.compile(r"\{\d+(,\d*)?\}")


@dataclass(frozen=True)
class JavaPattern:
    """A Java regex compiled to Python, with Java's matching and replacement semantics."""

    source: str
    case_insensitive: bool = False
    compiled: re.Pattern[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        flags = re.ASCII | (re.IGNORECASE if self.case_insensitive else 0)
        translated = translate_java_regex(self.source)
        try:
            object.__setattr__(self, "compiled", re.compile(translated, flags))
        except re.error as error:
            raise InvalidJavaRegex(
                f"invalid Java regex {self.source!r}: {error.msg} at position {error.pos}"
            ) from error

    def matches(self, text: str) -> bool:
        """``Matcher.matches()``: whether the whole of ``text`` matches."""
        return self.compiled.fullmatch(text) is not None

    def replace_first(self, text: str, replacement: str) -> str:
        """``Matcher.replaceFirst``: the leftmost match (a search, not a full match) replaced."""
        return self._replace(text, replacement, count=1)

    def replace_all(self, text: str, replacement: str) -> str:
        """``Matcher.replaceAll``: every non-overlapping match replaced."""
        return self._replace(text, replacement, count=0)

    def _replace(self, text: str, replacement: str, *, count: int) -> str:
        parts = parse_java_replacement(replacement, self.compiled)
        return self.compiled.sub(lambda match: _expand(parts, match), text, count=count)


def compile_java_regex(pattern: str, *, case_insensitive: bool = False) -> JavaPattern:
    """Compile a Java regex (cached); raises InvalidJavaRegex or UnsupportedJavaRegex."""
    return _compile_cached(pattern, case_insensitive)


@lru_cache(maxsize=4096)
def _compile_cached(pattern: str, case_insensitive: bool) -> JavaPattern:
    return JavaPattern(pattern, case_insensitive)


def translate_java_regex(pattern: str) -> str:
    """The Python ``re`` source equivalent to the Java ``pattern`` (see the module doc)."""
    out: list[str] = []
    i = 0
    class_depth = 0  # 1 inside [...]; nested classes are rejected
    class_start = False  # right after '[' or '[^': a ']' here is a literal
    while i < len(pattern):
        char = pattern[i]
        if char == "\\":
            if i + 1 >= len(pattern):
                raise InvalidJavaRegex(f"invalid Java regex {pattern!r}: trailing backslash")
            text, i = _translate_escape(pattern, i, inside_class=class_depth > 0)
            out.append(text)
            class_start = False
            continue
        if class_depth:
            if char == "[":
                raise UnsupportedJavaRegex(
                    f"Java regex {pattern!r} nests a character class (a union in Java); "
                    "not evaluated"
                )
            if char == "&" and pattern.startswith("&&", i):
                raise UnsupportedJavaRegex(
                    f"Java regex {pattern!r} intersects character classes (&&); not evaluated"
                )
            if char == "]" and not class_start:
                class_depth = 0
            class_start = False
            out.append(char)
            i += 1
            continue
        if char == "[":
            class_depth = 1
            class_start = True
            out.append(char)
            if pattern.startswith("[^", i):
                out.append("^")
                i += 1
            i += 1
            continue
        if char == "{" and not _QUANTIFIER.match(pattern, i):
            # Python reads a stray brace as a literal; Java throws "Illegal repetition".
            raise InvalidJavaRegex(f"invalid Java regex {pattern!r}: illegal repetition at {i}")
        if char == "(" and pattern.startswith("(?", i):
            text, i = _translate_group_opening(pattern, i)
            out.append(text)
            continue
        out.append(char)
        i += 1
    if class_depth:
        raise InvalidJavaRegex(f"invalid Java regex {pattern!r}: unclosed character class")
    return "".join(out)


def _translate_group_opening(pattern: str, i: int) -> tuple[str, int]:
    rest = pattern[i + 2 :]
    if rest.startswith("<") and not rest.startswith(("<=", "<!")):
        end = rest.find(">")
        name = rest[1:end] if end > 0 else ""
        if not re.fullmatch(r"[A-Za-z][A-Za-z0-9]*", name):
            raise InvalidJavaRegex(f"invalid Java regex {pattern!r}: bad group name {name!r}")
        return f"(?P<{name}>", i + 2 + end + 1
    if rest.startswith((":", "=", "!", "<=", "<!", ">")):
        return "(?", i + 2
    flags = re.match(r"[a-zA-Z-]*", rest)
    assert flags is not None
    unknown = set(flags.group()) - _ALLOWED_INLINE_FLAGS
    if unknown:
        raise UnsupportedJavaRegex(
            f"Java regex {pattern!r} uses inline flags {''.join(sorted(unknown))!r}; "
            "only i, m, s and x are evaluated"
        )
    if i > 0 and rest[flags.end() : flags.end() + 1] == ")":
        # Java turns the flags on from here to the end of the group; Python 3.11 only
        # accepts global flags at the very start.
        raise UnsupportedJavaRegex(
            f"Java regex {pattern!r} switches flags mid-pattern; only (?flags) at the start "
            "or scoped (?flags:...) are evaluated"
        )
    return "(?", i + 2


def _translate_escape(pattern: str, i: int, *, inside_class: bool) -> tuple[str, int]:
    """One escape sequence starting at ``pattern[i] == '\\'``: its Python text and the next index."""
    letter = pattern[i + 1]
    if letter == "Q":
        end = pattern.find("\\E", i + 2)
        quoted = pattern[i + 2 :] if end < 0 else pattern[i + 2 : end]
        following = len(pattern) if end < 0 else end + 2
        escaped = "".join(f"\\{c}" if not c.isalnum() else c for c in quoted)
        return escaped, following
    if letter == "E":
        return "", i + 2  # a stray \E is ignored by Java
    if letter in "pP":
        return _translate_property(pattern, i, inside_class=inside_class)
    if letter == "k" and not inside_class:
        match = re.match(r"<([A-Za-z][A-Za-z0-9]*)>", pattern[i + 2 :])
        if match is None:
            raise InvalidJavaRegex(f"invalid Java regex {pattern!r}: \\k needs <name>")
        return f"(?P={match.group(1)})", i + 2 + match.end()
    if letter == "x" and pattern.startswith("{", i + 2):
        end = pattern.find("}", i + 3)
        digits = pattern[i + 3 : end] if end > 0 else ""
        if not re.fullmatch(r"[0-9a-fA-F]{1,6}", digits):
            raise InvalidJavaRegex(f"invalid Java regex {pattern!r}: bad \\x{{...}} escape")
        return re.escape(chr(int(digits, 16))), end + 1
    if letter in _UNSUPPORTED_ESCAPES:
        raise UnsupportedJavaRegex(
            f"Java regex {pattern!r} uses {_UNSUPPORTED_ESCAPES[letter]}; not evaluated"
        )
    simple = _SIMPLE_ESCAPES_INSIDE if inside_class else _SIMPLE_ESCAPES_OUTSIDE
    if letter in simple:
        return simple[letter], i + 2
    if letter == "x" or letter == "u":
        width = 2 if letter == "x" else 4
        digits = pattern[i + 2 : i + 2 + width]
        if not re.fullmatch(f"[0-9a-fA-F]{{{width}}}", digits):
            raise InvalidJavaRegex(f"invalid Java regex {pattern!r}: bad \\{letter} escape")
        return pattern[i : i + 2 + width], i + 2 + width
    if letter.isalpha() and letter not in _PY_SAME_ESCAPES:
        raise InvalidJavaRegex(
            f"invalid Java regex {pattern!r}: illegal escape sequence \\{letter}"
        )
    return pattern[i : i + 2], i + 2


def _translate_property(pattern: str, i: int, *, inside_class: bool) -> tuple[str, int]:
    negated = pattern[i + 1] == "P"
    if pattern.startswith("{", i + 2):
        end = pattern.find("}", i + 3)
        if end < 0:
            raise InvalidJavaRegex(f"invalid Java regex {pattern!r}: unclosed character family")
        name = pattern[i + 3 : end]
        following = end + 1
    else:
        name = pattern[i + 2 : i + 3]
        following = i + 3
    members = _POSIX_CLASSES.get(name) or _POSIX_CLASSES.get(name.removeprefix("Is"))
    if members is None:
        raise UnsupportedJavaRegex(
            f"Java regex {pattern!r} uses the property \\{pattern[i + 1]}{{{name}}}; "
            "only POSIX and java* classes are evaluated"
        )
    if inside_class:
        if negated:
            raise UnsupportedJavaRegex(
                f"Java regex {pattern!r} negates a property inside a character class; not evaluated"
            )
        return members, following
    return (f"[^{members}]" if negated else f"[{members}]"), following


# A parsed Java replacement: literal text and group references (an int or a name).
_ReplacementPart = str | int | tuple[str]


def parse_java_replacement(replacement: str, pattern: re.Pattern[str]) -> list[_ReplacementPart]:
    """Split a Java replacement string into literals and group references, as Matcher does.

    ``\\x`` is the literal ``x``; ``${name}`` a named group; ``$`` followed by digits the
    group with the longest number that exists (``$12`` is group 1 then ``"2"`` when there is
    no group 12). Raises InvalidJavaRegex where Java throws (a dangling ``\\`` or ``$``, an
    unknown group).
    """
    parts: list[_ReplacementPart] = []
    literal: list[str] = []
    i = 0
    while i < len(replacement):
        char = replacement[i]
        if char == "\\":
            if i + 1 >= len(replacement):
                raise InvalidJavaRegex(
                    f"replacement {replacement!r}: character to be escaped is missing"
                )
            literal.append(replacement[i + 1])
            i += 2
            continue
        if char != "$":
            literal.append(char)
            i += 1
            continue
        if literal:
            parts.append("".join(literal))
            literal = []
        reference, i = _group_reference(replacement, i + 1, pattern)
        parts.append(reference)
    if literal:
        parts.append("".join(literal))
    return parts


def _group_reference(
    replacement: str, i: int, pattern: re.Pattern[str]
) -> tuple[int | tuple[str], int]:
    if i >= len(replacement):
        raise InvalidJavaRegex(
            f"replacement {replacement!r}: illegal group reference: group index is missing"
        )
    if replacement[i] == "{":
        end = replacement.find("}", i)
        name = replacement[i + 1 : end] if end > 0 else ""
        if not re.fullmatch(r"[A-Za-z][A-Za-z0-9]*", name):
            raise InvalidJavaRegex(f"replacement {replacement!r}: illegal named group reference")
        if name not in pattern.groupindex:
            raise InvalidJavaRegex(f"replacement {replacement!r}: no group with name {{{name}}}")
        return (name,), end + 1
    if not replacement[i].isdigit():
        raise InvalidJavaRegex(f"replacement {replacement!r}: illegal group reference")
    number = int(replacement[i])
    if number > pattern.groups:
        raise InvalidJavaRegex(f"replacement {replacement!r}: no group {number}")
    i += 1
    while i < len(replacement) and replacement[i].isdigit():
        longer = number * 10 + int(replacement[i])
        if longer > pattern.groups:
            break
        number = longer
        i += 1
    return number, i


def _expand(parts: Iterable[_ReplacementPart], match: re.Match[str]) -> str:
    out = []
    for part in parts:
        if isinstance(part, str):
            out.append(part)
        else:
            group = match.group(part if isinstance(part, int) else part[0])
            out.append(group or "")  # Java appends nothing for a group that did not take part
    return "".join(out)


def split_java_regex_list(value: str) -> list[str]:
    """Split a comma-separated list of Java regexes as Debezium's ``Strings.listOfRegex``
    (``RegExSplitter``) does.

    Every comma splits, except one escaped as ``\\,`` (a backslash escapes the character after
    it, which stays as written): a comma inside ``{m,n}``, ``[...]`` or ``(...)`` splits too,
    so ``t{1,3}`` is the two invalid regexes ``t{1`` and ``3}`` and Debezium refuses the list.
    Entries are trimmed, then ``\\,`` becomes ``,``; empty entries are dropped. A trailing
    lone backslash raises InvalidJavaRegex ("Unterminated escape sequence").
    """
    tokens: list[str] = []
    start = 0
    i = 0
    while i < len(value):
        if value[i] == "\\":
            if i + 1 >= len(value):
                raise InvalidJavaRegex(
                    f"regex list {value!r}: unterminated escape sequence at the end of the string"
                )
            i += 2
            continue
        if value[i] == ",":
            tokens.append(value[start:i])
            start = i + 1
        i += 1
    tokens.append(value[start:])
    entries = (token.strip().replace("\\,", ",") for token in tokens if token)
    return [entry for entry in entries if entry]
