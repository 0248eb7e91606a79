"""The DataZone catalog the sync keeps: custom types, the schema -> asset mapping store and
its version sweep, reconcile, asset moves between projects, owners."""
