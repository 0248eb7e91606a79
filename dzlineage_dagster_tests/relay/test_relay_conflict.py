"""A 409 from PostLineageEvent, whichever it means: the relay counts an event delivered only
when DataZone holds it (the sync's rule, :mod:`dzlineage_dagster.sync.lineage.conflict`)."""

from __future__ import annotations

import json

import pytest
from openlineage.client.event_v2 import OutputDataset, RunState

from benchmarks.relay_process import relay_environment, running_relay
from dzlineage_dagster.core.lineage.relay_events import client_token, parse_event
from dzlineage_dagster.sandbox.server.faults import FaultRule
from dzlineage_dagster_tests.relay.conftest import events_per_run
from dzlineage_dagster_tests.relay.events import run_event, to_json
from dzlineage_dagster_tests.relay.test_relay_spool import runs_of


@pytest.fixture
def lineage_conflict(module_platform, request):
    """The sandbox's reading of PostLineageEvent's 409 for one test, then its default again."""
    module_platform.control.set_ambiguities(lineage_conflict=request.param)
    yield request.param
    module_platform.control.set_ambiguities(lineage_conflict="duplicate")


@pytest.mark.parametrize("lineage_conflict", ["duplicate", "other"], indirect=True)
@pytest.mark.parametrize("spooled", [False, True], ids=["answered", "from-the-spool"])
def test_each_event_is_held_once_whatever_a_409_means(
    module_platform, tmp_path, lineage_conflict, spooled
):
    """Under ``other`` DataZone refuses the first post of each run's event of each type and
    stores nothing: an event the relay took for delivered would be lost."""
    platform = module_platform
    events = runs_of(2)
    with running_relay(relay_environment(platform.environment), tmp_path / "spool.db") as relay:
        if spooled:
            # The first post fails: that event is spooled and the others queue behind it while
            # it waits (202); on a loaded machine the spool's worker may deliver it before the
            # next post arrives, which is then forwarded at once (200).
            platform.control.set_faults(
                FaultRule("datazone", "PostLineageEvent", "server-error", count=1)
            )
            codes = [relay.post(to_json(event).encode(), api_key=None)[0] for event in events]
            assert codes[0] == 202 and set(codes[1:]) <= {200, 202}, codes
            status = relay.wait_until(lambda s: s["spool_depth"] == 0)
            platform.control.clear_faults()
        else:
            answers = [relay.post(to_json(event).encode(), api_key=None) for event in events]
            assert [answer["status"] for _, answer in answers] == ["forwarded"] * len(events)
            status = relay.status()
        log = relay.stop()
    held = events_per_run(platform)
    assert [held[(e.run.runId, e.eventType.value)] for e in events] == [1] * len(events)
    assert (
        status["forwarded"] == len(events) and status["details"].get("refused_by_datazone") is None
    )
    reposted = status["details"].get("conflict_reposted", 0)
    if lineage_conflict == "other":
        assert reposted == len(events)
        assert log.count("DataZone did not hold it: posted again") == len(events), log
    else:
        assert reposted == 0 and "409" not in log


@pytest.mark.parametrize("lineage_conflict", ["duplicate"], indirect=True)
def test_a_409_for_an_event_datazone_holds_is_delivered_without_a_second_copy(
    module_platform, tmp_path, lineage_conflict
):
    """A producer's retry of an event an earlier relay (other rename rules) forwarded under the
    same client token: DataZone refuses the token's reuse with other bytes, and holds the event."""
    platform = module_platform
    event = run_event(
        state=RunState.COMPLETE, outputs=[OutputDataset("s3://lake", "earlier_relay")]
    )
    token = client_token(parse_event(to_json(event).encode()))
    earlier = {**json.loads(to_json(event)), "producer": "https://example.com/earlier-relay"}
    platform.client("datazone").post_lineage_event(
        domainIdentifier=platform.settings.domain_id,
        event=json.dumps(earlier).encode(),
        clientToken=token,
    )
    platform.control.clear_calls()
    with running_relay(relay_environment(platform.environment), tmp_path / "spool.db") as relay:
        status_code, answer = relay.post(to_json(event).encode(), api_key=None)
        status = relay.status()
        log = relay.stop()
    assert (status_code, answer["status"], answer.get("heldAlready")) == (200, "forwarded", True)
    assert events_per_run(platform)[(event.run.runId, event.eventType.value)] == 1
    assert status["details"]["conflict_already_held"] == 1
    assert "DataZone holds it, delivered" in log
    posts = [c.status for c in platform.control.calls() if c.operation == "PostLineageEvent"]
    assert posts == [409], "held: not posted again"
