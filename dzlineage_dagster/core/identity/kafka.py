"""The one name of a topic of the MSK cluster, and every Kafka name a producer may send for it.

OpenLineage names a topic ``kafka://<host:port>`` + ``<topic>`` by the FIRST bootstrap server
its producer was given (openlineage-spark's ``KafkaBootstrapServerResolver``, openlineage-flink's
``KafkaUtils``); Debezium by its connector's
``openlineage.integration.dataset.kafka.bootstrap.servers`` (else
``schema.history.internal.kafka.bootstrap.servers``, else ``kafka://unknown:unknown``), whole
value. An MSK cluster answers on several listeners (GetBootstrapBrokers: plaintext 9092, TLS
9094, SASL/SCRAM 9096, IAM 9098, public 9194/9196/9198, multi-VPC), each broker by its own
host, so one topic arrives under many names, and DataZone joins only identical ones.

:class:`KafkaCluster` is the cluster's identity: the one namespace its topics are named by
(from the cluster alone, never from a connector's property, so a connector reconfigured never
moves a topic's node), and every ``host:port`` of every listener plus the configured aliases,
which all map to it. Brokers are matched by ``host:port``, not by host: the port is what tells
two clusters behind one host apart (``localhost:9092`` and ``localhost:9093``, a proxy or a load
balancer fronting several clusters), and every port of this cluster is listed by
GetBootstrapBrokers anyway. An alias given without a port matches its host on any port.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Literal

from openlineage.client.naming import dataset as naming

from dzlineage_dagster.core.connectors.debezium import DebeziumSource
from dzlineage_dagster.core.text import shown

KAFKA_SCHEME = "kafka://"
#: What Debezium's ``KafkaDatasetNamespaceResolver`` names topics by when its connector sets
#: neither bootstrap property.
UNKNOWN_NAMESPACE = "kafka://unknown:unknown"
#: GetBootstrapBrokers' listeners the canonical broker is taken from, first present wins: the
#: ones inside the cluster's VPC, IAM first (the demo's and MSK Connect's usual one).
PREFERRED_LISTENERS = (
    "BootstrapBrokerStringSaslIam",
    "BootstrapBrokerStringTls",
    "BootstrapBrokerStringSaslScram",
    "BootstrapBrokerString",
)
TopicNamespaceStyle = Literal["bootstrap", "cluster"]
#: A listener scheme before an entry of a bootstrap list (``SASL_SSL://``).
_LISTENER_SCHEMES = re.compile(r"(?:^|(?<=,))\s*[A-Za-z][A-Za-z0-9_]*://")


def kafka_dataset_namespace(bootstrap_servers: str) -> str:
    """``kafka://<host:port>`` of the first bootstrap server, as OpenLineage names it.

    Accepts a ``bootstrap.servers`` list (``b-1.x:9098,b-2.x:9098``), with or without a
    listener scheme (``SASL_SSL://b-1.x:9098``).
    """
    first = bootstrap_servers.split(",")[0].strip()
    address = first.split("://", 1)[-1]
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit():
        raise ValueError(
            f"bootstrap servers {bootstrap_servers!r} must start with host:port, "
            "e.g. 'b-1.cluster.kafka.us-east-1.amazonaws.com:9098'"
        )
    return naming.Kafka(bootstrap_server_host=host, port=port, topic="-").get_namespace()


def broker_addresses(broker_strings: Iterable[str]) -> list[str]:
    """Every ``host:port`` of bootstrap broker strings (``b-1.x:9098,SSL://b-2.x:9094``)."""
    addresses = []
    for value in broker_strings:
        for entry in value.split(","):
            address = entry.strip().split("://", 1)[-1]
            if address:
                addresses.append(address)
    return addresses


def preferred_broker_string(broker_strings: Mapping[str, str]) -> str:
    """The broker string of the cluster's first :data:`PREFERRED_LISTENERS` listener, as
    GetBootstrapBrokers gives it ("" when it gives none of them)."""
    return next((broker_strings[k] for k in PREFERRED_LISTENERS if broker_strings.get(k)), "")


def canonical_broker(broker_strings: Mapping[str, str]) -> str:
    """The ``host:port`` the cluster's topics are named by in the ``bootstrap`` style: the
    sorted-first broker of the preferred listener, so the order GetBootstrapBrokers lists its
    brokers in never moves it."""
    addresses = broker_addresses([preferred_broker_string(broker_strings)])
    if not addresses:
        raise ValueError(
            f"GetBootstrapBrokers names no broker on any of {', '.join(PREFERRED_LISTENERS)} "
            f"(it answered {sorted(broker_strings)})"
        )
    return min(address.lower() for address in addresses)


def _split_address(address: str) -> tuple[str, str | None]:
    """(host, port) of ``host[:port]``, lowercased; the port None when there is none."""
    address = address.strip().split("://", 1)[-1].lower()
    host, colon, port = address.rpartition(":")
    if colon and port.isdigit() and host and not host.endswith(":"):
        return host, port
    return address, None


def parse_broker_aliases(text: str | None) -> tuple[str, ...]:
    """The entries of a comma list of ``host[:port]`` (DZLINEAGE_KAFKA_BROKER_ALIASES)."""
    aliases = []
    for entry in (text or "").split(","):
        entry = entry.strip()
        if not entry:
            continue
        host, port = _split_address(entry)
        bare_colon = ":" in host and not host.startswith("[")  # only [IPv6] holds colons
        if not host or any(c in host for c in "/ =") or bare_colon:
            raise ValueError(
                f"{shown(entry)} is not host[:port], e.g. kafka-cluster-prod:9092 or kafka-cluster-prod"
            )
        aliases.append(f"{host}:{port}" if port else host)
    return tuple(aliases)


def check_pinned_namespace(namespace: str) -> str:
    """A pinned topic namespace (DZLINEAGE_TOPIC_NAMESPACE) as given, if it is ``kafka://``
    followed by a name without a path."""
    rest = namespace.removeprefix(KAFKA_SCHEME)
    if rest == namespace or not rest or "/" in rest or rest != rest.strip():
        raise ValueError(
            f"{shown(namespace)} is not a Kafka namespace: give kafka://<host:port> or "
            "kafka://<name>, e.g. kafka://b-1.cdc.abc123.c2.kafka.us-east-1.amazonaws.com:9098"
        )
    return namespace


@dataclass(frozen=True)
class KafkaCluster:
    """One MSK cluster's Kafka identity (see the module's docstring)."""

    #: The namespace every topic of the cluster is named by.
    namespace: str
    #: ``kafka://<canonical broker>``: the ``bootstrap`` style's namespace.
    bootstrap_namespace: str
    #: ``kafka://<cluster name>``: the ``cluster`` style's (and AWS DSF's) namespace.
    cluster_namespace: str
    #: Every ``host:port`` that names the cluster, lowercased: each broker on each listener,
    #: and the aliases given with a port.
    addresses: frozenset[str]
    #: Aliases given without a port: their host names the cluster on any port.
    alias_hosts: frozenset[str] = frozenset()

    @classmethod
    def of(
        cls,
        *,
        name: str,
        broker_strings: Mapping[str, str],
        style: TopicNamespaceStyle = "bootstrap",
        pinned: str | None = None,
        aliases: Iterable[str] = (),
    ) -> KafkaCluster:
        """The identity of the cluster ``name`` whose GetBootstrapBrokers answered
        ``broker_strings``; ``pinned`` (a ``kafka://`` namespace) wins over ``style``."""
        bootstrap_namespace = f"{KAFKA_SCHEME}{canonical_broker(broker_strings)}"
        cluster_namespace = f"{KAFKA_SCHEME}{name}"
        if pinned:
            namespace = check_pinned_namespace(pinned)
        else:
            namespace = cluster_namespace if style == "cluster" else bootstrap_namespace
        addresses = {a.lower() for a in broker_addresses(broker_strings.values())}
        alias_hosts = set()
        for alias in aliases:
            host, port = _split_address(alias)
            if port is None:
                alias_hosts.add(host)
            else:
                addresses.add(f"{host}:{port}")
        return cls(
            namespace=namespace,
            bootstrap_namespace=bootstrap_namespace,
            cluster_namespace=cluster_namespace,
            addresses=frozenset(addresses),
            alias_hosts=frozenset(alias_hosts),
        )

    def topic_dataset(self, topic: str) -> tuple[str, str]:
        """The (namespace, name) of ``topic``: its asset's sourceIdentifier and every hop's."""
        return self.namespace, topic

    def owns(self, address: str) -> bool:
        """Whether ``host[:port]`` is a broker (or an alias) of this cluster."""
        host, port = _split_address(address)
        return f"{host}:{port}" in self.addresses or host in self.alias_hosts

    def foreign_servers(self, bootstrap_servers: str) -> list[str]:
        """The servers of a ``bootstrap.servers`` list that are not this cluster's."""
        return [a for a in broker_addresses([bootstrap_servers]) if not self.owns(a)]

    def names(self, namespace: str) -> bool:
        """Whether a dataset namespace names this cluster: the canonical one, the cluster's
        name, or ``kafka://`` + brokers (a comma list, as Debezium sends its whole property)
        every one of which is this cluster's."""
        if namespace in (self.namespace, self.cluster_namespace):
            return True
        rest = namespace.removeprefix(KAFKA_SCHEME)
        if rest == namespace or not rest:
            return False
        # Each entry's listener scheme (SASL_SSL://host:port, which Kafka's clients take) goes.
        servers = _LISTENER_SCHEMES.sub("", rest).split("/", 1)[0]
        return bool(broker_addresses([servers])) and not self.foreign_servers(servers)

    def canonical(self, namespace: str) -> str | None:
        """The namespace a dataset named ``namespace`` takes, None when it is not this cluster's
        or already canonical."""
        if namespace != self.namespace and self.names(namespace):
            return self.namespace
        return None


@dataclass(frozen=True)
class DebeziumTopics:
    """The platform's Debezium connectors, as far as naming Debezium's topics goes: a topic
    Debezium sent as :data:`UNKNOWN_NAMESPACE` is the cluster's when the event's job namespace
    is the ``topic.prefix`` of one of them (Debezium's job namespace) and that connector writes
    the topic."""

    sources: tuple[DebeziumSource, ...] = ()

    def writes(self, topic_prefix: str, topic: str) -> bool:
        return any(
            source.topic_prefix == topic_prefix and _writes(source, topic)
            for source in self.sources
        )


def _writes(source: DebeziumSource, topic: str) -> bool:
    """Whether ``source`` sends a table's changes to ``topic``: a table its include list names,
    or whose own topic ``topic`` is, routed by its transforms to ``topic``."""
    return any(
        not route.routed.is_ambiguous and route.routed.topic == topic
        for route in source.table_routes([topic])
    )
