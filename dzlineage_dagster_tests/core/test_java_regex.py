from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dzlineage_dagster.core.connectors.java_regex import (
    InvalidJavaRegex,
    UnsupportedJavaRegex,
    compile_java_regex,
    split_java_regex_list,
)


@pytest.mark.parametrize(
    ("pattern", "text", "expected"),
    [
        # matches() is a full match: a prefix or an inner match is not enough.
        ("shop\\.inventory\\..*", "shop.inventory.customers", True),
        ("shop\\.inventory", "shop.inventory.customers", False),
        ("inventory", "shop.inventory.customers", False),
        ("a|ab", "ab", True),
        # Java's \d and \w are ASCII-only by default.
        ("t\\d+", "t42", True),
        ("t\\d+", "t\u0664\u0662", False),
        ("\\w+", "caf\u00e9", False),
        # POSIX and java.lang.Character classes.
        ("\\p{Alpha}+_\\p{Digit}{2}", "orders_24", True),
        ("\\p{Lower}+", "Orders", False),
        ("[\\p{Alnum}_]+", "order_lines_2", True),
        ("\\P{Digit}+", "abc", True),
        ("\\P{Digit}+", "ab1", False),
        ("\\p{javaLowerCase}+", "abc", True),
        # "Is" before a POSIX name is the same class; IsAlphabetic is a name of its own.
        ("\\p{IsAlpha}+", "orders", True),
        ("\\p{IsAlpha}+", "orders2", False),
        ("\\p{IsAlphabetic}+\\p{IsDigit}", "orders2", True),
        # A brace earlier in the pattern does not end the property's name.
        ("x{2}\\p{Alpha}+", "xxab", True),
        # Named groups and back references.
        ("(?<schema>[a-z]+)\\.\\k<schema>", "sales.sales", True),
        ("(?<schema>[a-z]+)\\.\\k<schema>", "sales.other", False),
        ("(?<Db1>[a-z]+)\\.(?<Table2>[a-z]+)\\.\\k<Table2>", "shop.orders.orders", True),
        # Look-behinds are not named groups.
        ("[a-z]+(?<=s)", "orders", True),
        ("[a-z]+(?<=s)", "order", False),
        ("[a-z]+(?<!s)", "order", True),
        ("[a-z]+(?<!s)", "orders", False),
        # Quoting and possessive / atomic constructs (native in Python 3.11).
        ("\\Qshop.sales\\E\\..+", "shop.sales.orders", True),
        ("\\Qshop.sales\\E\\..+", "shopXsales.orders", False),
        ("a*+a", "aaa", False),
        ("(?>a+)b", "aaab", True),
        # \z is the absolute end; a ']' right after '[' is a literal.
        ("abc\\z", "abc", True),
        ("[]a]+", "]a]", True),
        ("(?i)ORDERS", "orders", True),
        ("public\\.(?i:ORDERS)", "public.orders", True),
        ("PUBLIC\\.(?i:ORDERS)", "public.orders", False),
    ],
)
def test_matches_is_a_full_match_with_java_classes(pattern: str, text: str, expected: bool) -> None:
    assert compile_java_regex(pattern).matches(text) is expected


def test_case_insensitive_compilation_is_ascii_only_like_java() -> None:
    pattern = compile_java_regex("public\\.ORDERS", case_insensitive=True)
    assert pattern.matches("PUBLIC.orders")
    assert not compile_java_regex("\u00e9", case_insensitive=True).matches("\u00c9")


@pytest.mark.parametrize(
    ("pattern", "text", "replacement", "first", "every"),
    [
        ("(.*)\\.(.*)\\.(.*)", "shop.sales.orders", "$1_$3", "shop_orders", "shop_orders"),
        ("(?<p>[^.]+)\\.(.*)", "shop.sales.orders", "${p}-all", "shop-all", "shop-all"),
        # An escaped dollar and backslash are literals.
        ("(a)", "a", "\\$1\\\\", "$1\\", "$1\\"),
        # $12 is group 1 then '2' when the pattern has no group 12.
        ("(a)(b)", "ab", "$12", "a2", "a2"),
        # A group that did not take part appends nothing.
        ("(a)|(b)", "b", "[$1]", "[]", "[]"),
        # replaceFirst searches: after a full match it may still replace a shorter match.
        ("a|ab", "ab", "X", "Xb", "Xb"),
        ("o", "foo", "0", "f0o", "f00"),
        ("x*", "abc", "-", "-abc", "-a-b-c-"),
    ],
)
def test_java_replacement_strings(
    pattern: str, text: str, replacement: str, first: str, every: str
) -> None:
    compiled = compile_java_regex(pattern)
    assert compiled.replace_first(text, replacement) == first
    assert compiled.replace_all(text, replacement) == every


