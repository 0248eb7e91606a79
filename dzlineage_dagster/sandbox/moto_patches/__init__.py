"""Where moto 5.2.5 differs from AWS, and how the sandbox closes the gap.

- :mod:`.gaps`: operations moto lacks or answers unlike AWS, answered from moto's own backend
  state before a call reaches moto (the server asks :func:`~.gaps.answer_moto_gap`);
- :mod:`.ssm_rules`: what SSM accepts as a parameter name, as pure rules;
- :mod:`.msk_arns`: MSK cluster ARNs in AWS's shape (``cluster/<name>/<uuid>-<n>``);
- :mod:`.cloudformation_queue_policy`: ``AWS::SQS::QueuePolicy`` in moto's CloudFormation;
- :mod:`.sqs_queue_account`: an SQS call on another account's queue URL is served on that
  account, and only when the queue's policy grants the caller (the server asks it);
- :func:`apply_moto_patches`: the changes to moto's own module state (quota constants, the MSK
  ARN generator). Importing
  any sandbox module changes nothing in moto; the sandbox applies these when it starts, so a
  process that only imports the project (or moto for its own tests) keeps moto as shipped.
"""

from __future__ import annotations

import importlib
import threading
from dataclasses import dataclass
from typing import Any

from dzlineage_dagster.sandbox.moto_patches.cloudformation_queue_policy import (
    register_queue_policy,
)
from dzlineage_dagster.sandbox.moto_patches.msk_arns import aws_shaped_cluster_arn


@dataclass(frozen=True)
class MotoPatch:
    """One attribute of a moto module (``Class.attribute`` for a class's) set to AWS's value;
    ``reason`` says why."""

    module: str
    attribute: str
    value: Any
    reason: str


# moto caps an account at 10 registries, 1,000 schemas and 1,000 schema versions in all (fewer
# versions than schemas once the cap on schemas is raised). AWS's quotas are adjustable and
# larger (we take 100 registries and 10,000 schemas per account and Region; the API numbers a
# schema's versions up to 100,000), and platforms with thousands of topics are what this project
# is for. moto reads these module globals at call time.
_GSR_QUOTAS = "moto.glue.glue_schema_registry_utils"
#: Schemas per account and Region by default; the quota is adjustable (an account with more
#: topics asks for more), which ``set_glue_schema_quota`` models.
GLUE_SCHEMA_QUOTA = 10_000
#: moto's cap on schema versions in the whole account (it counts every schema's first version
#: too), set to the highest version number AWS's API takes; an estate of more schemas than
#: that raises it with the schema quota (``set_glue_schema_quota``).
GLUE_SCHEMA_VERSION_CAP = 100_000
MOTO_PATCHES: tuple[MotoPatch, ...] = (
    MotoPatch(_GSR_QUOTAS, "MAX_REGISTRIES_ALLOWED", 100, "AWS: 100 registries per account"),
    MotoPatch(
        _GSR_QUOTAS, "MAX_SCHEMAS_ALLOWED", GLUE_SCHEMA_QUOTA, "AWS: 10,000 schemas per account"
    ),
    MotoPatch(
        _GSR_QUOTAS,
        "MAX_SCHEMA_VERSIONS_ALLOWED",
        GLUE_SCHEMA_VERSION_CAP,
        "AWS numbers versions to 100,000",
    ),
    MotoPatch(
        "moto.kafka.models",
        "FakeKafkaCluster._generate_arn",
        aws_shaped_cluster_arn,
        "AWS: arn:aws:kafka:<region>:<account>:cluster/<name>/<uuid>-<n>",
    ),
    MotoPatch(
        "moto.events.utils",
        "EventTemplateParser.DEFAULT_EVENT_INPUT_TEMPLATE",
        # moto's template leaves the account out of what a rule sends its target.
        '{"version": "0", "id": "<id>", "detail-type": "<detail-type>", "source": "<source>", '
        '"account": "<account>", "time": <time>, "region": "<region>", '
        '"resources": <resources>, "detail": <detail>}',
        "AWS: an event names its account (EventBridge user guide, 'Amazon EventBridge events')",
    ),
)

_patching = threading.Lock()


def apply_moto_patches() -> None:
    """Set every :data:`MOTO_PATCHES` attribute; calling it again changes nothing more."""
    with _patching:
        for patch in MOTO_PATCHES:
            owner = importlib.import_module(patch.module)
            *path, attribute = patch.attribute.split(".")
            for name in path:
                owner = getattr(owner, name)
            setattr(owner, attribute, patch.value)
    register_queue_policy()


def set_glue_schema_quota(schemas: int, schema_versions: int = GLUE_SCHEMA_VERSION_CAP) -> None:
    """The account's schemas per Region after a quota increase, and the schema versions moto
    lets the whole account hold (``/_sandbox/glue-limits``); a reset restores the defaults."""
    for name, count in (("schemas", schemas), ("schema_versions", schema_versions)):
        if type(count) is not int or count < 0:
            raise ValueError(f"{name} is a count, not {count!r}")
    quotas = importlib.import_module(_GSR_QUOTAS)
    quotas.MAX_SCHEMAS_ALLOWED = schemas
    quotas.MAX_SCHEMA_VERSIONS_ALLOWED = schema_versions
