"""Source table -> topic -> Iceberg table, from the connectors' own configuration.

Start at :mod:`.topology` (the whole platform's edges); :mod:`.debezium` names a source
table's topic, :mod:`.transforms` applies a connector's ``transforms`` chain (with
:mod:`.java_regex` for its patterns), :mod:`.iceberg_sink` routes a topic to its tables,
:mod:`.table_mapping` is the naming-convention fallback, :mod:`.topics` reads a registry
schema's topic and :mod:`.report` turns the topology into what the UI shows.

Imports: nothing outside this package.
"""
