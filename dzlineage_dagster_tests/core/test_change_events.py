"""CloudTrail's EventBridge events, as SQS delivers them, read as the platform's changes."""

from __future__ import annotations

import contextlib
import json
import string

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from dzlineage_dagster.core.changes.cloudtrail import (
    CONNECTOR_CALLS,
    DEFAULT_REGISTRY,
    SCHEMA_CALLS,
    TABLE_CALLS,
    ConnectorChange,
    Ignored,
    SchemaChange,
    TableChange,
    UnreadableMessage,
    event_patterns,
    read_message,
)
from dzlineage_dagster.core.changes.queue_cursor import HANDLED_SECONDS, MAX_HANDLED, QueueCursor
from dzlineage_dagster.core.connectors.topics import topic_for_schema_name
from dzlineage_dagster.core.doctor import Status, change_queue_row

#: Glue's names: letters, digits and ``-_$#.`` (botocore's SchemaRegistryNameString).
GLUE_NAME = st.text(string.ascii_letters + string.digits + "-_$#.", min_size=1, max_size=40)
TABLE_NAME = st.text(string.ascii_lowercase + string.digits + "_", min_size=1, max_size=40)
SCHEMA_ARN = "arn:aws:glue:us-east-1:123456789012:schema/{}/{}"


def cloudtrail_casing(value):
    """Keys as CloudTrail records them: the API's names with the first letter in lower case."""
    if isinstance(value, dict):
        return {k[0].lower() + k[1:]: cloudtrail_casing(v) for k, v in value.items()}
    return value


def body(action, parameters, responses=None, *, glue=True, error=None, casing=True) -> str:
    """An SQS message body as an EventBridge rule delivers a CloudTrail event."""
    source, event_source = (
        ("aws.glue", "glue.amazonaws.com")
        if glue
        else ("aws.kafkaconnect", "kafkaconnect.amazonaws.com")
    )
    detail = {
        "eventVersion": "1.08",
        "eventTime": "2026-12-07T13:00:00Z",
        "eventSource": event_source,
        "eventName": action,
        "awsRegion": "us-east-1",
        "requestParameters": cloudtrail_casing(parameters) if casing else parameters,
        "responseElements": cloudtrail_casing(responses or {}) if casing else responses,
        "eventID": "0f1e2d3c-0000-4000-8000-000000000001",
    }
    if error:
        detail["errorCode"] = error
    return json.dumps(
        {
            "version": "0",
            "id": "e1",
            "detail-type": "AWS API Call via CloudTrail",
            "source": source,
            "account": "123456789012",
            "time": "2026-12-07T13:00:00Z",
            "region": "us-east-1",
            "resources": [],
            "detail": detail,
        }
    )


SCHEMA_IDS = st.sampled_from(["names", "arn", "registry-id"])


def schema_parameters(form: str, action: str, registry: str, schema: str) -> dict:
    if form == "arn":
        return {"SchemaId": {"SchemaArn": SCHEMA_ARN.format(registry, schema)}}
    if form == "registry-id" or action == "CreateSchema":
        return {"RegistryId": {"RegistryName": registry}, "SchemaName": schema}
    return {"SchemaId": {"RegistryName": registry, "SchemaName": schema}}


@given(
    action=st.sampled_from(SCHEMA_CALLS),
    registry=GLUE_NAME,
    schema=GLUE_NAME.filter(lambda name: "/" not in name),
    form=SCHEMA_IDS,
    casing=st.booleans(),
)
def test_a_schema_call_of_the_registry_names_its_topic_and_what_happened(
    action, registry, schema, form, casing
):
    parameters = schema_parameters(form, action, registry, schema)
    change = read_message(body(action, parameters, casing=casing), registry)
    assert isinstance(change, SchemaChange)
    assert (change.action, change.registry, change.schema_name) == (action, registry, schema)
    assert change.deletes_schema == (action == "DeleteSchema")
    assert change.topic == topic_for_schema_name(schema).topic
    assert change.event_id == "0f1e2d3c-0000-4000-8000-000000000001"


@given(
    action=st.sampled_from(SCHEMA_CALLS),
    ours=GLUE_NAME,
    theirs=GLUE_NAME,
    schema=GLUE_NAME,
    form=SCHEMA_IDS,
)
def test_a_schema_call_of_another_registry_is_ignored_saying_which(
    action, ours, theirs, schema, form
):
    assume(ours != theirs and "/" not in schema)
    ignored = read_message(body(action, schema_parameters(form, action, theirs, schema)), ours)
    assert isinstance(ignored, Ignored)
    assert f"in registry {theirs}, not {ours}" in ignored.reason


