"""The incremental layout's free-spot search: the gap-based search gives the spot the
brute-force search (every candidate against every interval) gave, without its O(n^2).

Opening a 250-node part of a 3.2k-node encoder spent 10 s of CPU in the brute-force search
(issue 30); the answer must not change with the speed."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from editor.layout.incremental import MARGIN, _free_spot


def brute_force(occupied, width, desired):
    """The search as it was: candidates tried against every interval."""
    cands = [desired, MARGIN]
    for a, b in occupied:
        cands += [b, a - width]
    best = None
    for c in cands:
        if c < 0:
            continue
        if all(c + width <= a or c >= b for a, b in occupied):
            d = abs(c - desired)
            if best is None or d < best[0] or (d == best[0] and c < best[1]):
                best = (d, c)
    return max([MARGIN] + [b for _, b in occupied]) if best is None else best[1]


# halves: sums are exact, so both searches see the same fits (layout coordinates are not
# denormals; rounding is not what this checks)
coord = st.integers(-120, 900).map(lambda k: k / 2)
length = st.integers(0, 240).map(lambda k: k / 2)
interval = st.tuples(coord, length).map(lambda t: (t[0], t[0] + t[1]))


@settings(max_examples=150, deadline=None)
@given(st.lists(interval, max_size=9), length, coord)
def test_free_spot_is_the_brute_force_spot(occupied, width, desired):
    got = _free_spot(occupied, width, desired)
    want = brute_force(occupied, width, desired)
    assert got >= 0, f"spot {got} left of 0 (occupied {occupied}, width {width}, desired {desired})"
    assert all(got + width <= a + 1e-9 or got >= b - 1e-9 for a, b in occupied), (
        f"spot {got}..{got + width} overlaps {occupied}")
    # (never farther; it may be nearer where the old search refused an exact fit after rounding)
    assert abs(got - desired) <= abs(want - desired) + 1e-9, (
        f"spot {got} is farther from {desired} than the brute-force spot {want} (occupied {occupied})")


def test_free_spot_examples():
    assert _free_spot([], 50, 100) == 100, "nothing occupied: the desired spot"
    assert _free_spot([], 50, -10) == MARGIN, "nothing occupied, desired left of 0: the margin"
    assert _free_spot([(90, 160)], 50, 110) == 160, "right of the interval (50 away) is nearer than its left (70)"
    assert _free_spot([(90, 160)], 50, 100) == 40, "a tie goes to the left"
    assert _free_spot([(140, 200)], 50, 100) == 90, "left of the interval, flush"
    assert _free_spot([(0, 100), (120, 300)], 50, 100) == 300, "a 20-wide gap cannot hold 50"
