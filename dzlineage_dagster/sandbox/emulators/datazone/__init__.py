"""Amazon DataZone, emulated for the sandbox: domains, projects, form and asset types, assets,
search, and the OpenLineage-fed lineage graph.

:class:`~dzlineage_dagster.sandbox.protocol.aws.RestJsonService` does the wire work (routing,
validation against botocore's model, ``clientToken`` idempotency, serialization); this package
keeps DataZone's semantics, one concern a module:

- :mod:`.catalog`: form and asset types, assets and projects, listings, search, glossaries,
  moving an asset to another project (its own package);
- :mod:`.access`: domain units, policy grants and project memberships (its own package);
- :mod:`.lineage`: OpenLineage RunEvents -> job, run and dataset nodes with edges
  input -> run -> output, their history, and the link from a dataset node to the catalog asset
  with the same ``sourceIdentifier``;
- :mod:`.domain`: the state of one domain, and the check of an asset revision's forms against
  its type (each form's revision, the required forms, the content against the model);
- :mod:`.common`: new ids, timestamps and errors;
- :mod:`.emulator`: the operation handlers (``externalIdentifier`` is unique in the domain)
  and the shape of their outputs.
"""

from dzlineage_dagster.sandbox.emulators.datazone.emulator import DataZoneEmulator

__all__ = ["DataZoneEmulator"]
