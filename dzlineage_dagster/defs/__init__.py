"""The project's `dg` defs folder: one sub-folder per component, each with its defs.yaml."""
