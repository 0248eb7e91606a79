"""DataZone's side of a topic: types, forms, asset plans, curation, reconcile.

:mod:`.forms` defines the form and asset types (read by :mod:`.smithy`, checked against
others' extensions by :mod:`.type_extension`); :mod:`.discovery` turns a registry listing into
topics and changes (:mod:`.registry_cursor` remembers the last one in buckets); :mod:`.planning` decides an asset's name and content; :mod:`.curation`
keeps people's edits; :mod:`.reconcile` compares registry, mapping and DataZone;
:mod:`.partition_ranges` batches changed topics into runs.

Imports: :mod:`..schemas`, :mod:`..connectors`, :mod:`..mapping`, :mod:`..lineage`.
"""