def test_a_schema_named_without_a_registry_is_in_the_default_registry():
    parameters = {"SchemaName": "orders-value", "DataFormat": "AVRO"}
    change = read_message(body("CreateSchema", parameters), DEFAULT_REGISTRY)
    assert isinstance(change, SchemaChange) and change.topic == "orders"
    assert isinstance(read_message(body("CreateSchema", parameters), "cdc"), Ignored)


def test_a_version_metadata_call_by_version_id_names_the_version_for_the_edge_to_look_up():
    parameters = {"SchemaVersionId": "b7d5b4f1-1111-4222-8333-444455556666"}
    change = read_message(body("PutSchemaVersionMetadata", parameters), "cdc")
    assert isinstance(change, SchemaChange)
    assert (change.schema_name, change.schema_version_id) == ("", parameters["SchemaVersionId"])


@given(action=st.sampled_from(TABLE_CALLS), database=TABLE_NAME, table=TABLE_NAME)
def test_a_glue_table_call_names_the_database_and_table(action, database, table):
    parameters = (
        {"DatabaseName": database, "Name": table}
        if action == "DeleteTable"
        else {"DatabaseName": database, "TableInput": {"Name": table, "Parameters": {}}}
    )
    change = read_message(body(action, parameters), "any-registry")
    assert change == TableChange(action, change.event_id, change.event_time, database, table)


@given(action=st.sampled_from(CONNECTOR_CALLS), name=TABLE_NAME)
def test_a_connector_call_names_the_connector_by_name_or_arn(action, name):
    arn = f"arn:aws:kafkaconnect:us-east-1:123456789012:connector/{name}/0a1b2c3d-4"
    parameters = {"connectorName": name} if action == "CreateConnector" else {"connectorArn": arn}
    responses = {"connectorArn": arn, "connectorName": name}
    change = read_message(body(action, parameters, responses, glue=False), "cdc")
    assert isinstance(change, ConnectorChange)
    assert (change.connector, change.connector_arn) == (name, arn)


def test_a_failed_call_changed_nothing_and_is_ignored_saying_so():
    parameters = {"SchemaId": {"RegistryName": "cdc", "SchemaName": "orders-value"}}
    ignored = read_message(body("RegisterSchemaVersion", parameters, error="AccessDenied"), "cdc")
    assert ignored == Ignored(
        "0f1e2d3c-0000-4000-8000-000000000001",
        "RegisterSchemaVersion failed (AccessDenied): nothing changed",
    )


def test_a_glue_call_the_sync_does_not_watch_is_ignored():
    ignored = read_message(body("GetSchema", {"SchemaId": {"SchemaName": "x"}}), "cdc")
    assert isinstance(ignored, Ignored) and "not a call the sync watches" in ignored.reason


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("not json", "the body is not JSON"),
        ("[1, 2]", "the body is JSON list, not an event object"),
        ('{"detail-type": "Scheduled Event"}', "'Scheduled Event' is not"),
        ('{"detail-type": "AWS API Call via CloudTrail"}', "the event has no detail object"),
        (body("RegisterSchemaVersion", {"SchemaId": {"RegistryName": "cdc"}}), "no schemaName"),
        (body("UpdateTable", {"TableInput": {"Name": "t"}}), "has no databaseName"),
        (
            body("DeleteSchema", {"SchemaId": {"SchemaArn": "arn:aws:glue:r:1:registry/cdc"}}),
            "not schema/<registry>/<name>",
        ),
        (body("UpdateSchema", {"Compatibility": "FULL"}), "names no schema"),
    ],
)
def test_an_unreadable_body_is_an_error_naming_why(text, why):
    with pytest.raises(UnreadableMessage, match=why.replace("(", r"\(").replace("[", r"\[")):
        read_message(text, "cdc")


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda children: (
        st.lists(children, max_size=3)
        | st.dictionaries(
            st.sampled_from(
                [
                    "detail",
                    "eventName",
                    "eventSource",
                    "eventID",
                    "requestParameters",
                    "schemaId",
                    "schemaName",
                    "databaseName",
                    "tableInput",
                    "name",
                    "connectorArn",
                    "detail-type",
                    "errorCode",
                ]
            ),
            children,
            max_size=5,
        )
    ),
    max_leaves=12,
)


