"""The relay answers a client's bytes, whatever they are, with its own JSON and a 4xx when it
cannot take them: never a 500. Deep nesting (as the body, inside a facet), text that is not
Unicode (a lone surrogate in a name), odd names and arbitrary bytes, each counted in
``/status``; then a property-based fuzz of malformed bodies through the relay's entry point."""

from __future__ import annotations

import json
import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from benchmarks.relay_process import API_KEY
from dzlineage_dagster.core.lineage.relay_events import MAX_NESTING_DEPTH
from dzlineage_dagster.relay.build import build_relay
from dzlineage_dagster.relay.server import RelayApp
from dzlineage_dagster.relay.service import LINEAGE_PATH, Relay
from dzlineage_dagster.relay.settings import RelaySettings
from dzlineage_dagster_tests.relay.events import run_event, to_json

#: What a client's request may get; 500 is the relay's own fault.
CLIENT_ANSWERS = {200, 202, 400, 401, 403, 413, 422}


@pytest.fixture(scope="module")
def relay(module_platform) -> Relay:
    environ = {**os.environ, **module_platform.environment, "DZLINEAGE_RELAY_API_KEY": API_KEY}
    return build_relay(RelaySettings.from_env(environ), with_spool=False, environ=environ)


def post(relay: Relay, body: bytes) -> tuple[int, dict]:
    headers = {"authorization": f"Bearer {API_KEY}"}
    answer = relay.route("POST", LINEAGE_PATH, headers.get, body)
    json.dumps(answer.body)  # the answer is always JSON
    return answer.status, answer.body


def nested(depth: int) -> str:
    """JSON text nested ``depth`` levels, objects and lists by turns (built as text: encoding
    deep values would need the recursion the relay must not)."""
    opening = "".join("[" if level % 2 else '{"k":' for level in range(depth))
    closing = "".join("]" if level % 2 else "}" for level in reversed(range(depth)))
    return f"{opening}1{closing}"


def with_raw(event: dict, path: tuple[str, ...], raw: str) -> bytes:
    """The event's JSON with the value at ``path`` replaced by the JSON text ``raw``."""
    spot = "\u0000spot\u0000"
    owner = event
    for key in path[:-1]:
        owner = owner[key]
    owner[path[-1]] = spot
    return json.dumps(event).replace(json.dumps(spot), raw).encode()


def an_event() -> dict:
    return json.loads(to_json(run_event()))


def facet(value: object) -> dict:
    return {
        "_producer": "https://example.com/fuzz",
        "_schemaURL": "https://example.com/fuzz.json",
        "value": value,
    }


@pytest.mark.parametrize("depth", [MAX_NESTING_DEPTH + 1, 1000, 100_000])
def test_deep_nesting_as_the_body_or_inside_a_facet_is_400(relay, depth):
    before = relay.status()["details"].get("rejected_400", 0)
    status, answer = post(relay, nested(depth).encode())
    assert status == 400 and "deeper than" in answer["error"], answer
    event = an_event()
    event["run"]["facets"] = {"deep": facet(None)}
    status, answer = post(relay, with_raw(event, ("run", "facets", "deep", "value"), nested(depth)))
    assert status == 400 and "deeper than" in answer["error"], answer
    if depth < 900:  # parsed, so the path is known; deeper, Python's parser gives out first
        assert "event.run.facets.deep.value" in answer["error"]
    assert relay.status()["details"]["rejected_400"] == before + 2


def test_an_event_nested_as_deep_as_allowed_is_forwarded(relay):
    event = an_event()
    # The facet sits 3 levels deep (run, facets, the facet): its value may nest the rest.
    event["run"]["facets"] = {"deep": facet(None)}
    raw = nested(MAX_NESTING_DEPTH - 4)
    status, answer = post(relay, with_raw(event, ("run", "facets", "deep", "value"), raw))
    assert status == 200, answer


@pytest.mark.parametrize("where", ["job.name", "job.namespace", "run.facets.key", "inputs.name"])
def test_a_lone_surrogate_anywhere_is_400_naming_where(relay, where):
    event = an_event()
    if where == "run.facets.key":
        event["run"]["facets"] = {"bad\ud800": facet(1)}
    elif where == "inputs.name":
        event["inputs"] = [{"namespace": "s3://lake", "name": "orders\udfff"}]
    else:
        owner, key = where.split(".")
        event[owner][key] = "name\ud800"
    body = json.dumps(event).encode()  # ensure_ascii: the surrogate travels as \ud800
    status, answer = post(relay, body)
    assert status == 400, answer
    assert "lone surrogate" in answer["error"]


@pytest.mark.parametrize(
    "name",
    [
        "\x00",
        " ",
        "a" * 100_000,
        "名前/テーブル",
        "../../etc/passwd",
        "%s%n",
        "\u202eevil",
        "\ufeff",
    ],
)
def test_odd_names_are_forwarded_or_refused_never_a_500(relay, name):
    event = an_event()
    event["job"]["name"] = name
    event["outputs"] = [{"namespace": "s3://lake", "name": name}]
    status, answer = post(relay, json.dumps(event).encode())
    assert status in CLIENT_ANSWERS, answer
    assert len(answer.get("error", "")) < 2000  # a reason quotes the client, never all of it


def test_the_wsgi_app_answers_json_to_bytes_that_are_not_utf8(relay):
    from werkzeug.test import Client

    client = Client(RelayApp(relay))
    answer = client.post(
        LINEAGE_PATH,
        data=b'{"eventTime": "\xff\xfe"}',
        headers={"Authorization": f"Bearer {API_KEY}"},
    )
    assert answer.status_code == 400
    assert "error" in json.loads(answer.data)


# --- the fuzz ----------------------------------------------------------------------------------

#: Any text, lone surrogates included (Hypothesis leaves category Cs out unless asked).
any_text = st.text(st.characters(exclude_categories=()), max_size=20)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | any_text,
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(any_text, children, max_size=4)
    ),
    max_leaves=20,
)
#: Paths of a valid event to spoil, and what to put there.
event_paths = st.sampled_from(
    [
        (),
        ("eventTime",),
        ("eventType",),
        ("producer",),
        ("run",),
        ("run", "runId"),
        ("run", "facets"),
        ("job",),
        ("job", "namespace"),
        ("job", "name"),
        ("job", "facets"),
        ("inputs",),
        ("outputs",),
    ]
)


def spoiled(path: tuple[str, ...], raw: str) -> bytes:
    """A valid event with the JSON text ``raw`` at ``path`` (the whole body for ``()``)."""
    return with_raw(an_event(), path, raw) if path else raw.encode()


bodies = (
    st.binary(max_size=200)
    | st.builds(spoiled, event_paths, json_values.map(json.dumps))
    | st.builds(spoiled, event_paths, st.integers(1, 3000).map(nested))
)


@settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(body=bodies)
def test_no_body_gets_a_500(relay, body):
    status, answer = post(relay, body)
    assert status in CLIENT_ANSWERS, (status, answer)
