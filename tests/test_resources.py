"""Property tests for the sparse resource algebra."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from invariants.readings import arithmetic as qty
from scheduler import resources as res

TYPES = st.sampled_from(["memory", "vcore", "gpu", "pods"])
amounts = st.dictionaries(TYPES, st.integers(0, 10**6), max_size=4)
signed = st.dictionaries(TYPES, st.integers(-10**6, 10**6), max_size=4)


@given(amounts, amounts)
def test_add_commutes_and_sub_undoes(a: dict[str, int], b: dict[str, int]) -> None:
    assert res.equal(res.add(a, b), res.add(b, a))
    assert res.equal(res.sub(res.add(a, b), b), a)


@given(amounts, amounts, amounts)
def test_add_associates(a: dict[str, int], b: dict[str, int], c: dict[str, int]) -> None:
    assert res.equal(res.add(res.add(a, b), c), res.add(a, res.add(b, c)))


@given(amounts, amounts)
def test_in_place_forms_agree_with_pure_ones(a: dict[str, int], b: dict[str, int]) -> None:
    x = dict(a)
    res.add_into(x, b)
    assert res.equal(x, res.add(a, b))
    assert all(x[k] for k in b if k in x), "a type the delta touched is never left at zero"
    res.sub_from(x, b)
    assert res.equal(x, a)


@given(amounts, amounts)
def test_fits_is_componentwise_le_over_the_ask(ask: dict[str, int], room: dict[str, int]) -> None:
    expected = all(v <= room.get(k, 0) for k, v in ask.items())
    assert res.fits(ask, room) is expected
    assert res.fits(ask, res.add(ask, room))


@given(amounts)
def test_missing_type_in_room_counts_as_zero(ask: dict[str, int]) -> None:
    assert res.fits(ask, {}) is res.is_zero(ask)


@given(amounts, amounts, amounts)
def test_fits_with_only_limits_the_types_the_limit_sets(
    ask: dict[str, int], used: dict[str, int], limit: dict[str, int]
) -> None:
    expected = all(used.get(k, 0) + v <= limit[k] for k, v in ask.items() if k in limit)
    assert res.fits_with(ask, used, limit) is expected
    if res.fits_with(ask, used, limit) and res.within(used, limit):
        assert res.within(res.add(used, ask), limit)


@given(amounts, amounts)
def test_le_is_a_partial_order(a: dict[str, int], b: dict[str, int]) -> None:
    assert res.le(a, a)
    if res.le(a, b) and res.le(b, a):
        assert res.equal(a, b)
    assert res.le(a, res.add(a, b))


def test_zero_entries_do_not_matter() -> None:
    assert res.equal({"memory": 0}, {})
    assert res.is_zero({"memory": 0, "vcore": 0})
    assert not res.any_positive({})
    assert res.add({"memory": 5}, {"memory": -5}) == {}
    assert res.has_negative(res.sub({}, {"memory": 1}))
    assert res.sub_floor({"memory": 1}, {"memory": 3, "vcore": 1}) == {}


@given(amounts, st.dictionaries(TYPES, st.integers(1, 10**6), max_size=4))
def test_shares_are_sorted_and_dominant_is_first(used: dict[str, int],
                                                 base: dict[str, int]) -> None:
    s = res.shares(used, base)
    assert s == sorted(s, reverse=True)
    assert res.dominant_share(used, base) == (s[0] if s else 0.0)
    for k, v in used.items():
        if k in base:
            assert v / base[k] in s


def test_shares_without_a_base_weigh_fully() -> None:
    assert res.shares({"memory": 10}, {}) == [10.0]
    assert res.shares({"memory": 10, "vcore": 1}, {"memory": 100, "vcore": 2}) == [0.5, 0.1]


def test_weighted_usage_is_the_weighted_mean_share() -> None:
    cap = {"memory": 100, "vcore": 10}
    assert res.weighted_usage({"memory": 50, "vcore": 10}, cap, {"memory": 1.0, "vcore": 1.0}) \
        == 0.75
    assert res.weighted_usage({"memory": 50}, cap, {"memory": 3.0, "vcore": 1.0}) == 0.375
    assert res.weighted_usage({"memory": 50}, {}, {"memory": 1.0}) == 0.0


@given(st.lists(amounts, max_size=6))
def test_total_equals_repeated_add(items: list[dict[str, int]]) -> None:
    acc: dict[str, int] = {}
    for r in items:
        acc = res.add(acc, r)
    assert res.total(items) == acc


def test_to_str_is_stable() -> None:
    assert res.to_str({"vcore": 1, "memory": 10}) == "{memory:10 vcore:1}"
    assert res.multiply({"memory": 3}, 0) == {}
    assert res.component_min({"memory": 3, "vcore": 1}, {"memory": 2}) == {"memory": 2}


@given(signed, signed)
def test_the_checkers_arithmetic_agrees_with_a_per_type_reading(
        a: dict[str, int], b: dict[str, int]) -> None:
    """``invariants.readings.arithmetic`` is the checker's own arithmetic (never the core's): its
    sum, difference and equality are the per-type ones, a missing type counting as zero."""
    types = sorted(set(a) | set(b))
    plus, minus = qty.plus(a, b), qty.minus(a, b)
    for k in types:
        assert plus.get(k, 0) == a.get(k, 0) + b.get(k, 0)
        assert minus.get(k, 0) == a.get(k, 0) - b.get(k, 0)
    assert 0 not in plus.values() and 0 not in minus.values()
    assert qty.same(a, b) == all(a.get(k, 0) == b.get(k, 0) for k in types)
    assert qty.same(a, qty.plus(a, {k: 0 for k in b}))
    assert qty.same(qty.minus(plus, b), a)
