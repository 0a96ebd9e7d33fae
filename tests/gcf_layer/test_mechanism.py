"""MenuMechanism and auction baselines: closed-form revenues, IC / IR of the hard menu, bad inputs."""

import math

import numpy as np
import pytest
import torch

from icml26.gcf_layer import (
    FinitelyConvex,
    MenuMechanism,
    PureBundling,
    RochetNet,
    SeparateSales,
    linear_kernel,
    sqrt_value_kernel,
)

torch.set_num_threads(1)
N = 200_000


def _menu(alloc, price, **kw) -> MenuMechanism:
    alloc = torch.tensor(alloc, dtype=torch.float64)
    layer = FinitelyConvex(
        alloc.shape[0],
        alloc.shape[1],
        alloc.shape[1],
        linear_kernel,
        y_init=alloc,
        b_init=torch.tensor(price, dtype=torch.float64),
        default_option=True,
        dtype=torch.float64,
        **kw,
    )
    return MenuMechanism(layer)


def _types(d: int, seed: int = 0, n: int = N) -> torch.Tensor:
    return torch.rand(n, d, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)


def _midpoints(m: int = 20_000) -> torch.Tensor:
    """Midpoint quadrature nodes of U[0, 1] (exact-ish expectations for 1-D types)."""
    return ((torch.arange(m, dtype=torch.float64) + 0.5) / m)[:, None]


def test_posted_price_menu_revenue_is_one_quarter():
    mech = _menu([[1.0]], [0.5])
    assert abs(mech.revenue(_types(1)) - 0.25) < 3 / math.sqrt(N)


def test_manelli_vincent_menu_matches_closed_form():
    pb = (4 - math.sqrt(2)) / 3
    mech = _menu([[1, 0], [0, 1], [1, 1]], [2 / 3, 2 / 3, pb])
    truth = 4 / 9 + 2 * math.sqrt(2) / 27
    assert abs(mech.revenue(_types(2)) - truth) < 3 / math.sqrt(N)


def test_mussa_rosen_closed_form_menu_profit():
    # grid of the optimal menu y(t) = 2t - 1, p(t) = t^2 - 1/4 on t in [1/2, 1]; profit -> 1/12
    t = torch.linspace(0.5, 1.0, 201, dtype=torch.float64)[1:]
    alloc, price = (2 * t - 1)[:, None], t**2 - 0.25
    mech = MenuMechanism(
        FinitelyConvex(
            len(t), 1, 1, linear_kernel, y_init=alloc, b_init=price, default_option=True, dtype=torch.float64
        ),
        cost_fn=lambda y: (y**2).sum(1) / 2,
    )
    assert abs(mech.revenue(_midpoints()) - 1 / 12) < 1e-3


def test_sqrt_kernel_closed_form_menu_profit():
    # y(t) = ((2t-1)/2)^(2/3); envelope payment p(t) = t sqrt(y(t)) - int_{1/2}^t sqrt(y(s)) ds
    t = np.linspace(0.5, 1.0, 201)[1:]
    q = ((2 * t - 1) / 2) ** (1 / 3)
    u = np.concatenate([[0.0], np.cumsum(0.5 * (q[1:] + q[:-1]) * np.diff(t))]) + q[0] * (t[0] - 0.5) / 2
    price = t * q - u
    mech = MenuMechanism(
        FinitelyConvex(
            len(t),
            1,
            1,
            sqrt_value_kernel,
            y_init=torch.tensor(q**2)[:, None],
            b_init=torch.tensor(price),
            default_option=True,
            dtype=torch.float64,
        ),
        cost_fn=lambda y: (y**2).sum(1) / 2,
    )
    assert abs(mech.revenue(_midpoints()) - (9 / 28) * 2 ** (-4 / 3)) < 1e-3


def test_separate_sales_and_bundling_closed_forms():
    x = _types(2).numpy()
    assert abs(SeparateSales(0.5).fit(x).revenue(x) - 0.5) < 6 / math.sqrt(N)
    assert abs(PureBundling(math.sqrt(2 / 3)).fit(x).revenue(x) - (2 / 3) * math.sqrt(2 / 3)) < 3 / math.sqrt(N)
    tuned_b, tuned_s = PureBundling().fit(x[:50_000]), SeparateSales().fit(x[:50_000])
    assert abs(tuned_b.price_ - math.sqrt(2 / 3)) < 0.03
    assert np.all(np.abs(tuned_s.prices_ - 0.5) < 0.03)


def _trained(seed=0, steps=150):
    g = torch.Generator().manual_seed(seed)
    layer = FinitelyConvex(
        16,
        2,
        2,
        linear_kernel,
        y_bounds=(0.0, 1.0),
        default_option=True,
        temp=200.0,
        b_init=torch.rand(16, generator=g) * 2,
        generator=g,
    )
    return MenuMechanism(layer).fit(
        torch.rand(4096, 2, generator=g),
        soft_steps=steps,
        ste_steps=50,
        lr=3e-2,
        batch_size=1024,
        generator=g,
    )


def test_learned_menu_is_ic_and_ir_exactly_and_revenue_is_mean_price():
    mech = _trained()
    assert mech.layer.is_feasible()
    x = torch.rand(20_000, 2, generator=torch.Generator().manual_seed(5))
    alloc, pay, util = mech.outcomes(x)
    Y, b = mech.menu()
    all_utils = x @ Y.T - b
    assert (util >= 0).all()  # IR: the outside option is always available
    assert (util[:, None] >= all_utils).all()  # IC: no type gains by taking any other menu item
    assert torch.allclose(util, (x * alloc).sum(1) - pay)
    chosen = all_utils.argmax(1)
    assert mech.revenue(x) == pytest.approx(float(b[chosen].mean()), abs=1e-6)  # revenue = E[b_{j*}]
    assert Y[0].abs().sum() == 0 and b[0] == 0  # the outside option is listed first


