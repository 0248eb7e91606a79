"""The README is a start, docs/ the reference: every setting and every command is documented
there, and every relative link of either resolves."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from pydantic.fields import FieldInfo

from dzlineage_dagster.cli import build_parser
from dzlineage_dagster.relay.settings import RelaySettings
from dzlineage_dagster.resources.base import AwsClientResource
from dzlineage_dagster.settings import AWS_OPTION_VARIABLES, LineageSettings, env_name

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
PAGES = sorted((ROOT / "docs").glob("*.md"))
#: A newcomer's first ten minutes: what it is, the two commands, what they see, where to go next.
README_MAX_LINES = 200


def _reference_text() -> str:
    return "\n".join(page.read_text() for page in PAGES)


def _settings() -> list[str]:
    names = [env_name(field) for field in LineageSettings.model_fields]
    names += [env_name(field) for field in RelaySettings.model_fields]
    return sorted({*names, *AWS_OPTION_VARIABLES.values()})


def _commands() -> list[str]:
    parser = build_parser()
    (subcommands,) = (a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
    return sorted(subcommands.choices)


def test_the_readme_stays_a_start():
    lines = README.read_text().count("\n")
    assert lines <= README_MAX_LINES, f"README.md has {lines} lines: move reference to docs/"
    for page in PAGES:
        assert f"docs/{page.name}" in README.read_text(), f"README links no docs/{page.name}"


@pytest.mark.parametrize("variable", _settings())
def test_every_setting_is_documented(variable):
    assert re.search(rf"`{variable}`", _reference_text()), f"{variable} is in no docs/ page"


@pytest.mark.parametrize("command", _commands())
def test_every_command_is_documented(command):
    assert re.search(rf"`dzlineage {re.escape(command)}\b", _reference_text()), (
        f"`dzlineage {command}` is in no docs/ page"
    )


@pytest.mark.parametrize("page", [README, *PAGES], ids=lambda p: p.name)
def test_relative_links_resolve(page):
    for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", page.read_text()):
        if re.match(r"[a-z]+://|mailto:", target):
            continue
        assert (page.parent / target).exists(), f"{page.name} links {target}, which is missing"


def test_the_readme_s_second_shell_covers_every_command_or_says_it_is_for_later():
    """A newcomer with the demo running learns every command from the README: shown in the
    second shell's block, or named as one for later (a new command has to be placed)."""
    section = README.read_text().split("## From a second shell", 1)[1].split("\n## ", 1)[0]
    block, _, after = section.partition("```bash")[2].partition("```")
    shown = set(re.findall(r"dzlineage ([a-z-]+)", block))
    for_later = set(re.findall(r"`([a-z-]+)` \(", after))
    # The first shell's commands: `scripts/demo` runs them.
    assert set(_commands()) - {"sandbox", "demo"} == shown | for_later
    assert {"doctor", "sync", "trace", "impact", "orphans", "settings"} <= shown


#: Settings unset in the code whose default the relay derives at start from another setting
#: (the docs name that setting).
DERIVED_DEFAULTS = {"DZLINEAGE_RELAY_GLUE_ACCOUNTS": "`DZLINEAGE_MSK_CLUSTER_ARN`"}


def _documented_default(field: FieldInfo) -> str:
    """A setting's default as a docs table writes it."""
    if field.is_required():
        return "required"
    default = field.get_default(call_default_factory=True)
    if default is None:
        return "unset"
    if isinstance(default, bool):
        return f"`{str(default).lower()}`"
    if isinstance(default, list):
        default = ",".join(default)  # a comma list, as its variable takes it
    if isinstance(default, float) and default.is_integer():
        default = int(default)
    return f"`{default}`"


def _defaults_in_code() -> dict[str, str]:
    # The relay shares some of the sync's settings: the sync's definition is the one documented.
    fields = {
        **{env_name(name): f for name, f in RelaySettings.model_fields.items()},
        **{env_name(name): f for name, f in LineageSettings.model_fields.items()},
        **{
            variable: AwsClientResource.model_fields[name]
            for name, variable in AWS_OPTION_VARIABLES.items()
        },
    }
    return {variable: _documented_default(field) for variable, field in fields.items()}


def _defaults_in_docs() -> list[tuple[str, str, str]]:
    """(page, variable, default) of every settings table row: `| `DZLINEAGE_X` | default |`."""
    rows = []
    for page in PAGES:
        for variable, default in re.findall(
            r"^\| `(DZLINEAGE_[A-Z0-9_]+)` \| ([^|]+?) \|", page.read_text(), re.MULTILINE
        ):
            rows.append((page.name, variable, default))
    return rows


def test_the_docs_give_each_setting_the_default_the_code_has():
    in_code = _defaults_in_code()
    rows = [(page, v, d) for page, v, d in _defaults_in_docs() if v in in_code]
    assert rows, "no settings table found in docs/"
    wrong = [
        f"{page}: {variable} documented as {default}, the code's default is {in_code[variable]}"
        for page, variable, default in rows
        if default != in_code[variable]
        and not (variable in DERIVED_DEFAULTS and DERIVED_DEFAULTS[variable] in default)
    ]
    assert not wrong, "\n".join(wrong)
