"""The project's Dagster components (declared in ``defs/``, loaded by ``definitions.py``)."""

from dzlineage_dagster.components.platform_graph import PlatformGraphComponent

__all__ = ["PlatformGraphComponent"]
