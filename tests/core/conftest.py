from dataclasses import dataclass

import pytest

from icml26.core import Experiment, Report, judge_superiority, judge_threshold
from icml26.core import registry as reg


@dataclass(frozen=True)
class ToyConfig:
    n: int = 8
    fail_at_seed: int = -1


_CALLS: list[int] = []


def _toy_run(config: ToyConfig, seeds: list[int], progress) -> Report:
    import numpy as np
    from matplotlib.figure import Figure

    rep = Report()
    per_seed = []
    for s in progress.track(seeds, description="toy"):

        def compute(s=s):
            if s == config.fail_at_seed:
                raise KeyboardInterrupt("simulated interruption")
            _CALLS.append(s)
            rng = np.random.default_rng(s)
            return {"a": float(rng.normal(1.0, 0.1)), "b": float(rng.normal(0.0, 0.1))}

        per_seed.append(progress.cached(f"seed{s}", compute))
    a = [r["a"] for r in per_seed]
    b = [r["b"] for r in per_seed]
    rep.add_claim(judge_superiority("C1", "a beats b", ("a", a), {"b": b}))
    rep.add_claim(judge_threshold("C2", "a is at least 0.5", ("a", a), threshold=0.5))
    rep.add_table("per_seed", [{"seed": s, "a": x, "b": y} for s, x, y in zip(seeds, a, b)])
    fig = Figure()
    fig.add_subplot().plot(a)
    rep.add_figure("curve", fig, "a over seeds")
    rep.metrics["a"] = a
    return rep


@pytest.fixture
def toy_experiment():
    """Register a throwaway experiment for the duration of one test."""
    reg._discover()
    exp = Experiment(
        slug="toy",
        title="A toy experiment",
        paper="nobody, 2026",
        presets={"quick": ToyConfig(), "full": ToyConfig(n=16)},
        seeds={"quick": 6, "full": 8},
        run=_toy_run,
        component="nothing",
    )
    reg.register(exp)
    _CALLS.clear()
    yield exp
    reg._REGISTRY.pop("toy", None)


@pytest.fixture
def calls():
    return _CALLS
