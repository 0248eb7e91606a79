"""The Glue Data Catalog's lineage (``PostLineageEvent``, ``GetLineageNode``, the lineage AWS
records for every ``CreateTable``), answered from moto's Glue backend as one of moto's gaps.

- :mod:`.events`: the OpenLineage run and dataset events Glue accepts, their datasets named as
  Glue identifies them;
- :mod:`.graph`: the graph, DataZone's lineage graph with Glue's names and forms;
- :mod:`.handlers`: the operations, the graph kept on moto's Glue backend.
"""
