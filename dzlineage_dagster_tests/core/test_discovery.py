import gc
import itertools
import json
import weakref
from datetime import datetime, timedelta, timezone

import pytest

from dzlineage_dagster.core.catalog.discovery import diff_against_cursor, registry_topics

ARN = "arn:aws:glue:us-east-1:123456789012:schema/reg/{}"
T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)
T1 = datetime(2026, 1, 2, tzinfo=timezone.utc)


def item(name, updated=T0):
    return {"SchemaName": name, "SchemaArn": ARN.format(name), "UpdatedTime": updated}


def test_key_and_value_schemas_fold_into_one_topic_described_by_the_value():
    topics = registry_topics([item("shop.a.b-key"), item("shop.a.b-value"), item("shop.c.d")])
    assert list(topics) == ["shop.a.b", "shop.c.d"]
    assert topics["shop.a.b"].schema_name == "shop.a.b-value"
    assert topics["shop.a.b"].key_schema_arn == ARN.format("shop.a.b-key")
    assert topics["shop.c.d"].key_schema_arn is None


@pytest.mark.parametrize(
    "names",
    [
        names
        for size in (1, 2, 3)
        for combination in itertools.combinations(("t-value", "t", "t-key"), size)
        for names in itertools.permutations(combination)
    ],
)
def test_a_topic_is_described_by_its_value_schema_else_one_named_as_it_else_its_key(names):
    """Whatever order the listing gives a topic's schemas in."""
    (topic,) = registry_topics([item(name) for name in names]).values()
    describing = next(name for name in ("t-value", "t", "t-key") if name in names)
    assert topic.topic == "t"
    assert topic.schema_name == describing
    has_other_key = "t-key" in names and describing != "t-key"
    assert topic.key_schema_arn == (ARN.format("t-key") if has_other_key else None)


class ListedItem(dict):
    """A `SchemaListItem` that can be watched for release (a plain dict takes no weakref)."""


def test_the_fold_keeps_no_listed_item_so_a_listing_is_held_one_page_at_a_time():
    """The registry's listing is folded as its pages arrive (100,000 schemas: 1,000 pages):
    an item read is released before the next is asked for, only its topic's fields stay."""
    released_before_next: list[bool] = []

    def listing():
        previous = None
        for name in ("shop.a.b-key", "shop.a.b-value", "shop.c.d", "shop.e.f-key"):
            if previous is not None:
                gc.collect()
                released_before_next.append(previous() is None)
            current = ListedItem(item(name))
            previous = weakref.ref(current)
            yield current
            del current

    topics = registry_topics(listing())
    assert list(topics) == ["shop.a.b", "shop.c.d", "shop.e.f"]
    assert topics["shop.a.b"].key_schema_arn == ARN.format("shop.a.b-key")
    assert released_before_next == [True, True, True]


def test_a_new_schema_version_changes_the_token_and_only_that_topic_changes():
    before = registry_topics([item("a"), item("b")])
    seen = {t: info.change_token for t, info in before.items()}
    after = registry_topics([item("a", updated=T1), item("b"), item("c")])
    changes = diff_against_cursor(after, seen)
    assert changes.changed == ["a"]
    assert changes.added == ["c"]
    assert changes.removed == []
    gone = diff_against_cursor(registry_topics([item("a")]), seen)
    assert gone.removed == ["b"]


def test_nothing_changed_means_empty_diff():
    topics = registry_topics([item("a"), item("b")])
    changes = diff_against_cursor(topics, {t: i.change_token for t, i in topics.items()})
    assert (changes.added, changes.changed, changes.removed) == ([], [], [])


def _listed(name: str, updated: str, arn_suffix: str = "") -> dict:
    return {
        "SchemaName": f"{name}-value",
        "SchemaArn": f"arn:aws:glue:us-east-1:123456789012:schema/r/{name}-value{arn_suffix}",
        "UpdatedTime": updated,
    }


def test_the_horizon_cursor_finds_changes_and_stays_small():
    from dzlineage_dagster.core.catalog.discovery import SensorCursor, changed_topics

    old = "2026-01-01T00:00:00+00:00"
    fresh = "2026-03-01T12:00:00+00:00"
    tick = datetime(2026, 3, 1, 12, 1, tzinfo=timezone.utc)
    listing = [_listed(f"db.s.t{i}", old) for i in range(10_000)] + [_listed("db.s.new", fresh)]
    current = registry_topics(listing)
    cursor = SensorCursor.after(current, tick)
    # Only the topic updated within the settling window before the tick is remembered.
    assert cursor.recent == {"db.s.new": current["db.s.new"].change_token}
    assert len(cursor.to_json()) < 200
    assert changed_topics(current, cursor.to_json()) == []
    # A new version moves UpdatedTime past the horizon.
    later = "2026-03-01T12:00:05+00:00"
    moved = registry_topics(
        [*listing[:5], _listed("db.s.t5", later), *listing[6:-1], _listed("db.s.new", fresh)]
    )
    assert changed_topics(moved, cursor.to_json()) == ["db.s.t5"]
    # A change inside the window (a schema recreated under a new ARN) is caught by its token.
    recreated = registry_topics([*listing[:-1], _listed("db.s.new", fresh, arn_suffix="-2")])
    assert changed_topics(recreated, cursor.to_json()) == ["db.s.new"]
    # Ten minutes on, the same listing leaves nothing in the window.
    assert SensorCursor.after(current, tick + timedelta(minutes=11)).recent == {}


def test_the_older_cursor_format_is_still_read():
    from dzlineage_dagster.core.catalog.discovery import changed_topics

    current = registry_topics(
        [_listed("a", "2026-01-01T00:00:00Z"), _listed("b", "2026-01-01T00:00:00Z")]
    )
    legacy = json.dumps({"a": current["a"].change_token, "b": "stale"})
    assert changed_topics(current, legacy) == ["b"]
    assert changed_topics(current, None) == ["a", "b"]


def test_a_topic_records_its_schema_and_a_pinned_change_token():
    # The token is kept in the sensor's cursor across processes and upgrades: pinned literally.
    topics = registry_topics(
        [item("shop.a.b-value"), item("x.y.z", updated="2026-01-01T00:00:00Z")]
    )
    described = topics["shop.a.b"]
    assert described.schema_arn == ARN.format("shop.a.b-value")
    assert described.updated_time == "2026-01-01T00:00:00+00:00"
    assert described.change_token == "8bf0eedd449e40dc"
    assert topics["x.y.z"].updated_time == "2026-01-01T00:00:00Z"
    assert topics["x.y.z"].change_token == "970573ee76a5e0be"
