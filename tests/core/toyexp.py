"""A throwaway experiment for the runner's tests (importable by name, so spawned and submitit workers find it)."""

from dataclasses import dataclass

import numpy as np

from icml26.core import Experiment, Report, judge_superiority, judge_threshold

CALLS: list[int] = []


@dataclass(frozen=True)
class ToyConfig:
    n: int = 8
    fail_at_seed: int = -1
    precondition_gap: float = 0.5


def measure(config: ToyConfig, seed: int, progress) -> dict:
    if seed == config.fail_at_seed:
        raise KeyboardInterrupt("simulated interruption")
    CALLS.append(seed)
    rng = np.random.default_rng(seed)
    # a torch draw too, so parallel runs are checked to seed torch the same way
    import torch

    t = float(torch.randn(()).item())
    return {
        "a": float(rng.normal(1.0, 0.1)),
        "b": float(rng.normal(0.0, 0.1)),
        "t": t,
        "gap": float(config.precondition_gap + rng.normal(0, 0.01)),
    }


def judge(config: ToyConfig, records: list[dict], report: Report) -> None:
    from matplotlib.figure import Figure

    a = [r["a"] for r in records]
    b = [r["b"] for r in records]
    report.add_claim(
        judge_threshold(
            "P1", "the gap exists", ("gap", [r["gap"] for r in records]), threshold=0.2, kind="precondition"
        )
    )
    c1 = report.add_claim(judge_superiority("C1", "a beats b", ("a", a), {"b": b}, requires=["P1"], controls=["C1c"]))
    # the control arm: a without the offset that makes it better (here: b's own draw), judged by C1's rule
    report.add_claim(c1.control("C1c", "without its offset, a does not beat b", ("a without offset", b)))
    report.add_claim(judge_threshold("C2", "a is at least 0.5", ("a", a), threshold=0.5, no_control="toy truth"))
    report.add_claim(judge_threshold("K1", "a is finite", ("a", a), threshold=-1e9, kind="check"))
    report.add_table("per_seed", [{"seed": s, "a": x, "b": y} for s, x, y in zip(report.seeds, a, b)])
    fig = Figure()
    fig.add_subplot().plot(a)
    report.add_figure("curve", fig, "a over seeds")
    report.metrics["a"] = a


EXPERIMENT = Experiment(
    slug="toy",
    title="A toy experiment",
    paper="nobody, 2026",
    presets={"quick": ToyConfig(), "full": ToyConfig(n=16)},
    seeds={"quick": 6, "full": 8},
    measure=measure,
    judge=judge,
    component="nothing",
)
