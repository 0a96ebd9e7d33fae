"""Regime rule at its boundaries, 2-means labels, the sweep's validation, parallel cells and resume."""

import numpy as np
import pandas as pd
import pytest
import torch

from icml26.sciml_regimes import (
    ConvectionProblem,
    RegimeSweep,
    classify_regime,
    classify_regimes,
    plot_regime_map,
    run_cell,
)
from icml26.sciml_regimes import sweep as sweep_mod


@pytest.fixture(autouse=True, scope="module")
def _one_thread():
    """Tiny tensors: one torch thread is faster than two on a busy 2-core machine."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def test_classify_regime_rule_and_boundaries():
    assert classify_regime(1e-1, 1.0) == "under"
    assert classify_regime(1e-5, 0.9) == "over"
    assert classify_regime(1e-5, 0.01) == "well"
    assert classify_regime(1e-3, 0.1) == "well"  # thresholds are inclusive for the lower regime
    assert classify_regime(1.0001e-3, 0.01) == "under"
    assert classify_regime(1e-3, 0.10001) == "over"
    assert classify_regime(float("nan"), 0.1) == "failed"
    assert classify_regime(0.05, 0.05, tau_loss=0.1, tau_err=0.01) == "over"


def test_classify_regimes_threshold_and_kmeans_agree_on_separated_points():
    df = pd.DataFrame(
        {
            "train_loss": [1e-1, 2e-1, 1e-6, 2e-6, 1e-6, 3e-6],
            "test_error": [0.9, 1.0, 0.9, 1.1, 1e-3, 2e-3],
        }
    )
    a = classify_regimes(df)["regime"].tolist()
    b = classify_regimes(df, method="kmeans")["regime"].tolist()
    assert a == b == ["under", "under", "over", "over", "well", "well"]
    assert "regime" not in df  # a copy


@pytest.mark.parametrize(
    "kw, name", [({"tau_loss": 0}, "tau_loss"), ({"tau_err": -1}, "tau_err"), ({"method": "dbscan"}, "method")]
)
def test_classify_regimes_bad_input(kw, name):
    with pytest.raises(ValueError, match=name):
        classify_regimes(pd.DataFrame({"train_loss": [1.0], "test_error": [1.0]}), **kw)


@pytest.mark.parametrize(
    "kw, name",
    [
        ({"difficulties": [1.0, 1000.0]}, "beta"),
        ({"difficulties": [-1.0]}, "beta"),
        ({"data_sizes": [0]}, "data_sizes"),
        ({"data_sizes": [10**8]}, "data_sizes"),
        ({"optimizers": ["rmsprop"]}, "optimizers"),
        ({"n_jobs": 0}, "n_jobs"),
    ],
)
def test_sweep_bad_input_names_the_argument(kw, name):
    args = {"difficulties": [1.0], "data_sizes": [8], **kw}
    with pytest.raises(ValueError, match=name):
        RegimeSweep(lambda b: ConvectionProblem(beta=b), **args)


def test_run_cell_bad_optimizer():
    with pytest.raises(ValueError, match="optimizers"):
        run_cell(ConvectionProblem(beta=1.0), 8, 0, ["newton"])


SMALL = dict(steps=4, width=4, depth=2, metrics=True, hessian_iters=2, trace_samples=2, test_grid=(9, 5))


def test_sweep_runs_in_parallel_and_resumes_from_cell_files(tmp_path, monkeypatch):
    sw = RegimeSweep(
        lambda b: ConvectionProblem(beta=b),
        [1.0, 5.0],
        [8],
        seeds=[0],
        optimizers=("lbfgs", "adam"),
        n_jobs=2,
        cache_dir=tmp_path,
        **SMALL,
    )
    df = sw.run()
    assert len(df) == 4 and set(df.optimizer) == {"lbfgs", "adam"}
    assert len(list(tmp_path.glob("cell-*.json"))) == 2
    serial = RegimeSweep(
        lambda b: ConvectionProblem(beta=b), [1.0, 5.0], [8], seeds=[0], optimizers=("lbfgs", "adam"), **SMALL
    ).run()
    pd.testing.assert_frame_equal(df, serial)  # processes and in-process give the same numbers

    def boom(*a, **k):
        raise AssertionError("a finished cell was recomputed")

    monkeypatch.setattr(sweep_mod, "run_cell", boom)
    sw.n_jobs = 1
    pd.testing.assert_frame_equal(sw.run(), df)


def test_plot_regime_map_returns_a_titled_figure():
    df = pd.DataFrame(
        {
            "coefficient": [1.0, 1.0, 10.0, 10.0],
            "n_f": [8, 64, 8, 64],
            "train_loss": [1e-5, 1e-5, 1e-1, 1e-1],
            "test_error": [0.5, 0.01, 1.0, 1.0],
            "cka": [0.5, 1.0, 0.2, 0.3],
        }
    )
    fig = plot_regime_map(classify_regimes(df))
    ax = fig.axes[0]
    assert ax.get_title() and ax.get_xlabel() and ax.get_ylabel()
    fig2 = plot_regime_map(df, "cka")
    assert len(fig2.axes) == 2  # the map and its colour bar
    with pytest.raises(ValueError, match="regime"):
        plot_regime_map(df)
    assert np.isfinite(df.cka).all()
