"""Batch changed topics into a few runs over contiguous partition ranges.

A run over dynamic partitions covers a contiguous range in their insertion order. Changed
topics scattered through that order would need a run each; merging nearby ranges bounds the
number of runs, at the price of re-reading the unchanged topics caught between them (which
the sync then skips as unchanged, with reads but no writes).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence


def changed_ranges(
    ordered_keys: Sequence[str], changed: Collection[str], *, max_ranges: int
) -> list[tuple[str, str]]:
    """``(first, last)`` key pairs covering every changed key, at most ``max_ranges`` of them.

    Ranges are maximal runs of consecutive changed keys; while there are too many, the two
    neighbours separated by the fewest unchanged keys merge.
    """
    if max_ranges < 1:
        raise ValueError("max_ranges must be at least 1")
    wanted = set(changed)
    unknown = wanted.difference(ordered_keys)
    if unknown:
        raise ValueError(f"changed keys missing from the partition order: {sorted(unknown)[:5]}")
    spans: list[list[int]] = []
    for index, key in enumerate(ordered_keys):
        if key not in wanted:
            continue
        if spans and spans[-1][1] == index - 1:
            spans[-1][1] = index
        else:
            spans.append([index, index])
    while len(spans) > max_ranges:
        _gap, at = min((spans[i + 1][0] - spans[i][1], i) for i in range(len(spans) - 1))
        spans[at : at + 2] = [[spans[at][0], spans[at + 1][1]]]
    return [(ordered_keys[start], ordered_keys[end]) for start, end in spans]
