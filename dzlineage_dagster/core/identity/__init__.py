"""Dataset identity: the one name of each dataset (a topic, a Glue table, a source table), and
every alias a producer may send that maps to it.

:mod:`.glue` names a Glue Data Catalog table and maps the forms producers give it (OpenLineage's
Glue naming, Athena, dbt-glue, a storage location) to that name, given a view of the catalog.

Imports: nothing else of the product (openlineage-python's naming and facets only).
"""
