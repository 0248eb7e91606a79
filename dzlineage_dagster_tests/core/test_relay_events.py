"""The relay's event logic: checking, clientTokens, renaming and trimming (no AWS)."""

from __future__ import annotations

import json
import string

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from openlineage.client.event_v2 import InputDataset, OutputDataset
from openlineage.client.facet_v2 import RunFacet

from dzlineage_dagster.core.identity.glue import GlueCatalogIndex
from dzlineage_dagster.core.identity.kafka import KafkaCluster
from dzlineage_dagster.core.lineage.relay_events import (
    CANONICAL_NAME_FACET,
    RELAY_PRODUCER,
    TRIMMED_FACET,
    EventTooLarge,
    InvalidEvent,
    NameRules,
    canonicalize,
    client_token,
    compact_json,
    fit_to_size,
    json_bytes,
    parse_event,
)
from dzlineage_dagster_tests.openlineage_spec import validate_openlineage_event
from dzlineage_dagster_tests.relay.events import (
    glue_symlinked_output,
    run_event,
    schema_facet,
    to_json,
)

BROKERS = {
    "BootstrapBrokerString": "b-1.demo.x.c2.kafka.us-east-1.amazonaws.com:9092,"
    "b-2.demo.x.c2.kafka.us-east-1.amazonaws.com:9092",
    "BootstrapBrokerStringTls": "b-1.demo.x.c2.kafka.us-east-1.amazonaws.com:9094,"
    "b-2.demo.x.c2.kafka.us-east-1.amazonaws.com:9094",
    "BootstrapBrokerStringSaslIam": "b-1.demo.x.c2.kafka.us-east-1.amazonaws.com:9098,"
    "b-2.demo.x.c2.kafka.us-east-1.amazonaws.com:9098",
}
GRAPH_KAFKA_NAMESPACE = "kafka://b-1.demo.x.c2.kafka.us-east-1.amazonaws.com:9098"
#: The Glue catalog the rules confirm tables with: one table, sales.orders.
CATALOG = GlueCatalogIndex.of("us-east-1", "123456789012", {"sales": [{"Name": "orders"}]})
CLUSTER_RULES = NameRules(
    kafka=KafkaCluster.of(name="demo", broker_strings=BROKERS), glue_catalog=CATALOG
)

names = st.text(string.ascii_letters + string.digits + "._-", min_size=1, max_size=40)


def received(event):
    return parse_event(to_json(event).encode())


# --- checking ----------------------------------------------------------------------------------


def test_a_run_event_from_openlineage_python_is_accepted_as_sent():
    event = run_event(inputs=[InputDataset("s3://raw", "orders")])
    parsed = received(event)
    assert parsed.kind == "run"
    assert parsed.run_id == event.run.runId
    assert parsed.document == json.loads(to_json(event))


@pytest.mark.parametrize(
    ("mutate", "named"),
    [
        (lambda e: e.pop("eventTime"), "event.eventTime"),
        (lambda e: e.update(eventTime="yesterday"), "eventTime"),
        (lambda e: e.pop("producer"), "event.producer"),
        (lambda e: e.update(producer="not a uri"), "event.producer"),
        (lambda e: e.pop("schemaURL"), "event.schemaURL"),
        (lambda e: e["run"].update(runId="run-1"), "run.runId"),
        (lambda e: e["run"].pop("runId"), "run.runId"),
        (lambda e: e.pop("job"), "event.job"),
        (lambda e: e["job"].pop("name"), "job.name"),
        (lambda e: e.update(eventType="DONE"), "eventType"),
        (lambda e: e.pop("eventType"), "eventType"),
        (lambda e: e.update(inputs={"a": 1}), "event.inputs"),
        (lambda e: e.update(outputs=[{"namespace": "s3://x"}]), "outputs[0].name"),
        (lambda e: e["run"].update(facets={"x": {"a": 1}}), "run.facets.x._producer"),
    ],
)
def test_an_event_missing_a_required_field_is_refused_naming_it(mutate, named):
    document = json.loads(to_json(run_event(outputs=[OutputDataset("s3://x", "y")])))
    mutate(document)
    with pytest.raises(InvalidEvent, match=named.replace("[", r"\[").replace("]", r"\]")):
        parse_event(json.dumps(document).encode())


