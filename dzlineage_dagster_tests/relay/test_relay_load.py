"""Hundreds of events from concurrent producers through a relay process, some of its posts
throttled: none lost or doubled. The larger load (3,000 events, 6 producers, its rates and
memory) is `benchmarks/bench_relay.py`'s; the suite keeps a load that still has producers
posting at once and throttled posts spooled and retried. The time goes to the throttles, not
the events: after each one botocore's adaptive retry mode (the default) slows the relay's
client down and speeds it up again over seconds."""

from __future__ import annotations

from benchmarks.bench_relay import Scenario, run_load
from benchmarks.relay_process import API_KEY, relay_environment, running_relay

EVENTS, CLIENTS = 400, 4


def test_concurrent_producers_lose_and_duplicate_nothing(module_platform, tmp_path):
    environment = relay_environment(module_platform.environment, DZLINEAGE_RELAY_API_KEY=API_KEY)
    with running_relay(environment, tmp_path / "spool.db") as relay:
        result = run_load(
            relay,
            module_platform.control,
            module_platform.client("datazone"),
            module_platform.settings.domain_id,
            scenario=Scenario("gzip, 3% throttled", compression="gzip", throttle_rate=0.03),
            events=EVENTS,
            clients=CLIENTS,
        )
        relay.stop()
    assert (result.lost, result.duplicated, result.delivered_once) == (0, 0, EVENTS)
    assert sum(result.answers.values()) == EVENTS
    assert set(result.answers) <= {"forwarded", "spooled"}
    # Throttled posts were spooled and retried (about 12 at this rate; none: 5e-6 likely).
    assert result.answers.get("spooled", 0) > 0, result.answers
    assert result.relay_status["spool_depth"] == 0
    # Each event costs one PostLineageEvent, plus one per throttled attempt.
    posts = result.aws_calls["datazone.PostLineageEvent"]
    assert EVENTS < posts <= EVENTS * 1.1
