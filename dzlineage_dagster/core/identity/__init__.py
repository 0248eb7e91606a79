"""Dataset identity: the one name each dataset has in the graph, and every other name a
producer may send for it.

:mod:`.kafka` names a topic of the MSK cluster (one namespace per cluster, whatever listener,
alias or connector property a producer used); :mod:`.sources` names a captured source table
(Debezium's naming, with a database host's aliases mapped to its canonical host); :mod:`.glue`
names a Glue Data Catalog table and maps the forms producers give it (OpenLineage's Glue
naming, Athena, dbt-glue, a storage location) to that name, given a view of the catalog. The
sync, the relay and ``trace`` call these and never build such names themselves.

Imports: :mod:`..connectors`, :mod:`..text` (how an error echoes a value).
"""