@pytest.mark.parametrize("body", [b"", b"not json", b"[1, 2]", b'"event"', b"\xff\xfe"])
def test_garbage_is_refused(body):
    with pytest.raises(InvalidEvent):
        parse_event(body)


def test_dataset_and_job_events_are_told_apart_from_run_events():
    base = {"eventTime": "2026-01-01T00:00:00Z", "producer": "https://p", "schemaURL": "https://s"}
    dataset = parse_event(json.dumps({**base, "dataset": {"namespace": "n", "name": "d"}}))
    job = parse_event(json.dumps({**base, "job": {"namespace": "n", "name": "j"}}))
    assert (dataset.kind, job.kind) == ("dataset", "job")
    with pytest.raises(InvalidEvent, match=r"dataset\.name"):
        parse_event(json.dumps({**base, "dataset": {"namespace": "n"}}))


# --- clientToken -------------------------------------------------------------------------------


@given(names, names)
def test_the_client_token_is_stable_for_a_retry_and_differs_for_any_other_content(a, b):
    event = run_event(outputs=[OutputDataset("s3://bucket", a)])
    token = client_token(received(event))
    assert token == client_token(parse_event(to_json(event)))
    assert len(token) == 64 and all(33 <= ord(c) <= 126 for c in token)
    other = json.loads(to_json(event))
    other["outputs"][0]["name"] = a + b
    assert client_token(parse_event(json.dumps(other))) != token


#: An event with non-ASCII names; its token and forwarded text are pinned below.
PINNED_EVENT = {
    "eventType": "COMPLETE",
    "eventTime": "2026-12-02T10:00:00+00:00",
    "producer": "https://example.com/producer",
    "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
    "run": {"runId": "0190b1a2-0000-7000-8000-000000000001"},
    "job": {"namespace": "spark", "name": "k\u00e4se.daily"},
    "inputs": [],
    "outputs": [{"namespace": "s3://lake", "name": "orders/\u00df"}],
}


def test_the_client_token_and_forwarded_text_are_pinned_across_versions():
    # A relay upgraded while events wait in a producer's retry queue must compute the same
    # token, or DataZone stores the redelivered event twice: computed once, written down.
    event = parse_event(json.dumps(PINNED_EVENT))
    assert client_token(event) == (
        "83ee891c54ccaa1bb101de0db1491b02ccb55e3b18e009037f4797ce43ad3001"
    )
    assert compact_json(event.document) == (
        '{"eventType":"COMPLETE","eventTime":"2026-12-02T10:00:00+00:00",'
        '"producer":"https://example.com/producer",'
        '"schemaURL":"https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",'
        '"run":{"runId":"0190b1a2-0000-7000-8000-000000000001"},'
        '"job":{"namespace":"spark","name":"k\u00e4se.daily"},"inputs":[],'
        '"outputs":[{"namespace":"s3://lake","name":"orders/\u00df"}]}'
    )
    assert json_bytes(event.document) == len(compact_json(event.document).encode("utf-8"))


def test_the_client_token_ignores_key_order_and_whitespace():
    document = json.loads(to_json(run_event()))
    reordered = dict(reversed(list(document.items())))
    assert client_token(parse_event(json.dumps(reordered, indent=2))) == client_token(
        parse_event(json.dumps(document))
    )


def test_two_events_of_one_run_get_different_tokens():
    first = run_event(
        inputs=[InputDataset("s3://a", "x")], run_id="7c6b8a2e-0f5a-4a36-9b1e-0b7c1d2e3f40"
    )
    second = run_event(outputs=[OutputDataset("s3://a", "y")], run_id=first.run.runId)
    second.eventTime = first.eventTime
    assert client_token(received(first)) != client_token(received(second))


# --- renaming ----------------------------------------------------------------------------------


