"""The demo's change queue: what deploy/change-events.yaml creates on AWS, made in the sandbox.

EventBridge rules on the default bus (one per watched source, their patterns
:func:`~dzlineage_dagster.core.changes.cloudtrail.event_patterns`) send CloudTrail's events of
the registry's, MSK Connect's and the Glue tables' changes to an SQS queue, whose policy lets
those rules send and whose redrive policy moves a message received too often to its
dead-letter queue.
"""

from __future__ import annotations

import json
from typing import Any

from dzlineage_dagster.core.changes.cloudtrail import event_patterns

QUEUE_NAME = "dzlineage-changes"
#: Receives before a message goes to the dead-letter queue (the template's default too).
MAX_RECEIVE_COUNT = 5
#: Longer than a sensor's interval (30 s): the next tick deletes a message before it is back.
VISIBILITY_TIMEOUT_SECONDS = 300


def create_change_queue(sqs: Any, events: Any, name: str = QUEUE_NAME) -> str:
    """The queue, its dead-letter queue and the rules feeding it; the queue's URL."""
    dead_letters = sqs.create_queue(QueueName=f"{name}-dlq")["QueueUrl"]
    dead_letter_arn = sqs.get_queue_attributes(QueueUrl=dead_letters, AttributeNames=["QueueArn"])[
        "Attributes"
    ]["QueueArn"]
    url = sqs.create_queue(
        QueueName=name,
        Attributes={
            "VisibilityTimeout": str(VISIBILITY_TIMEOUT_SECONDS),
            "RedrivePolicy": json.dumps(
                {"deadLetterTargetArn": dead_letter_arn, "maxReceiveCount": MAX_RECEIVE_COUNT}
            ),
        },
    )["QueueUrl"]
    arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"][
        "QueueArn"
    ]
    rules = []
    for source, pattern in event_patterns().items():
        rule = f"{name}-{source}"
        rules.append(
            events.put_rule(Name=rule, EventPattern=json.dumps(pattern), State="ENABLED")["RuleArn"]
        )
        events.put_targets(Rule=rule, Targets=[{"Id": "change-queue", "Arn": arn}])
    # EventBridge sends to a queue whose policy lets it (the template's ChangeQueuePolicy).
    policy = {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Effect": "Allow",
                "Principal": {"Service": "events.amazonaws.com"},
                "Action": "sqs:SendMessage",
                "Resource": arn,
                "Condition": {"ArnEquals": {"aws:SourceArn": rules}},
            }
        ],
    }
    sqs.set_queue_attributes(QueueUrl=url, Attributes={"Policy": json.dumps(policy)})
    return url
