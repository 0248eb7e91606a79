"""CloudTrail's management events onto EventBridge, as AWS delivers them.

Every management call AWS answers is recorded by CloudTrail, which puts it on the account's
default EventBridge bus in the Region as an "AWS API Call via CloudTrail" event (no trail is
needed for that). The sandbox does the same for the calls the product's change detection
watches (:data:`~dzlineage_dagster.core.changes.cloudtrail.WATCHED_CALLS`), after answering
them: moto's EventBridge then matches the account's rules and sends the event to their
targets (an SQS queue), so a rule and a queue made as on AWS receive what AWS would send.
"""

from __future__ import annotations

import json
import urllib.parse
import uuid
from datetime import datetime, timezone
from typing import Any

from moto.events.models import events_backends
from werkzeug.wrappers import Request, Response

from dzlineage_dagster.core.changes.cloudtrail import DETAIL_TYPE, WATCHED_CALLS

#: EventBridge source and CloudTrail eventSource of each service whose calls are emitted.
_SOURCES = {
    event_source.partition(".")[0]: (source, event_source) for source, event_source in WATCHED_CALLS
}
_WATCHED = {
    event_source.partition(".")[0]: calls for (_, event_source), calls in WATCHED_CALLS.items()
}


def watched(service: str, operation: str | None) -> bool:
    return operation in _WATCHED.get(service, ())


def cloudtrail_casing(value: Any) -> Any:
    """Names as CloudTrail records them: the API's with the first letter in lower case."""
    if isinstance(value, dict):
        return {k[:1].lower() + k[1:]: cloudtrail_casing(v) for k, v in value.items()}
    if isinstance(value, list):
        return [cloudtrail_casing(v) for v in value]
    return value


def _json_object(data: bytes) -> dict[str, Any]:
    try:
        parsed = json.loads(data or b"{}")
    except ValueError:
        return {}
    return parsed if isinstance(parsed, dict) else {}


def request_parameters(service: str, request: Request, body: bytes) -> dict[str, Any]:
    """The call's parameters: its JSON body, and for MSK Connect's REST paths
    (``/v1/connectors/{connectorArn}``) the connector ARN the path names."""
    parameters = _json_object(body)
    if service == "kafkaconnect":
        _, _, arn = request.path.partition("/v1/connectors/")
        if arn:
            parameters["connectorArn"] = urllib.parse.unquote(arn)
        parameters.update(request.args.to_dict())
    return cloudtrail_casing(parameters)


def emit_call_event(
    service: str,
    operation: str,
    region: str,
    account: str,
    request: Request,
    body: bytes,
    response: Response,
) -> None:
    """Put the answered call's CloudTrail event on the account's default bus in ``region``."""
    source, event_source = _SOURCES[service]
    detail = {
        "eventVersion": "1.08",
        "userIdentity": {"type": "AssumedRole", "accountId": account},
        "eventTime": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "eventSource": event_source,
        "eventName": operation,
        "awsRegion": region,
        "requestParameters": request_parameters(service, request, body),
        "responseElements": cloudtrail_casing(_json_object(response.get_data())) or None,
        "requestID": str(uuid.uuid4()),
        "eventID": str(uuid.uuid4()),
        "readOnly": False,
        "eventType": "AwsApiCall",
        "managementEvent": True,
        "recipientAccountId": account,
        "eventCategory": "Management",
    }
    events_backends[account][region].put_events(
        [{"Source": source, "DetailType": DETAIL_TYPE, "Detail": json.dumps(detail)}]
    )