@given(st.sampled_from(sorted(BROKERS)), st.integers(0, 1), names)
def test_every_broker_of_the_cluster_maps_to_the_graphs_kafka_namespace(listener, index, topic):
    address = BROKERS[listener].split(",")[index]
    event = received(run_event(outputs=[OutputDataset(f"kafka://{address}", topic)]))
    renamed, rewrites = canonicalize(event, CLUSTER_RULES)
    output = renamed.document["outputs"][0]
    assert (output["namespace"], output["name"]) == (GRAPH_KAFKA_NAMESPACE, topic)
    if f"kafka://{address}" == GRAPH_KAFKA_NAMESPACE:
        assert rewrites == [] and CANONICAL_NAME_FACET not in output.get("facets", {})
    else:
        facet = output["facets"][CANONICAL_NAME_FACET]
        assert (facet["originalNamespace"], facet["originalName"]) == (f"kafka://{address}", topic)
        assert facet["rule"] == NameRules.KAFKA_RULE
        assert rewrites == [f"kafka://{address}/{topic} -> {GRAPH_KAFKA_NAMESPACE}/{topic}"]
    validate_openlineage_event(compact_json(renamed.document))
    assert event.document["outputs"][0]["namespace"] == f"kafka://{address}"  # input untouched


def test_a_kafka_namespace_of_another_cluster_is_left_alone():
    event = received(run_event(inputs=[InputDataset("kafka://b-1.other:9098", "t")]))
    assert canonicalize(event, CLUSTER_RULES) == (event, [])


def test_a_dataset_symlinked_to_a_glue_table_takes_the_tables_arn_name():
    output = glue_symlinked_output(
        "s3://lake/warehouse/sales/orders", "us-east-1", "123456789012", "sales", "orders"
    )
    renamed, rewrites = canonicalize(received(run_event(outputs=[output])), CLUSTER_RULES)
    dataset = renamed.document["outputs"][0]
    # DataZone's "<namespace>/<name>" of it is the table's ARN.
    assert dataset["namespace"] == "arn:aws:glue:us-east-1:123456789012:table"
    assert dataset["name"] == "sales/orders"
    assert dataset["facets"][CANONICAL_NAME_FACET]["originalNamespace"] == "s3://lake"
    # The producer's symlink (OpenLineage's Glue name) stays, once.
    assert [(i["namespace"], i["name"]) for i in dataset["facets"]["symlinks"]["identifiers"]] == [
        ("arn:aws:glue:us-east-1:123456789012", "table/sales/orders")
    ]
    assert len(rewrites) == 1
    validate_openlineage_event(compact_json(renamed.document))


def test_a_dataset_named_by_openlineages_glue_naming_lands_on_the_tables_arn():
    output = OutputDataset("arn:aws:glue:us-east-1:123456789012", "table/sales/orders")
    renamed, rewrites = canonicalize(received(run_event(outputs=[output])), CLUSTER_RULES)
    dataset = renamed.document["outputs"][0]
    assert f"{dataset['namespace']}/{dataset['name']}" == (
        "arn:aws:glue:us-east-1:123456789012:table/sales/orders"
    )
    assert dataset["facets"][CANONICAL_NAME_FACET]["rule"] == "glue-table-name"
    assert dataset["facets"]["symlinks"]["identifiers"] == [
        {
            "namespace": "arn:aws:glue:us-east-1:123456789012",
            "name": "table/sales/orders",
            "type": "TABLE",
        }
    ]
    assert rewrites == [
        "arn:aws:glue:us-east-1:123456789012/table/sales/orders -> "
        "arn:aws:glue:us-east-1:123456789012:table/sales/orders"
    ]
    validate_openlineage_event(compact_json(renamed.document))
    # Already in the project's form: left alone.
    assert canonicalize(renamed, CLUSTER_RULES)[1] == []


def test_without_a_glue_catalog_glue_names_pass_and_namespaces_are_mapped_by_settings():
    output = glue_symlinked_output("s3://lake/t", "us-east-1", "123456789012", "db", "t")
    source = InputDataset("postgres://10.0.1.5:5432", "shop.public.orders")
    rules = NameRules(namespace_map={"postgres://10.0.1.5:5432": "postgres://shop-db:5432"})
    renamed, rewrites = canonicalize(received(run_event(inputs=[source], outputs=[output])), rules)
    assert renamed.document["inputs"][0]["namespace"] == "postgres://shop-db:5432"
    assert renamed.document["inputs"][0]["facets"][CANONICAL_NAME_FACET]["rule"] == "namespace-map"
    assert renamed.document["outputs"][0]["namespace"] == "s3://lake"
    assert len(rewrites) == 1


