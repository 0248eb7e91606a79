"""The sync engine, shared by the Dagster assets, jobs, checks and sensor, `dzlineage sync` and
the benchmarks: one run's state (`run_state`), the stages and their runner, the headless sync;
`catalog/` what it keeps in DataZone and SSM, `lineage/` what DataZone made of the lineage,
`checks/` the read-only checks before and beside a run."""
