import pytest
from hypothesis import given
from hypothesis import strategies as st

from dzlineage_dagster.core.catalog.partition_ranges import changed_ranges

KEYS = [f"t{i:02d}" for i in range(10)]


def test_consecutive_changes_form_one_range():
    assert changed_ranges(KEYS, {"t02", "t03", "t04"}, max_ranges=4) == [("t02", "t04")]


def test_scattered_changes_merge_across_the_smallest_gap():
    # gaps: t01..t03 (1 unchanged), t03..t08 (4 unchanged): the first merges first.
    assert changed_ranges(KEYS, {"t01", "t03", "t08"}, max_ranges=2) == [
        ("t01", "t03"),
        ("t08", "t08"),
    ]


def test_unknown_keys_are_an_error_not_a_silent_drop():
    with pytest.raises(ValueError, match="missing from the partition order"):
        changed_ranges(KEYS, {"nope"}, max_ranges=1)


@given(
    changed=st.sets(st.sampled_from(KEYS)),
    max_ranges=st.integers(min_value=1, max_value=5),
)
def test_ranges_cover_every_change_within_the_bound(changed, max_ranges):
    ranges = changed_ranges(KEYS, changed, max_ranges=max_ranges)
    assert len(ranges) <= max_ranges
    covered = set()
    previous_end = -1
    for start, end in ranges:
        first, last = KEYS.index(start), KEYS.index(end)
        assert previous_end < first <= last  # ordered, disjoint
        assert start in changed and end in changed  # no range starts or ends on unchanged keys
        covered.update(KEYS[first : last + 1])
        previous_end = last
    assert changed <= covered
    runs = sum(
        1 for i, key in enumerate(KEYS) if key in changed and (i == 0 or KEYS[i - 1] not in changed)
    )
    if runs <= max_ranges:
        # No merge needed: one range per run of consecutive changes, no unchanged key synced.
        assert covered == changed and len(ranges) == runs
    else:
        # Merged only as far as the bound asks.
        assert len(ranges) == max_ranges
