"""Plain-text tables of the measurements: systems side by side, one table per size."""

from __future__ import annotations

import statistics
from collections.abc import Sequence

from benchmarks.scenarios import (
    MAX_FAULT_RUNS,
    SCENARIOS,
    Cell,
    DelimiterProbe,
    FaultResult,
)

LABEL_WIDTH = 30  # fits "    glue.PostLineageEvent" and DataZone's
COLUMN_WIDTH = 24


def _row(label: str, values: Sequence[str]) -> str:
    # A value wider than its column (10,000-topic lineage summaries) still keeps two spaces.
    return label.ljust(LABEL_WIDTH) + "".join(f"  {v}".rjust(COLUMN_WIDTH) for v in values)


def _by_system(cells: Sequence[Cell], scenario: str) -> dict[str, list[Cell]]:
    grouped: dict[str, list[Cell]] = {}
    for cell in cells:
        if cell.scenario == scenario:
            grouped.setdefault(cell.system, []).append(cell)
    return grouped


def median_seconds(cells: Sequence[Cell]) -> float:
    return statistics.median(cell.measurement.seconds for cell in cells)


def _scenario_rows(grouped: dict[str, list[Cell]]) -> list[str]:
    """Counts come from the first repeat (the call log is exact); times are medians."""
    first = {system: runs[0] for system, runs in grouped.items()}
    calls = {system: cell.measurement.calls for system, cell in first.items()}
    services = sorted({s for metrics in calls.values() for s in metrics.by_service})
    written = sorted({s for metrics in calls.values() for s in metrics.writes_by_service})

    def counts(values: dict[str, int]) -> list[str]:
        return [f"{values.get(system, 0):,}" for system in first]

    rows = [_row("  AWS calls", counts({s: m.total for s, m in calls.items()}))]
    rows += [
        _row(f"    {service}", counts({s: m.by_service.get(service, 0) for s, m in calls.items()}))
        for service in services
    ]
    rows.append(_row("  writes", counts({s: m.writes for s, m in calls.items()})))
    rows += [
        _row(
            f"    {service}",
            counts({s: m.writes_by_service.get(service, 0) for s, m in calls.items()}),
        )
        for service in written
    ]
    rows.append(_row("  DataZone writes", counts({s: m.datazone_writes for s, m in calls.items()})))
    # Lineage posts by destination (DZLINEAGE_LINEAGE_DESTINATIONS): DataZone's, Glue's.
    posts = sorted(
        {op for m in calls.values() for op in m.by_operation if op.endswith(".PostLineageEvent")}
    )
    if posts:
        rows.append(_row("  lineage posts", counts({s: m.lineage_posts for s, m in calls.items()})))
        rows += [
            _row(f"    {op}", counts({s: m.by_operation.get(op, 0) for s, m in calls.items()}))
            for op in posts
        ]
    rows.append(
        _row("  wall time (s)", [f"{median_seconds(runs):.2f}" for runs in grouped.values()])
    )
    rows.append(
        _row(
            "  peak memory (MB)",
            [f"{max(c.measurement.peak_mb for c in runs):.0f}" for runs in grouped.values()],
        )
    )
    rows.append(_row("  assets per schema", [c.catalog.assets_summary() for c in first.values()]))
    rows.append(_row("  lineage edges", [c.catalog.lineage_summary() for c in first.values()]))
    outcomes = ["ok" if c.measurement.outcome.ok else "FAILED" for c in first.values()]
    rows.append(_row("  run", outcomes))
    return rows


def size_table(cells: Sequence[Cell]) -> str:
    """The table of one size: a block of rows per scenario, a column per system."""
    systems = list(dict.fromkeys(cell.system for cell in cells))
    repeats = len({cell.repeat for cell in cells})
    title = f"N = {cells[0].topics:,} topics" + (f" ({repeats} repeats)" if repeats > 1 else "")
    lines = [title, _row("", systems), "-" * (LABEL_WIDTH + COLUMN_WIDTH * len(systems))]
    for scenario in SCENARIOS:
        grouped = _by_system(cells, scenario)
        if grouped:
            lines.append(scenario)
            lines.extend(_scenario_rows(grouped))
    return "\n".join(lines)


def verdicts(cells: Sequence[Cell]) -> list[str]:
    """One line per scenario: calls, DataZone writes and time of each system."""
    lines = []
    for scenario in SCENARIOS:
        grouped = _by_system(cells, scenario)
        parts = [
            f"{system} {runs[0].measurement.calls.total:,} calls "
            f"({runs[0].measurement.calls.datazone_writes:,} DataZone writes, "
            f"{median_seconds(runs):.1f} s)"
            for system, runs in grouped.items()
        ]
        if parts:
            lines.append(f"{scenario}: " + " vs ".join(parts))
    return lines


def calls_ratio_lines(cells: Sequence[Cell], reference: str = "baseline") -> list[str]:
    """Per scenario, each system's calls as a multiple of the reference design's."""
    lines = []
    for scenario in SCENARIOS:
        grouped = _by_system(cells, scenario)
        if reference not in grouped:
            continue
        base = grouped[reference][0].measurement.calls.total
        parts = [
            f"{system} {runs[0].measurement.calls.total / base:.3f}x"
            for system, runs in grouped.items()
            if system != reference and base
        ]
        if parts:
            lines.append(f"calls / reference design's, {scenario}: " + ", ".join(parts))
    return lines


def fault_table(results: Sequence[FaultResult]) -> str:
    if not results:
        return ""
    lines = [
        f"Faults: {results[0].plan.describe()}; first sync of N = {results[0].topics:,}, "
        f"each system run at most {MAX_FAULT_RUNS} times",
    ]
    header = ("system", "run", "calls", "injected", "seconds", "assets", "lineage", "outcome")
    rows = []
    for result in results:
        for number, fault_run in enumerate(result.runs, start=1):
            measurement = fault_run.measurement
            rows.append(
                (
                    result.system,
                    str(number),
                    f"{measurement.calls.total:,}",
                    f"{measurement.calls.injected:,}",
                    f"{measurement.seconds:.1f}",
                    fault_run.catalog.assets_summary(),
                    fault_run.catalog.lineage_summary(),
                    measurement.outcome.detail[:90],
                )
            )
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    for row in [header, *rows]:
        lines.append(
            "  ".join(value.ljust(width) for value, width in zip(row, widths, strict=True))
        )
    lines += [
        f"{result.system}: {'converged' if result.converged else 'did NOT converge'} "
        f"after {len(result.runs)} run(s)"
        for result in results
    ]
    return "\n".join(lines)


def delimiter_report(probe: DelimiterProbe) -> str:
    catalog = probe.catalog
    lines = [
        f"The reference's literal delimiter {probe.delimiter!r}: its first mapping would be",
        f"  {probe.parameter_name}",
    ]
    for number, run in enumerate(probe.runs, start=1):
        lines.append(f"  run {number}: {run.outcome.detail} ({run.calls.total} calls)")
    lines.append(
        f"  afterwards: {catalog.assets} assets for {catalog.schemas} schemas "
        f"({catalog.duplicated_schemas} schema with duplicates, {catalog.missing_schemas} with "
        f"none), {catalog.lineage_events} lineage events"
    )
    return "\n".join(lines)
