"""How long a test waits for something to happen before it calls it a hang."""

#: Several times what a machine with both cores busy needs. A test asserts what happened, never
#: how soon: speed is the benchmarks' to measure (benchmarks/), not the suite's.
HANG_GUARD_SECONDS = 600.0
