"""``AWS::SQS::QueuePolicy`` in moto's CloudFormation, which has no model for it (moto 5.2.6
warns "No Moto CloudFormation support" and creates nothing): the change queue's template
(deploy/change-events.yaml) then leaves its queue with the policy AWS would give it.

moto finds a resource type's model among ``CloudFormationModel``'s subclasses, listed once and
cached: :func:`register_queue_policy` defines the model when the sandbox starts (importing this
module changes nothing in moto) and clears those caches.
"""

from __future__ import annotations

import json
import threading
from typing import Any

_registered = threading.Lock()
_done: list[bool] = []


def register_queue_policy() -> None:
    """Teach moto's CloudFormation ``AWS::SQS::QueuePolicy``: each queue of ``Queues`` (their
    URLs, as ``Ref`` of a queue gives them) gets ``PolicyDocument`` as its ``Policy``."""
    with _registered:
        if _done:
            return
        from moto.cloudformation import parsing
        from moto.core.common_models import CloudFormationModel
        from moto.sqs.models import sqs_backends

        class QueuePolicy(CloudFormationModel):
            def __init__(self, queue_urls: list[str], document: str) -> None:
                self.queue_urls, self.document = queue_urls, document

            @property
            def physical_resource_id(self) -> str:
                return ",".join(self.queue_urls)

            @staticmethod
            def cloudformation_type() -> str:
                return "AWS::SQS::QueuePolicy"

            @staticmethod
            def cloudformation_name_type() -> str:
                return ""

            @classmethod
            def create_from_cloudformation_json(  # type: ignore[misc]
                cls,
                resource_name: str,
                cloudformation_json: Any,
                account_id: str,
                region_name: str,
                **kwargs: Any,
            ) -> QueuePolicy:
                properties = cloudformation_json["Properties"]
                document = json.dumps(properties["PolicyDocument"])
                backend = sqs_backends[account_id][region_name]
                for url in properties["Queues"]:
                    backend.get_queue(url.rstrip("/").rsplit("/", 1)[-1]).policy = document
                return cls(list(properties["Queues"]), document)

        for cached in (parsing.get_model_list, parsing.get_model_map, parsing.get_name_type_map):
            cached.cache_clear()
        _done.append(True)
