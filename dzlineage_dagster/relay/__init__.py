"""The OpenLineage relay: producers post OpenLineage HTTP, the relay posts to DataZone.

:mod:`.service` is the relay; :mod:`.server` serves it (``dzlineage relay``) with the durable
:mod:`.spool`; :mod:`.lambda_handler` runs it behind a Lambda function URL. The event logic is
in :mod:`dzlineage_dagster.core.lineage.relay_events`.
"""
