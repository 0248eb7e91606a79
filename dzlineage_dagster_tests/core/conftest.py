"""Each core test compiles its Java regexes afresh.

``compile_java_regex`` caches per process. Without this, a test would reuse a pattern an
earlier test compiled, so it would not exercise the translation, and mutation testing (which
forks each mutant's tests from a process that already ran the suite) would report every
translation mutant as surviving.
"""

from __future__ import annotations

import pytest

from dzlineage_dagster.core.connectors import java_regex


@pytest.fixture(autouse=True)
def _fresh_java_regex_cache():
    java_regex._compile_cached.cache_clear()
    yield
