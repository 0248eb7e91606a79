"""The suite fails on what the code does, never on how busy the machine is."""

from __future__ import annotations

import re
from pathlib import Path

from hypothesis import HealthCheck, settings

TESTS = Path(__file__).parent


def test_every_hypothesis_test_runs_without_a_deadline_or_a_too_slow_check() -> None:
    # conftest.py loads the profile for every test; a test module imported here sees it too.
    assert settings.default.deadline is None
    assert HealthCheck.too_slow in settings.default.suppress_health_check


def test_no_test_sets_a_deadline_of_its_own() -> None:
    deadline = re.compile(r"\bdeadline=(?!None\b)")
    offenders = [
        f"{path.relative_to(TESTS)}:{number}"
        for path in sorted(TESTS.rglob("*.py"))
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if deadline.search(line)
    ]
    assert offenders == []
