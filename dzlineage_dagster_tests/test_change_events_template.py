"""deploy/change-events.yaml, the CloudFormation template of the change queue: its rules watch
exactly the calls the product reads, its queue has a dead-letter queue and lets only those
rules send, and, created in the sandbox (moto's CloudFormation), the platform's changes reach
the queue through its very rules."""

from __future__ import annotations

import contextlib
from pathlib import Path

import yaml

from dzlineage_dagster.core.changes.cloudtrail import (
    ConnectorChange,
    SchemaChange,
    TableChange,
    event_patterns,
    read_message,
)
from dzlineage_dagster.core.doctor import Status, change_queue_row, eventbridge_may_send

TEMPLATE = Path(__file__).resolve().parents[1] / "deploy" / "change-events.yaml"


def resources(kind: str) -> dict[str, dict]:
    template = yaml.safe_load(TEMPLATE.read_text())
    return {n: r for n, r in template["Resources"].items() if r["Type"] == kind}


def test_the_templates_rules_watch_exactly_the_calls_the_product_reads():
    rules = resources("AWS::Events::Rule")
    patterns = [rule["Properties"]["EventPattern"] for rule in rules.values()]
    assert sorted(patterns, key=str) == sorted(event_patterns().values(), key=str)
    for rule in rules.values():
        [target] = rule["Properties"]["Targets"]
        assert target["Arn"] == {"Fn::GetAtt": ["ChangeQueue", "Arn"]}


def test_the_queue_has_a_dead_letter_queue_and_only_the_rules_may_send_to_it():
    queue = resources("AWS::SQS::Queue")["ChangeQueue"]["Properties"]
    assert queue["RedrivePolicy"]["deadLetterTargetArn"] == {
        "Fn::GetAtt": ["DeadLetterQueue", "Arn"]
    }
    [policy] = resources("AWS::SQS::QueuePolicy").values()
    [statement] = policy["Properties"]["PolicyDocument"]["Statement"]
    assert statement["Principal"] == {"Service": "events.amazonaws.com"}
    assert statement["Action"] == "sqs:SendMessage"
    senders = statement["Condition"]["ArnEquals"]["aws:SourceArn"]
    assert senders == [{"Fn::GetAtt": [name, "Arn"]} for name in resources("AWS::Events::Rule")]


def test_the_platforms_changes_reach_the_templates_queue_through_its_rules(platform):
    cloudformation = platform.client("cloudformation")
    cloudformation.create_stack(StackName="dzlineage-changes", TemplateBody=TEMPLATE.read_text())
    [stack] = cloudformation.describe_stacks(StackName="dzlineage-changes")["Stacks"]
    outputs = {o["OutputKey"]: o["OutputValue"] for o in stack["Outputs"]}
    # The stack's queue is as doctor wants it: its policy lets the rules send, it redrives.
    attributes = platform.client("sqs").get_queue_attributes(
        QueueUrl=outputs["QueueUrl"], AttributeNames=["All"]
    )["Attributes"]
    row = change_queue_row(outputs["QueueUrl"], attributes)
    assert row.status is Status.OK, row
    assert eventbridge_may_send(attributes["Policy"])

    platform.register_new_version("shop.sales.orders", "coupon_code")
    glue = platform.client("glue")
    table = glue.get_table(DatabaseName="lakehouse", Name="sales_orders")["Table"]
    glue.update_table(
        DatabaseName="lakehouse",
        TableInput={k: table[k] for k in ("Name", "StorageDescriptor", "TableType", "Parameters")},
    )
    connect = platform.client("kafkaconnect")
    [summary, *_] = connect.list_connectors()["connectors"]
    connect.delete_connector(connectorArn=summary["connectorArn"])
    # Calls the rules do not watch, and a watched call that failed, send nothing.
    glue.get_schema(SchemaId={"SchemaArn": platform.schema_arn("shop.sales.orders")})
    with contextlib.suppress(glue.exceptions.EntityNotFoundException):
        glue.delete_table(DatabaseName="lakehouse", Name="no_such_table")

    sqs = platform.client("sqs")
    bodies = []
    while answer := sqs.receive_message(QueueUrl=outputs["QueueUrl"], MaxNumberOfMessages=10).get(
        "Messages"
    ):
        bodies += [message["Body"] for message in answer]
    changes = [read_message(body, platform.settings.registry_name) for body in bodies]
    assert sorted((type(c).__name__, c.action) for c in changes) == [
        (ConnectorChange.__name__, "DeleteConnector"),
        (SchemaChange.__name__, "RegisterSchemaVersion"),
        (TableChange.__name__, "UpdateTable"),
    ]
    [schema] = [c for c in changes if isinstance(c, SchemaChange)]
    assert schema.topic == "shop.sales.orders"
    [connector] = [c for c in changes if isinstance(c, ConnectorChange)]
    assert connector.connector == summary["connectorName"]