# --- size --------------------------------------------------------------------------------------


def big_run_facet(size: int) -> RunFacet:
    return RunFacet().with_additional_properties(blob="x" * size)


@settings(max_examples=40, suppress_health_check=[HealthCheck.too_slow])
@given(
    facet_sizes=st.lists(st.integers(10, 3000), min_size=1, max_size=6),
    columns=st.integers(0, 60),
    limit=st.integers(400, 6000),
)
def test_an_oversized_event_loses_its_largest_facets_with_a_note_or_is_refused(
    facet_sizes, columns, limit
):
    event = run_event(
        outputs=[
            OutputDataset(
                "s3://b", "t", facets={"schema": schema_facet([f"c{i}" for i in range(columns)])}
            )
        ]
    )
    event.run.facets = {f"extra{i}": big_run_facet(size) for i, size in enumerate(facet_sizes)}
    original = received(event)
    try:
        fitted, removed = fit_to_size(original, limit)
    except EventTooLarge as error:
        assert str(limit) in str(error)
        # Refused only when the event with every removable facet gone, plus the note that
        # lists them all, is still over the limit.
        stripped = json.loads(to_json(event))
        listed = [
            {"facet": f"run.facets.{name}", "bytes": json_bytes(name) + json_bytes(facet) + 2}
            for name, facet in stripped["run"]["facets"].items()
        ]
        schema = stripped["outputs"][0]["facets"]["schema"]
        listed.append(
            {
                "facet": "outputs[0].facets.schema",
                "bytes": json_bytes("schema") + json_bytes(schema) + 2,
            }
        )
        stripped["outputs"][0]["facets"] = {}
        stripped["run"]["facets"] = {
            TRIMMED_FACET: {
                "_producer": RELAY_PRODUCER,
                "_schemaURL": RunFacet._get_schema(),
                "originalBytes": json_bytes(original.document),
                "limitBytes": limit,
                "removedFacets": listed,
            }
        }
        assert json_bytes(stripped) > limit
        return
    assert json_bytes(fitted.document) <= limit
    if json_bytes(original.document) <= limit:
        assert (fitted, removed) == (original, [])
        return
    note = fitted.document["run"]["facets"][TRIMMED_FACET]
    assert note["removedFacets"] == removed
    assert note["originalBytes"] == json_bytes(original.document)
    sizes = [r["bytes"] for r in removed]
    assert sizes == sorted(sizes, reverse=True)  # the largest go first
    kept = [
        json_bytes(name) + json_bytes(facet) + 2
        for name, facet in fitted.document["run"]["facets"].items()
        if name != TRIMMED_FACET
    ]
    assert all(size <= min(sizes) for size in kept)
    validate_openlineage_event(compact_json(fitted.document))


def test_an_event_that_cannot_fit_even_without_facets_is_refused():
    many = [OutputDataset("s3://bucket", f"table_{i}") for i in range(200)]
    with pytest.raises(EventTooLarge, match="without its 0 removable facets"):
        fit_to_size(received(run_event(outputs=many)), 2000)


def test_null_facet_maps_are_renamed_and_trimmed_like_absent_ones():
    document = json.loads(
        to_json(run_event(outputs=[OutputDataset("kafka://b-1.other:9098", "t")]))
    )
    document["run"]["facets"] = None
    document["outputs"][0]["facets"] = None
    document["outputs"][0]["outputFacets"] = {
        "big": {"_producer": "https://p", "_schemaURL": "https://s", "x": "y" * 5000}
    }
    rules = NameRules(namespace_map={"kafka://b-1.other:9098": "kafka://b-1.mapped:9098"})
    renamed, _ = canonicalize(parse_event(json.dumps(document)), rules)
    assert CANONICAL_NAME_FACET in renamed.document["outputs"][0]["facets"]
    fitted, removed = fit_to_size(renamed, 3000)
    assert [r["facet"] for r in removed] == ["outputs[0].outputFacets.big"]
    assert TRIMMED_FACET in fitted.document["run"]["facets"]
