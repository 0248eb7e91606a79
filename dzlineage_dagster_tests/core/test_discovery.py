from datetime import datetime, timezone

from dzlineage_dagster.core.discovery import diff_against_cursor, registry_topics

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
