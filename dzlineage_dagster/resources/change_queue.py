"""Amazon SQS: the queue EventBridge delivers CloudTrail's change events to."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from dzlineage_dagster.resources.base import AwsClientResource

#: ReceiveMessage's and DeleteMessageBatch's most messages a call.
SQS_BATCH = 10


class ChangeQueueResource(AwsClientResource):
    """Receives and deletes the change queue's messages (service `sqs`, the data side's
    account, where the events are)."""

    service_names: ClassVar[tuple[str, ...]] = ("sqs",)

    def receive(self, queue_url: str, wait_seconds: int) -> list[dict[str, Any]]:
        """Up to :data:`SQS_BATCH` messages, waiting up to ``wait_seconds`` for the first
        (long polling: an empty queue costs one call a wait, not one a second), each with how
        often it was received (``ApproximateReceiveCount``, for the dead-letter queue's
        ``maxReceiveCount``)."""
        answer = self.client().receive_message(
            QueueUrl=queue_url,
            MaxNumberOfMessages=SQS_BATCH,
            WaitTimeSeconds=wait_seconds,
            MessageSystemAttributeNames=["ApproximateReceiveCount", "SentTimestamp"],
        )
        return answer.get("Messages", [])

    def delete(self, queue_url: str, receipt_handles: Sequence[str]) -> list[str]:
        """Delete the messages of these receipt handles, :data:`SQS_BATCH` a call; what SQS
        could not delete, each with why (a handle whose message came back and was received
        again by someone else, for one)."""
        failures: list[str] = []
        client = self.client()
        for start in range(0, len(receipt_handles), SQS_BATCH):
            batch = receipt_handles[start : start + SQS_BATCH]
            answer = client.delete_message_batch(
                QueueUrl=queue_url,
                Entries=[{"Id": str(i), "ReceiptHandle": h} for i, h in enumerate(batch)],
            )
            failures += [
                f"{f.get('Code')}: {f.get('Message', '')}" for f in answer.get("Failed", [])
            ]
        return failures

    def attributes(self, queue_url: str) -> dict[str, str]:
        """The queue's attributes (its ARN, backlog and redrive policy), for `doctor`."""
        return self.client().get_queue_attributes(QueueUrl=queue_url, AttributeNames=["All"])[
            "Attributes"
        ]
