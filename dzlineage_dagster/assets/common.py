"""What the assets, checks and sensors share."""

from __future__ import annotations

from dagster import DynamicPartitionsDefinition

#: One partition per Kafka topic, managed by the registry sensor.
kafka_topics = DynamicPartitionsDefinition(name="kafka_topics")

GROUP = "datazone_lineage"
OWNERS = ["team:data-platform"]
