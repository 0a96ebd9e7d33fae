"""Exact expected revenue of a finite menu for uniform types: closed forms, agreement with sampling, bad input."""

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from icml26.gcf_layer import (
    FinitelyConvex,
    MenuMechanism,
    RochetNet,
    exact_revenue,
    linear_kernel,
    menu_exact_revenue,
    neg_lp_cost,
    sqrt_value_kernel,
)
from icml26.gcf_layer.exact import menu_regions

MV_OPT = 4 / 9 + 2 * math.sqrt(2) / 27


def test_closed_forms_are_reproduced_to_round_off():
    mv = exact_revenue([[0, 0], [1, 0], [0, 1], [1, 1]], [0, 2 / 3, 2 / 3, (4 - math.sqrt(2)) / 3])
    assert mv == pytest.approx(MV_OPT, abs=1e-14)
    assert exact_revenue([[0], [1]], [0, 0.5]) == pytest.approx(0.25, abs=1e-15)
    assert exact_revenue([[0, 0], [1, 1]], [0, math.sqrt(2 / 3)]) == pytest.approx((2 / 3) * math.sqrt(2 / 3))
    p = 1 / math.sqrt(3)  # unit demand: both items at the posted price 1/sqrt(3)
    assert exact_revenue([[0, 0], [1, 0], [0, 1]], [0, p, p]) == pytest.approx(2 / (3 * math.sqrt(3)), abs=1e-14)
    # profit with a seller cost: one item at price 3/4 with cost 1/2 sells to a quarter of the types
    assert exact_revenue([[0], [1]], [0, 0.75], [0, 0.25]) == pytest.approx(0.25 * 0.25)


def test_identical_options_are_counted_once_and_regions_partition_the_box():
    s = [[0, 0], [0.5, 0.5], [0.5, 0.5], [1, 0]]
    p = [0, 0.4, 0.4, 0.6]
    r = menu_regions(s, p)
    assert r.sum() == pytest.approx(1.0) and r[2] == 0.0
    assert exact_revenue(s, p) == pytest.approx(exact_revenue([s[0], s[1], s[3]], [p[0], p[1], p[3]]))


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 10_000), st.sampled_from([1, 2]), st.integers(1, 12))
def test_exact_revenue_agrees_with_monte_carlo(seed, d, m):
    rng = np.random.default_rng(seed)
    s = np.vstack([np.zeros(d), rng.random((m, d))])
    p = np.r_[0.0, rng.random(m) * d]
    x = rng.random((200_000, d))
    u = x @ s.T - p
    mc = p[u.argmax(1)]
    assert exact_revenue(s, p) == pytest.approx(mc.mean(), abs=5 * mc.std() / math.sqrt(len(x)) + 1e-9)


def test_mechanism_and_rochetnet_exact_revenue_match_their_menus():
    g = torch.Generator().manual_seed(0)
    layer = FinitelyConvex(6, 2, 2, linear_kernel, y_bounds=(0.0, 1.0), default_option=True, generator=g,
                           b_init=torch.rand(6, generator=g))  # fmt: skip
    mech = MenuMechanism(layer)
    Y, b = mech.menu()
    assert mech.exact_revenue() == pytest.approx(exact_revenue(Y.double().numpy(), b.double().numpy()), abs=1e-12)
    fresh = torch.rand(400_000, 2, generator=g)
    assert mech.exact_revenue() == pytest.approx(mech.revenue(fresh), abs=0.004)
    rn = RochetNet(5, 2, generator=g)
    assert rn.exact_revenue() == pytest.approx(rn.revenue(fresh), abs=0.004)
    # a seller cost and a non-linear (but type-affine) kernel: profit of the square-root buyer
    sq = FinitelyConvex(4, 1, 1, sqrt_value_kernel, y_bounds=(0.0, 1.0), default_option=True, generator=g,
                        b_init=torch.rand(4, generator=g) * 0.5)  # fmt: skip
    cost = lambda y: (y**2).sum(1) / 2  # noqa: E731
    m2 = MenuMechanism(sq, cost)
    assert m2.exact_revenue() == pytest.approx(m2.revenue(torch.rand(400_000, 1, generator=g)), abs=0.003)
    # the menu sold to another buyer: the kernel argument
    lin = menu_exact_revenue(*[t.double() for t in sq.options()], linear_kernel, cost)
    assert m2.exact_revenue(linear_kernel) == pytest.approx(lin)


def test_bad_input_names_the_argument():
    with pytest.raises(ValueError, match="slopes"):
        exact_revenue(np.zeros((3, 3)), np.zeros(3))
    with pytest.raises(ValueError, match="prices"):
        exact_revenue(np.zeros((3, 2)), np.zeros(2))
    with pytest.raises(ValueError, match="profits"):
        exact_revenue(np.zeros((3, 2)), np.zeros(3), np.zeros(4))
    with pytest.raises(ValueError, match="finite"):
        exact_revenue([[0.0], [np.nan]], [0.0, 0.5])
    with pytest.raises(ValueError, match="kernel must be affine"):
        menu_exact_revenue(torch.rand(3, 2, dtype=torch.float64), torch.rand(3, dtype=torch.float64), neg_lp_cost(3))
    with pytest.raises(ValueError, match="alloc"):
        menu_exact_revenue(torch.rand(3, 3), torch.rand(3), linear_kernel)
