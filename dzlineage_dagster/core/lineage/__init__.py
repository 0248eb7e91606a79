"""OpenLineage for DataZone, and what DataZone made of it.

:mod:`.openlineage` builds the run events and the dataset names that join them up;
:mod:`.state` remembers what was posted and which jobs a new post closes; :mod:`.health`
finds events DataZone failed after accepting them; :mod:`.readback` compares where lineage
landed with where it should; :mod:`.graph` walks DataZone's lineage for ``trace``/``orphans``;
:mod:`.relay_events` is what the relay does to others' events; :mod:`.platform_graph` is the
same lineage as nodes of Dagster's asset graph, and :mod:`.downstream` names a team's Dagster
assets below the platform's tables.

Imports: :mod:`..schemas`, :mod:`..connectors`, :mod:`..identity`.
"""
