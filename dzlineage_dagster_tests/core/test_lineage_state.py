"""One job per hop, and what the mapping record keeps of the lineage posted: the jobs to close,
run ids that replay a rerun but never an earlier state's post."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dzlineage_dagster.core.lineage.openlineage import HOP_JOB_SEPARATOR, hop_job
from dzlineage_dagster.core.lineage.state import (
    HopJob,
    PostedLineage,
    after_posting,
    closing_datasets,
    jobs_to_close,
    next_base,
)
from dzlineage_dagster.core.mapping.ssm_names import MAX_PARAMETER_VALUE_LENGTH

topics = st.text(
    alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-",
    min_size=1,
    max_size=249,
)
owners = st.text(min_size=1, max_size=128)
jobs = st.builds(HopJob, st.sampled_from(["source", "sink"]), st.text(min_size=1), owners)


@given(owners, topics, owners, topics)
def test_a_hop_s_job_name_is_unique_per_connector_and_topic(owner, topic, other_owner, other):
    namespace, name = hop_job(owner, topic)
    assert namespace == "kafka-connect"
    assert name.rsplit(HOP_JOB_SEPARATOR, 1) == [owner, topic]
    if (owner, topic) != (other_owner, other):
        assert hop_job(other_owner, other) != (namespace, name)


def test_a_hop_s_job_reads_as_its_connector_and_topic():
    assert hop_job("shop-iceberg-sink", "shop.sales.orders") == (
        "kafka-connect",
        "shop-iceberg-sink/shop.sales.orders",
    )
    assert hop_job("iceberg-sink", "t", "dzlineage") == ("dzlineage", "iceberg-sink/t")
    with pytest.raises(ValueError, match="topic 'a/b' cannot name a hop's job"):
        hop_job("sink", "a/b")
    with pytest.raises(ValueError, match=r"topic 't'.*needs its connector's name"):
        hop_job("", "t")


@given(st.text(), st.text(), st.lists(jobs, max_size=6).map(tuple))
def test_the_posted_state_reads_back_as_written(content, base, posted_jobs):
    state = PostedLineage(content, base, posted_jobs)
    assert PostedLineage.decode(state.encode()) == state


def test_a_record_of_the_earlier_layout_reads_as_its_run_ids():
    legacy = PostedLineage.decode("run-1,run-2")
    assert legacy is not None and legacy.run_ids("t") == ["run-1", "run-2"] and not legacy.jobs
    assert PostedLineage.decode("") is None
    for broken in ("{", '{"v":1}', '{"v":2,"content":"c","base":"b","jobs":[["up","n","o"]]}'):
        with pytest.raises(ValueError, match=r"posted lineage state .* is not readable"):
            PostedLineage.decode(broken)


def test_a_record_with_many_long_jobs_stays_within_ssm_s_standard_tier():
    # Eight hops of 128-character connectors: the topic is the record's, not repeated per job.
    many = tuple(HopJob("sink", "kafka-connect", "c" * 127 + str(i)) for i in range(8))
    encoded = PostedLineage("0" * 36, "1" * 36, many).encode()
    assert len(encoded) < MAX_PARAMETER_VALUE_LENGTH // 3


def test_runs_replay_a_rerun_but_never_an_earlier_state_s_post():
    first = PostedLineage("A", next_base("A", None))
    assert next_base("A", first) == first.base  # unchanged (or a rerun): the same runs
    closed = PostedLineage("B", next_base("B", first))
    back = PostedLineage("A", next_base("A", closed))
    closed_again = PostedLineage("B", next_base("B", back))
    back_again = next_base("A", closed_again)
    bases = [first.base, closed.base, back.base, closed_again.base, back_again]
    assert len(set(bases)) == len(bases)  # a sink re-added (A again) posts new runs each time
    legacy = PostedLineage.decode("run-1")
    assert next_base("A", legacy) not in bases


def test_jobs_whose_hop_is_gone_are_closed_on_their_side():
    source = HopJob("source", "kafka-connect", "shop-debezium-source")
    old_sink = HopJob("sink", "kafka-connect", "shop-archive-sink")
    new_sink = HopJob("sink", "kafka-connect", "shop-archive-sink-v2")
    previous = PostedLineage("A", "a", (source, old_sink))
    assert jobs_to_close(previous, [source, new_sink]) == (old_sink,)
    assert jobs_to_close(previous, []) == (source, old_sink)
    assert jobs_to_close(None, [source]) == ()
    topic = ("kafka://b-1:9098", "shop.archive.orders")
    assert closing_datasets("sink", topic) == ((topic,), ())
    assert closing_datasets("source", topic) == ((), (topic,))


destinations = st.lists(st.sampled_from(["datazone", "glue"]), min_size=1, unique=True)


@given(st.text(), st.text(), st.lists(jobs, max_size=4).map(tuple), destinations, destinations)
def test_a_state_with_destinations_reads_back_as_written(content, base, now, names, failed):
    posted = PostedLineage(content, base, now)
    state = after_posting(posted, None, names, set(failed))
    if state is None:
        assert set(names) <= set(failed)  # reached none: the record keeps what it had
        return
    assert PostedLineage.decode(state.encode()) == state
    assert state.holders == tuple(n for n in names if n not in failed)
    for name in names:
        # A destination that failed has the new jobs to close if they go, and posts it all again.
        assert set(state.open_jobs(name)) == set(now)
        assert state.holds(name, content) == (name not in failed)


def test_datazone_alone_writes_the_record_as_before_destinations():
    posted = PostedLineage("c", "b", (HopJob("sink", "kafka-connect", "s"),))
    state = after_posting(posted, None, ["datazone"], ())
    assert state is not None and state.encode() == posted.encode()
    assert '"to"' not in state.encode() and '"lag"' not in state.encode()


def test_a_destination_that_failed_closes_what_it_had_and_the_others_post_nothing():
    old, new = HopJob("sink", "kafka-connect", "old"), HopJob("sink", "kafka-connect", "new")
    first = after_posting(PostedLineage("c1", "b1", (old,)), None, ["datazone", "glue"], ())
    assert first is not None and first.holders == ("datazone", "glue")
    # The sink moved; DataZone took it, Glue refused it.
    second = after_posting(PostedLineage("c2", "b2", (new,)), first, ["datazone", "glue"], {"glue"})
    assert second is not None and second.holders == ("datazone",)
    assert second.holds("datazone", "c2") and not second.holds("glue", "c2")
    assert jobs_to_close(second, [new], "datazone") == ()
    assert jobs_to_close(second, [new], "glue") == (old,)
    # A destination never posted to (added to the setting later) has nothing open.
    assert jobs_to_close(second, [new], "elsewhere") == ()
    assert after_posting(PostedLineage("c3", "b3", ()), second, ["glue"], {"glue"}) is None