@pytest.mark.parametrize(
    ("pattern", "replacement"),
    [("(a)", "$2"), ("(a)", "$"), ("(a)", "\\"), ("(a)", "${missing}"), ("(a)", "$x")],
)
def test_replacements_java_rejects_raise(pattern: str, replacement: str) -> None:
    with pytest.raises(InvalidJavaRegex, match="replacement"):
        compile_java_regex(pattern).replace_first("a", replacement)


@pytest.mark.parametrize(
    "pattern",
    [
        "[a-z&&[^aeiou]]+",
        "[a[b]]",
        "\\p{IsLatin}+",
        "\\p{L}+",
        "\\Gabc",
        "\\R",
        "(?U)\\w+",
        "abc(?i)def",
        "[\\P{Digit}x]",
    ],
)
def test_features_that_cannot_be_evaluated_are_reported(pattern: str) -> None:
    with pytest.raises(UnsupportedJavaRegex, match=re.escape(repr(pattern))):
        compile_java_regex(pattern)


@pytest.mark.parametrize("pattern", ["(abc", "abc\\", "[abc", "\\y", "(?<1a>x)", "a{2"])
def test_invalid_patterns_raise_with_the_pattern(pattern: str) -> None:
    with pytest.raises(InvalidJavaRegex, match=re.escape(repr(pattern))):
        compile_java_regex(pattern)


@pytest.mark.parametrize(
    ("pattern", "error", "message"),
    [
        ("(?<abc", InvalidJavaRegex, "invalid Java regex '(?<abc': bad group name ''"),
        ("(?<>x)", InvalidJavaRegex, "invalid Java regex '(?<>x)': bad group name ''"),
        (
            "\\p{Alpha",
            InvalidJavaRegex,
            "invalid Java regex '\\\\p{Alpha': unclosed character family",
        ),
        (
            "(?U)\\w+",
            UnsupportedJavaRegex,
            "Java regex '(?U)\\\\w+' uses inline flags 'U'; only i, m, s and x are evaluated",
        ),
        (
            "(?Uid)x",
            UnsupportedJavaRegex,
            "Java regex '(?Uid)x' uses inline flags 'Ud'; only i, m, s and x are evaluated",
        ),
        (
            "x(?i)y",
            UnsupportedJavaRegex,
            "Java regex 'x(?i)y' switches flags mid-pattern; only (?flags) at the start or "
            "scoped (?flags:...) are evaluated",
        ),
        (
            "\\pL+",
            UnsupportedJavaRegex,
            "Java regex '\\\\pL+' uses the property \\p{L}; only POSIX and java* classes are "
            "evaluated",
        ),
        (
            "a\\P{IsLatin}",
            UnsupportedJavaRegex,
            "Java regex 'a\\\\P{IsLatin}' uses the property \\P{IsLatin}; only POSIX and java* "
            "classes are evaluated",
        ),
    ],
)
def test_errors_say_what_in_the_pattern_is_wrong(pattern: str, error: type, message: str) -> None:
    with pytest.raises(error) as raised:
        compile_java_regex(pattern)
    assert str(raised.value) == message


@pytest.mark.parametrize(
    ("value", "entries"),
    [
        ("inventory.customers,sales.orders", ["inventory.customers", "sales.orders"]),
        (" public.a , public.b ,", ["public.a", "public.b"]),
        # RegExSplitter splits at every unescaped comma, inside braces, brackets and groups too.
        ("public.t{1,3},x", ["public.t{1", "3}", "x"]),
        ("public.[a,b],x", ["public.[a", "b]", "x"]),
        ("public.(a|b,c),x", ["public.(a|b", "c)", "x"]),
        ("public.t{1\\,3},x", ["public.t{1,3}", "x"]),
        ("a\\,b,c", ["a,b", "c"]),
        ("public\\.orders", ["public\\.orders"]),
    ],
)
def test_regex_lists_split_like_debezium(value: str, entries: list[str]) -> None:
    assert split_java_regex_list(value) == entries


@given(st.text(alphabet=st.characters(codec="ascii"), max_size=30))
def test_quoted_text_matches_itself_only(text: str) -> None:
    if "\\E" in text:
        return
    pattern = compile_java_regex(f"\\Q{text}\\E")
    assert pattern.matches(text)
    assert not pattern.matches(text + "x")


@given(st.from_regex(r"[a-z]{1,8}(\.[a-z_]{1,8}){1,3}", fullmatch=True))
def test_literal_replacement_with_groups_roundtrips(topic: str) -> None:
    pattern = compile_java_regex("([^.]+)\\.(.*)")
    assert pattern.replace_first(topic, "$2.$1") == ".".join(
        [topic.split(".", 1)[1], topic.split(".", 1)[0]]
    )


