"""Amazon DataZone, emulated for the sandbox: domains, projects, form and asset types, assets,
search, and the OpenLineage-fed lineage graph.

:class:`~dzlineage_dagster.sandbox.protocol.aws.RestJsonService` does the wire work (routing,
validation against botocore's model, ``clientToken`` idempotency, serialization); this package
keeps DataZone's semantics, one concern a module:

- :mod:`.smithy_forms`: reading form type models (Smithy IDL) and checking form content
  against them (required members, types, no unknown members);
- :mod:`.catalog`: the records of form and asset types (immutable: the same model again is the
  latest revision, a changed one adds revision n+1), assets and projects, and the managed
  ``amazon.datazone.*`` types every domain is born with; every asset type carries
  ``AssetCommonDetailsForm``;
- :mod:`.lineage`: OpenLineage RunEvents -> job, run and dataset nodes with edges
  input -> run -> output, their history, and the link from a dataset node to the catalog asset
  with the same ``sourceIdentifier``;
- :mod:`.domain`: the state of one domain, and the check of an asset revision's forms against
  its type (each form's revision, the required forms, the content against the model);
- :mod:`.search`: ``Search`` over a domain's assets;
- :mod:`.ownership`: ``UpdateAssetOwner``, an asset moved to another project (asynchronously,
  from or to the domain's administration project);
- :mod:`.emulator`: the operation handlers (``externalIdentifier`` is unique in the domain)
  and the shape of their outputs.
"""

from dzlineage_dagster.sandbox.emulators.datazone.emulator import DataZoneEmulator

__all__ = ["DataZoneEmulator"]
