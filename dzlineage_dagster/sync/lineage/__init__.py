"""What DataZone holds of the lineage: posting and its conflicts, what DataZone made of
the events (health, read-back, nodes), downstream assets' lineage, impact and the
platform graph read for Dagster."""