@pytest.mark.parametrize(
    ("pattern", "text", "expected"),
    [
        # Hex and Unicode escapes, inside and outside classes.
        ("\\x{41}\\x{1F600}?b", "Ab", True),
        ("\\x{41}\\x{42}", "AB", True),
        ("\\x41\\u0042", "AB", True),
        ("[\\x41-\\x43]+", "ABC", True),
        ("[\\x41-\\x43]+", "ABD", False),
        ("a\\eb", "a\x1bb", True),
        ("[\\e]", "\x1b", True),
        # \h: horizontal whitespace, as a class outside and as members inside.
        ("a\\hb", "a\u00a0b", True),
        ("a\\hb", "a\nb", False),
        ("[\\hx]+", " x\t", True),
        # A ']' right after '[^' is a literal; the class ends at the next one.
        ("[^]\\h]+", "ab", True),
        ("[^]\\h]+", "a b", False),
        ("[\\d]\\h", "1 ", True),
        ("[a&b]+", "a&b", True),
        # \Q without \E quotes to the end; a stray \E is ignored.
        ("\\Qa.b", "a.b", True),
        ("\\Qa.b", "axb", False),
        ("\\Qa.\\Eb\\Q.c\\E", "a.b.c", True),
        ("ab\\E\\.c", "ab.c", True),
        ("abc\\Z", "abc", True),
        ("(?<n1>a)\\k<n1>b", "aab", True),
    ],
)
def test_escapes_and_classes_translate_like_java(pattern: str, text: str, expected: bool) -> None:
    assert compile_java_regex(pattern).matches(text) is expected


@pytest.mark.parametrize(
    ("pattern", "error", "message"),
    [
        ("\\x{G}", InvalidJavaRegex, "invalid Java regex '\\\\x{G}': bad \\x{...} escape"),
        ("\\x{}", InvalidJavaRegex, "invalid Java regex '\\\\x{}': bad \\x{...} escape"),
        ("\\x{41", InvalidJavaRegex, "invalid Java regex '\\\\x{41': bad \\x{...} escape"),
        ("\\x{1234567}", InvalidJavaRegex, "invalid Java regex '\\\\x{1234567}': bad \\x{...} escape"),
        ("\\xZ1", InvalidJavaRegex, "invalid Java regex '\\\\xZ1': bad \\x escape"),
        ("\\u12", InvalidJavaRegex, "invalid Java regex '\\\\u12': bad \\u escape"),
        ("\\k1", InvalidJavaRegex, "invalid Java regex '\\\\k1': \\k needs <name>"),
        ("[a-z&&b]", UnsupportedJavaRegex,
         "Java regex '[a-z&&b]' intersects character classes (&&); not evaluated"),
        ("[a[b]]", UnsupportedJavaRegex,
         "Java regex '[a[b]]' nests a character class (a union in Java); not evaluated"),
    ],
)  # fmt: skip
def test_escape_errors_say_what_is_wrong(pattern: str, error: type, message: str) -> None:
    with pytest.raises(error) as raised:
        compile_java_regex(pattern)
    assert str(raised.value) == message


@pytest.mark.parametrize(
    ("pattern", "replacement", "text", "expected"),
    [
        ("(a)(b)(c)(d)(e)(f)(g)(h)(i)(j)(k)", "$11$10$1", "abcdefghijk", "kja"),
        ("(a)(b)(c)(d)(e)(f)(g)(h)(i)(j)", "$11", "abcdefghij", "a1"),
        ("(?<n1>a)(?<n2>b)", "${n2}${n1}", "ab", "ba"),
    ],
)
def test_group_references_take_the_longest_existing_number_and_names(
    pattern: str, replacement: str, text: str, expected: str
) -> None:
    assert compile_java_regex(pattern).replace_first(text, replacement) == expected


@pytest.mark.parametrize(
    ("replacement", "message"),
    [
        ("${n", "replacement '${n': illegal named group reference"),
        ("${}", "replacement '${}': illegal named group reference"),
        ("${1a}", "replacement '${1a}': illegal named group reference"),
        ("${Other}}", "replacement '${Other}}': no group with name {Other}"),
        ("$", "replacement '$': illegal group reference: group index is missing"),
        ("$x", "replacement '$x': illegal group reference"),
        ("$2", "replacement '$2': no group 2"),
        ("a\\", "replacement 'a\\\\': character to be escaped is missing"),
    ],
)
def test_replacement_errors_say_what_is_wrong(replacement: str, message: str) -> None:
    with pytest.raises(InvalidJavaRegex) as raised:
        compile_java_regex("(?<n>a)").replace_first("a", replacement)
    assert str(raised.value) == message


def test_escaped_list_separators_and_trailing_backslashes_split_like_debezium() -> None:
    assert split_java_regex_list("a\\\\,b") == ["a\\\\", "b"]
    # RegExSplitter throws "Unterminated escape sequence at the end of the string".
    with pytest.raises(InvalidJavaRegex, match="unterminated escape sequence"):
        split_java_regex_list("a,b\\")
    assert split_java_regex_list("(a)),b") == ["(a))", "b"]
    assert split_java_regex_list("((a),b),c") == ["((a)", "b)", "c"]
