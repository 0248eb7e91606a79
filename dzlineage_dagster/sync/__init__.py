"""The sync engine: one run's state, the mapping store, the stages and their runner, shared by
the Dagster assets, jobs, checks and sensor, `dzlineage sync` and the benchmarks."""
