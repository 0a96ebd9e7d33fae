"""Bad input to the reproduction's configuration and data knobs raises a clear error naming the argument."""

from dataclasses import replace

import pytest

from icml26.crel._data import MixtureSampler, SyntheticProblem, make_digits_task
from icml26.crel.experiment import FULL, QUICK


@pytest.mark.parametrize(
    "field, value",
    [
        ("safe_scale", ((2, 1.5),)),  # no scale for d = 8
        ("safe_scale", ((2, 0.0), (8, 1.2))),
        ("digits_good_scale", -1.0),
        ("e2e_n_cals", ()),
        ("e2e_n_cals", (20, 0)),
        ("e2e_band", 0.0),
        ("avg_sep_bound", 0.0),
        ("dims", (1,)),
    ],
)
def test_bad_config_names_the_field(field, value):
    with pytest.raises(ValueError, match=field.split("_")[0]):
        replace(FULL, **{field: value})


def test_presets_are_valid_and_quick_needs_only_its_dims():
    assert dict(QUICK.safe_scale)[2] == 1.5 and set(QUICK.dims) <= set(dict(QUICK.safe_scale))


@pytest.mark.parametrize("kw, name", [(dict(p_fail=1.5), "p_fail"), (dict(p_fail=0.1, scale=0.0), "scale")])
def test_mixture_sampler_rejects_bad_knobs(kw, name):
    with pytest.raises(ValueError, match=name):
        MixtureSampler(SyntheticProblem(2), **kw)


def test_digits_task_rejects_a_bad_good_scale():
    with pytest.raises(ValueError, match="good_scale"):
        make_digits_task(0, good_scale=0.0)


def test_scale_blurs_the_sampler_without_moving_its_failures():
    import numpy as np

    P = SyntheticProblem(2, p_fail=0.0)
    a = MixtureSampler(P, 0.0, 1.0).sample(0.3, 4000, np.random.default_rng(0))
    b = MixtureSampler(P, 0.0, 2.0).sample(0.3, 4000, np.random.default_rng(0))
    mu = P.mean(np.array([0.3]))[0]
    assert np.allclose(b - mu, 2.0 * (a - mu))
