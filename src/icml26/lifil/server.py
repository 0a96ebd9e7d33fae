"""Servers: ``FILServer`` (weighted FedAvg of the whole model) and ``LiFILServer`` (plus the feature generator
trained on the clients' privatized uploads at each task boundary, and the replay features it broadcasts)."""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence

import numpy as np
import torch

from .config import FILConfig
from .generator import FeatureGenerator, GaussianFeatureGenerator, class_mean_error
from .model import DecoupledNet, get_state

__all__ = ["FILServer", "LiFILServer", "fedavg"]

State = dict[str, np.ndarray]


def fedavg(results: Sequence[tuple[State, int]]) -> State:
    """Weighted FedAvg ``theta = sum_k n_k theta_k / sum_k n_k`` (float64 accumulation in the given order, float32
    out); clients with ``n_k = 0`` are skipped."""
    results = [(s, n) for s, n in results if n > 0]
    if not results:
        raise ValueError("results must hold at least one (state, n) with n > 0")
    total = float(sum(n for _, n in results))
    keys = list(results[0][0])
    out = {}
    for k in keys:
        acc = np.zeros(np.shape(results[0][0][k]), dtype=np.float64)
        for s, n in results:
            acc += (n / total) * np.asarray(s[k], dtype=np.float64)
        out[k] = acc.astype(np.float32)
    return out


class FILServer:
    """FedAvg server: holds the global model (initialised from ``seed``), averages client states, and at task
    boundaries receives the clients' uploads (none for the baselines) and offers replay (none)."""

    def __init__(self, model_fn: Callable[[], DecoupledNet], config: FILConfig | None = None, seed: int = 0) -> None:
        self.cfg = config if config is not None else FILConfig()
        self.seed = int(seed)
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(self.seed)
            self.model = model_fn()
        self.state = get_state(self.model)
        self.task, self.seen = -1, []
        self.history: list[dict] = []

    def begin_task(self, task: int, seen_classes: Sequence[int]) -> None:
        self.task, self.seen = int(task), sorted(int(c) for c in seen_classes)

    def aggregate(self, results: Sequence[tuple[State, int]]) -> State:
        """New global state from ``(state, n)`` results (unchanged if no client had data)."""
        if any(n > 0 for _, n in results):
            self.state = fedavg(results)
        return self.state

    def end_task(self, uploads: Sequence[dict]) -> None:
        pass

    def replay(self) -> tuple[np.ndarray, np.ndarray] | None:
        return None


class LiFILServer(FILServer):
    """Li-FIL's server: after task ``t`` it fits the generator (``FeatureGenerator`` or, with
    ``generator="gaussian"``, ``GaussianFeatureGenerator``) on the pooled uploads of task ``t``'s classes plus
    self-replay of its previous version for the older classes (it keeps no uploads), then samples ``n_replay``
    features per class seen so far: the replay broadcast for task ``t + 1``."""

    def __init__(self, model_fn: Callable[[], DecoupledNet], config: FILConfig | None = None, seed: int = 0) -> None:
        super().__init__(model_fn, config, seed)
        c, m = self.cfg, self.model
        if c.generator == "mlp":
            self.generator = FeatureGenerator(
                m.n_classes, m.feature_dim, steps=c.generator_steps, lr=c.generator_lr, seed=self.seed
            )
        else:
            self.generator = GaussianFeatureGenerator(
                m.n_classes, m.feature_dim, noise_var=(c.sigma_f * c.clip_R) ** 2 if c.denoise else 0.0
            )
        self._replay: tuple[np.ndarray, np.ndarray] | None = None

    def rng(self, *tags: int) -> np.random.Generator:
        return np.random.default_rng([self.seed, 10**6, self.task + 1, *tags])

    def end_task(self, uploads: Sequence[dict]) -> None:
        ups = [u for u in uploads if u and len(u.get("y", ()))]
        old = [c for c in self.generator.classes_]
        info = {"task": self.task, "uploaded": int(sum(len(u["y"]) for u in ups)), "generator_loss": []}
        if ups:
            H = np.concatenate([u["H"] for u in ups])
            y = np.concatenate([u["y"] for u in ups])
            prev = copy.deepcopy(self.generator) if old else None
            kw = {"noise_std": self.cfg.sigma_f * self.cfg.clip_R if self.cfg.denoise else 0.0}
            if isinstance(self.generator, GaussianFeatureGenerator):
                kw = {}
            self.generator.fit(
                H, y, previous=prev, old_classes=old, n_old=max(self.cfg.n_replay, 100), rng=self.rng(1), **kw
            )
            info["generator_loss"] = list(self.generator.loss_history_)
            err = class_mean_error(self.generator, H, y, self.rng(2))
            info["mean_error_new"] = float(np.mean(list(err.values())))
            info["upload_mean_norm"] = float(np.mean([np.linalg.norm(H[y == c].mean(0)) for c in np.unique(y)]))
        classes = self.generator.classes_
        if classes:
            yr = np.repeat(np.asarray(classes, dtype=np.int64), self.cfg.n_replay)
            self._replay = (self.generator.sample(yr, self.rng(3)).numpy().astype(np.float32), yr)
        self.history.append(info)

    def replay(self) -> tuple[np.ndarray, np.ndarray] | None:
        return self._replay
