"""fit: every optimizer trains on the same budget, is deterministic, and rejects bad input."""

import pytest
import torch

from icml26.sciml_regimes import OPTIMIZERS, PINN, ConvectionProblem, fit


@pytest.fixture(autouse=True, scope="module")
def _one_thread():
    """Tiny tensors: one torch thread is faster than two on a busy 2-core machine."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="module")
def logs():
    p = ConvectionProblem(beta=2.0)
    b = p.sample(64, 0)
    out = {}
    for opt in OPTIMIZERS:
        m = PINN(16, 3, seed=0)
        start = float(p.loss(m, b).detach())
        out[opt] = (start, fit(m, p, opt, batch=b, steps=40, test_grid=(33, 11)))
    return out


@pytest.mark.parametrize("opt", OPTIMIZERS)
def test_every_optimizer_lowers_the_loss_within_its_budget(logs, opt):
    start, log = logs[opt]
    assert log.steps == 40 and not log.failed
    assert log.final_loss < (0.9 if opt == "adam" else 0.5) * start
    assert log.n_evals <= int(1.25 * 40) + 4
    assert 0.0 <= log.test_error < 10
    assert set(log.parts) == {"total", "res", "ic", "bc"}


def test_curriculum_and_switch_mark_their_stages(logs):
    assert len(logs["curriculum"][1].stage_ends) == 4
    assert len(logs["adam_lbfgs"][1].stage_ends) == 1


def test_fit_is_deterministic():
    p = ConvectionProblem(beta=5.0)
    a = fit(PINN(8, 3, seed=1), p, "adam_lbfgs", n_f=32, seed=2, steps=20, test_grid=(17, 5))
    b = fit(PINN(8, 3, seed=1), p, "adam_lbfgs", n_f=32, seed=2, steps=20, test_grid=(17, 5))
    assert a.losses == b.losses and a.test_error == b.test_error


def test_lbfgs_reaches_low_loss_on_an_easy_problem():
    log = fit(PINN(20, 3, seed=0), ConvectionProblem(beta=1.0), "lbfgs", n_f=128, steps=300, test_grid=(33, 11))
    assert log.final_loss < 1e-3 and log.test_error < 0.1


@pytest.mark.parametrize(
    "kw, name",
    [
        ({"optimizer": "sgd"}, "optimizer"),
        ({"steps": 0}, "steps"),
        ({"lr": -1.0}, "lr"),
        ({"switch": 1.5}, "switch"),
        ({"stages": 0}, "stages"),
        ({"final_frac": 0.0}, "final_frac"),
    ],
)
def test_bad_fit_arguments(kw, name):
    with pytest.raises(ValueError, match=name):
        fit(PINN(4, 2), ConvectionProblem(beta=1.0), **{"optimizer": "adam", "steps": 2, **kw})


def test_problem_type_error():
    with pytest.raises(TypeError, match="problem"):
        fit(PINN(4, 2), "convection", "adam", steps=2)


def test_pinn_shapes_and_init():
    m = PINN(7, 4, seed=3)
    x = torch.rand(5, 1, dtype=torch.float64)
    assert m(x, x).shape == (5, 1)
    assert all(float(layer.bias.detach().abs().sum()) == 0.0 for layer in m.layers)
    assert torch.equal(PINN(7, 4, seed=3).layers[0].weight, m.layers[0].weight)
