"""Amazon MSK and MSK Connect: the cluster the topics live on, and its connectors."""

from __future__ import annotations

from typing import Any, ClassVar

from dzlineage_dagster.resources.base import AwsClientResource


class MskResource(AwsClientResource):
    """Reads the cluster (service `kafka`) and its connectors (service `kafkaconnect`)."""

    service_names: ClassVar[tuple[str, ...]] = ("kafka", "kafkaconnect")

    def describe_cluster(self, cluster_arn: str) -> dict[str, Any]:
        return self.client("kafka").describe_cluster_v2(ClusterArn=cluster_arn)["ClusterInfo"]

    def bootstrap_brokers(self, cluster_arn: str) -> dict[str, str]:
        """The broker strings by listener (`BootstrapBrokerString`, `...SaslIam`, ...)."""
        response = self.client("kafka").get_bootstrap_brokers(ClusterArn=cluster_arn)
        return {k: v for k, v in response.items() if k.startswith("BootstrapBroker")}

    def connector_summaries(self) -> list[dict[str, Any]]:
        """ListConnectors, every page: names, ARNs, `currentVersion`, `creationTime`, but no
        configuration (the connector sensor's cheap idle check)."""
        return self.paginate("kafkaconnect", "list_connectors", "connectors", page_size=100)

    def connectors(self) -> list[dict[str, Any]]:
        """Every connector with its full description (incl. `connectorConfiguration`)."""
        connect = self.client("kafkaconnect")
        return [
            connect.describe_connector(connectorArn=s["connectorArn"])
            for s in self.connector_summaries()
        ]
