"""The product's pure logic: no dagster, no boto3, nothing that waits or calls AWS.

Each package holds one concern and imports only the packages listed in its own docstring:

- :mod:`.connectors` - how a source table becomes a topic and a topic an Iceberg table, read
  from the connectors' configuration (Debezium, Kafka Connect transforms, the Iceberg sink).
- :mod:`.schemas` - a registry schema's columns (Avro, JSON Schema, Protobuf) and what a new
  version changes.
- :mod:`.mapping` - where a schema's asset mapping lives in SSM and how records are packed.
- :mod:`.lineage` - OpenLineage events for DataZone, the relay's rewrites, and reading back
  what DataZone made of them.
- :mod:`.identity` - the one name of each dataset, and the aliases producers send for it.
- :mod:`.changes` - what changed in the platform, read from CloudTrail's events (EventBridge).
- :mod:`.catalog` - DataZone's form and asset types, asset plans, curation, reconcile.
- :mod:`.ownership` - who owns a topic, and moving assets between projects.
- :mod:`.aws` - limits and permissions AWS sets: quotas, pacing, authorization policies.
- :mod:`.doctor` - the preflight's verdicts and table (it reads every package's rules).
- :mod:`.scopes` - the registries one deployment serves, and the partition keys that name them.
- :mod:`.topic_states` - the words a topic's state is told in (sync, dry run, Dagster UI).
- :mod:`.text` - how an error message echoes a value it refuses.
"""
