"""The transfers that move an asset between projects, through the domain's administration
project (core/ownership/moves.py)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dzlineage_dagster.core.ownership.moves import MoveError, transfer_route

ids = st.text("abcdef0123456789", min_size=1, max_size=4)


@pytest.mark.parametrize(
    ("owner", "route"),
    [
        ("A", ["ADMIN", "B"]),  # neither is the administration project: two transfers
        ("ADMIN", ["B"]),  # a move interrupted between its transfers: the second one
        ("B", []),  # already moved
    ],
)
def test_an_asset_goes_through_the_administration_project(owner, route):
    assert transfer_route(owner, source="A", target="B", administration="ADMIN") == route


def test_one_transfer_when_the_source_or_the_target_is_the_administration_project():
    assert transfer_route("ADMIN", source="ADMIN", target="B", administration="ADMIN") == ["B"]
    assert transfer_route("A", source="A", target="ADMIN", administration="ADMIN") == ["ADMIN"]


def test_an_asset_of_a_third_project_is_refused_naming_it():
    with pytest.raises(MoveError, match="owned by project C, neither the source project A"):
        transfer_route("C", source="A", target="B", administration="ADMIN")


@given(owner=ids, source=ids, target=ids, administration=ids)
def test_every_route_ends_at_the_target_and_each_transfer_is_one_datazone_allows(
    owner, source, target, administration
):
    try:
        route = transfer_route(owner, source=source, target=target, administration=administration)
    except MoveError:
        assert owner not in (source, target, administration)
        return
    at = owner
    for hop in route:
        assert hop != at
        assert administration in (at, hop), "DataZone moves only from or to it"
        at = hop
    assert at == target
    assert len(route) <= 2
