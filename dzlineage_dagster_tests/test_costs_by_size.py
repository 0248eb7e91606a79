"""What one change costs does not grow with the registry (issue 21): counted from the sandbox's
call log at two registry sizes, never timed.

After a first sync, one schema gets a new version. Both paths then list the registry once
(``ceil(N / 100)`` ListSchemas: the sensor's tick, or the headless sync) and make a number of
other calls that must not grow with N: the headless sync reads the records of the registry
cursor's changed bucket, not every mapping; the Dagster run over the changed topic's partition
looks that topic up by name instead of listing the registry again. Under both SSM layouts.
"""

from __future__ import annotations

import math

import pytest

from benchmarks.scenarios import changed_topic
from benchmarks.synthetic_platform import register_new_version, seed_synthetic_platform
from benchmarks.systems import environment, make_system, pointed_at
from dzlineage_dagster.core.catalog.discovery import UNKNOWN_SWEEP_SIZE
from dzlineage_dagster.core.mapping.pack import ROOT_BUCKET
from dzlineage_dagster.resources.ssm_mapping import NAMES_PER_GET_PARAMETERS
from dzlineage_dagster.sync.catalog.mapping_store import PACK_FOLDER

#: Two registry sizes: five times as many topics, five times the listing, no more of the rest.
SIZES = (40, 200)
#: Calls the larger registry may make beyond the smaller one's, outside the listing: the
#: changed topic's cursor bucket may hold one or two more topics (their records by name).
SLACK = 2
#: The packed mapping is read level by level (a bucket only below one that overflowed), so
#: each level the larger registry's buckets have more may cost a round of GetParameters for
#: the version sweep's topics: a logarithm of N, bounded by the chain's 8 levels.
READS_PER_LEVEL = math.ceil(UNKNOWN_SWEEP_SIZE / NAMES_PER_GET_PARAMETERS)


def one_new_version_calls(sandbox, system_name: str, topics: int, layout: str):
    sandbox.control.reset()
    platform = seed_synthetic_platform(sandbox.endpoint_url, topics)
    with pointed_at(platform), environment({"DZLINEAGE_SSM_MAPPING_LAYOUT": layout}):
        system = make_system(system_name, platform)
        first = system.sync()
        assert first.ok, first.detail
        register_new_version(platform, changed_topic(platform))
        sandbox.control.clear_calls()
        outcome = system.sync()
        assert outcome.ok, outcome.detail
    return sandbox.control.call_counts(), mapping_levels(sandbox)


def mapping_levels(sandbox) -> int:
    """How many levels of buckets the packed mapping holds (0: none)."""
    pages = sandbox.client("ssm").get_paginator("describe_parameters").paginate()
    buckets = [
        name.rsplit("/", 1)[1]
        for page in pages
        for name in (parameter["Name"] for parameter in page["Parameters"])
        if f"/{PACK_FOLDER}/{ROOT_BUCKET}" in name
    ]
    return max(map(len, buckets), default=0)


@pytest.mark.parametrize("layout", ["packed", "per-topic"])
@pytest.mark.parametrize("system_name", ["sync", "sensor+job"])
def test_one_new_version_costs_the_listing_and_a_constant(sandbox, system_name, layout):
    beyond_listing, levels = {}, {}
    for topics in SIZES:
        calls, levels[topics] = one_new_version_calls(sandbox, system_name, topics, layout)
        # One listing: the headless sync's, or the sensor's tick (the run does not list).
        assert calls[("glue", "ListSchemas")] == math.ceil(topics / 100), calls
        assert calls[("ssm", "GetParametersByPath")] == 0, "every mapping was read"
        # The read-back of its two events reads them by id (GetLineageEvent), not the domain's
        # listing since the sync started, which held the first sync's 2N events; the failures'
        # listing and the look for foreign runs (down to the sync's newest run) are a page each.
        assert calls[("datazone", "ListLineageEvents")] <= 2, calls
        beyond_listing[topics] = sum(calls.values()) - calls[("glue", "ListSchemas")]
        assert calls[("datazone", "CreateAssetRevision")] == 1
    # The layout setting reached the sync (a Dagster run reads it when the code loads).
    assert all((level > 0) == (layout == "packed") for level in levels.values()), levels
    small, large = (beyond_listing[n] for n in SIZES)
    deeper = levels[SIZES[1]] - levels[SIZES[0]]
    assert large <= small + SLACK + READS_PER_LEVEL * deeper, (beyond_listing, levels)
