"""The README is a start, docs/ the reference: every setting and every command is documented
there, and every relative link of either resolves."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from dzlineage_dagster.cli import build_parser
from dzlineage_dagster.relay.settings import RelaySettings
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
