"""The DataZone catalog, emulated: what a project makes and others find.

- :mod:`.smithy_forms`: reading form type models (Smithy IDL) and checking form content
  against them (required members, types, no unknown members);
- :mod:`.records`: the records of form and asset types (immutable: the same model again is the
  latest revision, a changed one adds revision n+1), assets and projects, and the managed
  ``amazon.datazone.*`` types every domain is born with; every asset type carries
  ``AssetCommonDetailsForm``;
- :mod:`.listings`: an asset published to the catalog (listing revisions, asynchronously);
- :mod:`.search`: ``Search`` over a domain's assets;
- :mod:`.glossary`: business glossaries and their terms;
- :mod:`.ownership`: ``UpdateAssetOwner``, an asset moved to another project (asynchronously,
  from or to the domain's administration project).
"""