def test_training_improves_revenue_and_approaches_one_item_optimum():
    g = torch.Generator().manual_seed(1)
    layer = FinitelyConvex(
        8,
        1,
        1,
        linear_kernel,
        y_bounds=(0.0, 1.0),
        default_option=True,
        temp=300.0,
        b_init=torch.rand(8, generator=g),
        generator=g,
    )
    mech = MenuMechanism(layer)
    fresh = torch.rand(100_000, 1, generator=g)
    before = mech.revenue(fresh)
    mech.fit(torch.rand(8192, 1, generator=g), soft_steps=300, ste_steps=100, lr=3e-2, batch_size=1024, generator=g)
    after = mech.revenue(fresh)
    assert after > before and abs(after - 0.25) < 0.01
    assert mech.history_ and mech.history_[-1]["phase"] == "ste"


def test_rochetnet_learns_one_item():
    g = torch.Generator().manual_seed(2)
    rn = RochetNet(8, 1, generator=g).fit(
        torch.rand(8192, 1, generator=g), steps=400, lr=3e-2, batch_size=1024, generator=g
    )
    assert abs(rn.revenue(torch.rand(100_000, 1, generator=g)) - 0.25) < 0.02


def test_bad_inputs():
    layer = FinitelyConvex(4, 2, 2, y_bounds=(0.0, 1.0), default_option=True)
    mech = MenuMechanism(layer)
    with pytest.raises(ValueError, match="types must be finite"):
        mech.revenue(torch.tensor([[float("inf"), 0.0]]))
    with pytest.raises(ValueError, match="types must have shape"):
        mech.fit(torch.rand(10, 3))
    with pytest.raises(TypeError, match="types"):
        mech.fit(np.random.rand(10, 2))
    with pytest.raises(ValueError, match="soft_steps"):
        mech.fit(torch.rand(10, 2), soft_steps=-1)
    with pytest.raises(ValueError, match="lr"):
        mech.fit(torch.rand(10, 2), lr=0.0)
    with pytest.raises(ValueError, match="default_option"):
        MenuMechanism(FinitelyConvex(4, 2, 2))
    with pytest.raises(ValueError, match="mode"):
        MenuMechanism(FinitelyConvex(4, 2, 2, mode="concave", default_option=True))
    with pytest.raises(TypeError, match="layer"):
        MenuMechanism("menu")


def _restart_fit(restarts: int, seed: int = 3):
    g = torch.Generator().manual_seed(seed)
    layer = FinitelyConvex(
        8,
        2,
        2,
        linear_kernel,
        y_bounds=(0.0, 1.0),
        default_option=True,
        temp=200.0,
        b_init=torch.rand(8, generator=g) * 2,
        generator=g,
    )
    train, val = torch.rand(2048, 2, generator=g), torch.rand(2048, 2, generator=g)
    mech = MenuMechanism(layer).fit(
        train,
        soft_steps=120,
        ste_steps=20,
        lr=3e-2,
        batch_size=512,
        generator=g,
        restarts=restarts,
        explore_steps=20,
        val_types=val,
        log_every=1,
    )
    return mech, val


def test_restarts_select_the_best_start_on_held_out_types_at_equal_total_steps():
    mech, val = _restart_fit(4)
    vals = [r["val_objective"] for r in mech.restarts_]
    assert len(vals) == 4 and mech.selected_ == int(np.argmax(vals))
    # never worse than the single start (start 0 = the given initialisation) on the selection objective
    assert vals[mech.selected_] >= vals[0]
    assert len(mech.history_) == 120 + 20  # same total optimiser steps as one start
    assert mech.layer.is_feasible()
    single, _ = _restart_fit(1)
    assert single.restarts_ == [] and len(single.history_) == 140


def test_rochetnet_restarts_use_the_same_budget():
    g = torch.Generator().manual_seed(4)
    types, val = torch.rand(2048, 1, generator=g), torch.rand(2048, 1, generator=g)
    rn = RochetNet(4, 1, generator=g).fit(
        types, steps=100, lr=3e-2, batch_size=512, generator=g, restarts=3, explore_steps=20, val_types=val
    )
    vals = [r["val_objective"] for r in rn.restarts_]
    assert len(vals) == 3 and vals[rn.selected_] == max(vals)
    with pytest.raises(ValueError, match="exceeds steps"):
        RochetNet(4, 1).fit(types, steps=10, restarts=3, explore_steps=5)


def test_restart_bad_inputs():
    mech = MenuMechanism(FinitelyConvex(4, 2, 2, y_bounds=(0.0, 1.0), default_option=True))
    x = torch.rand(50, 2)
    with pytest.raises(ValueError, match="restarts"):
        mech.fit(x, restarts=0)
    with pytest.raises(ValueError, match="same total budget"):
        mech.fit(x, soft_steps=10, ste_steps=0, restarts=4, explore_steps=5)
    with pytest.raises(ValueError, match="init_fn must return"):
        mech.fit(
            x,
            soft_steps=10,
            ste_steps=0,
            restarts=2,
            explore_steps=2,
            init_fn=lambda g: (torch.zeros(3, 2), torch.zeros(3)),
        )
    with pytest.raises(ValueError, match="val_types must have shape"):
        mech.fit(x, soft_steps=10, ste_steps=0, restarts=2, explore_steps=2, val_types=torch.rand(5, 3))