@given(document=JSON, action=st.sampled_from(SCHEMA_CALLS + TABLE_CALLS + CONNECTOR_CALLS))
def test_any_other_body_is_read_or_refused_as_unreadable_never_a_crash(document, action):
    shaped = {"detail-type": "AWS API Call via CloudTrail", "detail": document}
    if isinstance(document, dict):
        document.setdefault("eventName", action)
        document.setdefault("eventID", "e")
    for text in (json.dumps(document), json.dumps(shaped)):
        with contextlib.suppress(UnreadableMessage):
            read_message(text, "cdc")


def test_the_rules_watch_every_call_read_here():
    patterns = event_patterns()
    assert patterns["glue"]["detail"]["eventName"] == list(SCHEMA_CALLS + TABLE_CALLS)
    assert patterns["kafkaconnect"]["source"] == ["aws.kafkaconnect"]
    assert patterns["kafkaconnect"]["detail"]["eventName"] == list(CONNECTOR_CALLS)


HANDLED = st.dictionaries(
    st.text(min_size=1, max_size=12), st.text(min_size=1, max_size=12), max_size=20
)


@given(pending=st.lists(st.text(max_size=30), max_size=12), handled=HANDLED)
def test_the_queue_cursor_reads_back_what_it_wrote(pending, handled):
    cursor = QueueCursor().after(pending, handled, 1000.0, {"t": [1, 2.0]}, {"w": (7, 990.0)})
    again = QueueCursor.from_text(cursor.to_json())
    assert again == cursor
    assert all(again.seen(key, token) for key, token in handled.items())


def test_the_queue_cursor_forgets_changes_after_a_day_and_keeps_the_newest():
    cursor = QueueCursor().after([], {"old": "v1"}, 0.0)
    assert cursor.seen("old", "v1") and not cursor.seen("old", "v2")
    later = cursor.after([], {"new": "v1"}, HANDLED_SECONDS + 1.0)
    assert not later.seen("old", "v1") and later.seen("new", "v1")
    many = QueueCursor().after([], {f"t{i}": "v" for i in range(MAX_HANDLED)}, 0.0)
    newest = many.after([], {"latest": "v"}, 1.0)
    assert len(newest.handled) == MAX_HANDLED and newest.seen("latest", "v")


def test_a_watched_topic_whose_run_never_came_is_forgotten_after_a_day():
    watched = QueueCursor().after([], {}, 0.0, watch={"t": (3, 0.0)})
    assert watched.watch == {"t": (3, 0.0)}
    assert QueueCursor.from_text(watched.to_json()).watch == {"t": (3, 0.0)}
    assert watched.after([], {}, HANDLED_SECONDS + 1.0, watch=watched.watch).watch == {}


EVENTBRIDGE_SENDS = {
    "Statement": [
        {
            "Effect": "Allow",
            "Principal": {"Service": "events.amazonaws.com"},
            "Action": "sqs:SendMessage",
            "Resource": "arn:aws:sqs:us-east-1:123456789012:q",
        }
    ]
}
REDRIVE = json.dumps(
    {"deadLetterTargetArn": "arn:aws:sqs:us-east-1:123456789012:dlq", "maxReceiveCount": 5}
)


@pytest.mark.parametrize(
    ("policy", "redrive", "status", "says"),
    [
        (
            EVENTBRIDGE_SENDS,
            REDRIVE,
            Status.OK,
            "dead-letter queue arn:aws:sqs:us-east-1:123456789012:dlq after 5",
        ),
        (EVENTBRIDGE_SENDS, None, Status.WARN, "no dead-letter queue"),
        (None, REDRIVE, Status.FAIL, "lets no EventBridge rule send"),
        (
            {"Statement": [{**EVENTBRIDGE_SENDS["Statement"][0], "Effect": "Deny"}]},
            REDRIVE,
            Status.FAIL,
            "lets no EventBridge rule send",
        ),
        (
            {"Statement": {**EVENTBRIDGE_SENDS["Statement"][0], "Principal": {"AWS": "*"}}},
            REDRIVE,
            Status.FAIL,
            "lets no EventBridge rule send",
        ),
    ],
)
def test_doctor_says_whether_the_rules_can_send_and_unreadable_messages_can_leave(
    policy, redrive, status, says
):
    attributes = {"QueueArn": "arn:aws:sqs:us-east-1:123456789012:q"}
    if policy is not None:
        attributes["Policy"] = json.dumps(policy)
    if redrive is not None:
        attributes["RedrivePolicy"] = redrive
    row = change_queue_row("https://sqs.us-east-1.amazonaws.com/123456789012/q", attributes)
    assert row.status is status and says in row.detail


def test_doctor_says_an_unset_queue_leaves_the_listing_to_find_changes():
    row = change_queue_row(None, None)
    assert row.status is Status.OK and "registry_schema_sensor lists the registry" in row.detail
