"""The per-topic stages, one module each, every one split into a plan (reads only, what
`dzlineage sync --dry-run` shows) and its application.

- :mod:`.schema`: read the topic's schema from the registry.
- :mod:`.asset`: create, revise or leave alone the topic's DataZone asset.
- :mod:`.lineage`: post the topic -> Iceberg table edge to DataZone.
- :mod:`.retire`: deprecate or delete the assets of schemas that left the registry.

Each stage is idempotent and crash-safe: DataZone writes carry client tokens derived from what
they write, so a retry (by botocore, by a rerun after a crash) replays instead of duplicating.
The stages stage a topic's new mapping record in the run's
:class:`~dzlineage_dagster.sync.catalog.mapping_store.MappingStore`; the runner writes it once.
"""
