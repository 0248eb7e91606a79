"""Who owns what: owner names from configuration (:mod:`.owners`: Glue schema tags, connector
configuration, checked against what Dagster accepts) and the transfers that move an asset to
another project (:mod:`.moves`).

Imports: nothing outside this package.
"""
