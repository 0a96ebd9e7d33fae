import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from icml26.upipe import HeadGeometry


def _valid(c, h, hk, u):
    try:
        return HeadGeometry.build(c, h, hk, u)
    except ValueError:
        return None


@settings(max_examples=60, deadline=None)
@given(
    c=st.sampled_from([1, 2, 4, 8]), h_mult=st.integers(1, 4), g=st.sampled_from([1, 2, 4, 8]), u_mult=st.integers(1, 4)
)
def test_pairing_invariants(c, h_mult, g, u_mult):
    h = c * h_mult * g if c * h_mult * g >= g else g
    hk = h // g
    geo = _valid(c, h, hk, c * u_mult)
    if geo is None:
        return
    geo.validate()
    order = geo.order()
    assert sorted(order) == list(range(h))  # every query head exactly once
    for t in range(h // c):
        for r in range(c):
            assert geo.query_head(t, r) // g == geo.kv_head(t, r)
    inv = geo.inverse_order()
    assert [order[inv[q]] for q in range(h)] == list(range(h))
    assert sorted(q for s in range(geo.num_stages) for q in geo.stage_query_heads(s)) == list(range(h))


def test_reference_formula_u_equals_c():
    geo = HeadGeometry.build(2, 8, 4)  # g = 2
    # kv(s, r) = (s // g) * C + r ; query(s, r) = kv * g + s % g
    assert [geo.kv_head(s, r) for s in range(4) for r in range(2)] == [0, 1, 0, 1, 2, 3, 2, 3]
    assert [geo.query_head(s, r) for s in range(4) for r in range(2)] == [0, 2, 1, 3, 4, 6, 5, 7]
    assert geo.num_stages == 4 and geo.stage_starts_kv(0) and not geo.stage_starts_kv(1) and geo.stage_starts_kv(2)


def test_replication_when_fewer_kv_heads_than_ranks():
    geo = HeadGeometry.build(4, 8, 2)
    assert geo.kv_replicas == 2 and geo.kv_heads_eff == 4
    geo.validate()
    assert {geo.kv_head(t, r) for t in range(2) for r in range(4)} == {0, 1}
    geo1 = HeadGeometry.build(4, 8, 1)
    geo1.validate()
    assert all(geo1.kv_head(t, r) == 0 for t in range(2) for r in range(4))


@pytest.mark.parametrize(
    "args, word",
    [
        ((3, 8, 8), "num_heads"),  # H % C
        ((2, 8, 3), "num_kv_heads"),  # Hkv does not divide H
        ((4, 24, 6), "num_kv_heads"),  # Hkv neither multiple nor divisor of C
        ((2, 8, 8, 3), "heads_per_stage"),  # U not a multiple of C
        ((2, 8, 8, 12), "heads_per_stage"),  # U does not divide H
        ((2, 12, 4, 4), "divide one another"),  # u = 2, g' = 3
        ((0, 8, 8), "cp_size"),
    ],
)
def test_divisibility_errors_name_the_argument(args, word):
    with pytest.raises(ValueError, match=word):
        HeadGeometry.build(*args)


def test_type_errors():
    with pytest.raises(TypeError, match="num_heads"):
        HeadGeometry.build(2, 8.0, 8)
    with pytest.raises(ValueError, match="stage index"):
        HeadGeometry.build(2, 8, 8).query_head(4, 0)
