"""TRACE-DU: trajectory-aware certified decentralized unlearning (our reading; recursion inferred, see docs).

Sensitivity.  For a set ``U`` of clients to forget and a node ``i`` kept, the coupled reference run
``A_{-U}`` (same init, same per-(node, round) batches, trained on ``V \\ U`` with ``W^{-U}``) satisfies, with
``a^0 = 0``::

    a_i^{t+1} = rho^K * sum_{j not in U} W^{-U}_ij a_j^t  +  sum_{c in U} W_ic d_ic^t

    ||x_i^t - x_i'^t|| <= a_i^t,   ||X^t - X'^t||_F <= Delta_U(t) := ||a^t||_2

because ``x_i - x_i' = sum_{j not in U} W^{-U}_ij (y_j - y_j') + sum_{c in U} W_ic (y_c - y_i)`` exactly and the
K-step SGD map is ``rho^K``-expansive (Hardt, Recht & Singer 2016, Lemmas 3.6-3.7): ``rho = 1`` (convex,
``eta <= 2/beta``), ``1 - eta beta gamma / (beta + gamma)`` (``gamma``-strongly convex, ``eta <= 2/(beta+gamma)``),
``1 + eta beta`` (non-convex ``beta``-smooth).  ``d_ic^t = ||y_i^t - y_c^t||`` are the recorded edge distances.
The graph-agnostic bound (SIFU-like) is the scalar ``Delta(t+1) = rho^K Delta(t) + sum_i sum_{c in U} W_ic d_ic^t``,
never smaller (``||W^{-U}||_2 = 1``).

Unlearning.  Pick ``t* = max{checkpoint t : Delta_U(t) <= psi*(epsilon, delta, sigma)}`` (budgeted noise) or
``t* = T - R_max`` and ``sigma`` calibrated to ``Delta_U(t*)`` (budgeted rounds); release
``X~ = X^{t*} + N(0, sigma^2 I)`` on the kept nodes and resume gossip training on ``V \\ U`` for ``T - t*``
rounds.  Gaussian mechanism + post-processing give ``(epsilon, delta)``-certified unlearning against
``A_{-U}(D_{-U})`` with the same schedule.  Sequential requests recompute ``a`` along the whole branch (earlier
noise draws are shared by both runs and cancel), cut it at the new ``t*`` and resume.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np
import torch

from .graphs import remove_nodes
from .mechanisms import analytic_gaussian_sigma, check_privacy, gaussian_sigma, sensitivity_threshold
from .training import DecentralizedSGD, Trajectory

__all__ = ["TraceDU", "Certificate", "Sensitivity", "UnlearnResult", "expansiveness", "REGIMES"]

REGIMES = ("strongly_convex", "convex", "nonconvex")


def expansiveness(regime: str, lr: float, smoothness: float, strong_convexity: float = 0.0) -> tuple[float, list]:
    """``(rho, violated assumptions)`` of one SGD step of size ``lr`` in ``regime`` (Hardt et al. 2016)."""
    if regime not in REGIMES:
        raise ValueError(f"regime must be one of {REGIMES}, got {regime!r}")
    if not (isinstance(smoothness, (int, float)) and smoothness > 0):
        raise ValueError(f"smoothness must be a number > 0, got {smoothness!r}")
    if not strong_convexity >= 0:
        raise ValueError(f"strong_convexity must be >= 0, got {strong_convexity!r}")
    b, g, bad = float(smoothness), float(strong_convexity), []
    if regime == "nonconvex":
        return 1.0 + lr * b, ["non-convex loss: rho = 1 + lr*beta with a declared beta (heuristic)"]
    if regime == "convex":
        if lr > 2.0 / b:
            bad.append(f"lr={lr:g} > 2/beta={2 / b:g}")
        return 1.0, bad
    if g <= 0:
        raise ValueError("strong_convexity must be > 0 for regime='strongly_convex'")
    if lr > 2.0 / (b + g):
        bad.append(f"lr={lr:g} > 2/(beta+gamma)={2 / (b + g):g}")
    return 1.0 - lr * b * g / (b + g), bad


@dataclass(frozen=True)
class Sensitivity:
    """``delta[k]``: the bound at branch position ``rounds[k]``; ``per_node[k]``: ``a^t`` over ``nodes`` (the kept
    ids; for the agnostic bound one column, the scalar)."""

    rounds: np.ndarray
    delta: np.ndarray
    per_node: np.ndarray
    nodes: tuple[int, ...]


@dataclass(frozen=True)
class Certificate:
    """What an unlearning request guarantees: ``(epsilon, delta)``-certified removal of ``forget`` (all of
    ``removed`` together) relative to retraining without ``removed`` under the same schedule, from rewinding to
    round ``t_star`` where the bound was ``sensitivity`` and adding ``N(0, sigma^2)``.  ``heuristic=True`` when an
    assumption of the bound does not hold or cannot be verified (listed in ``violations``)."""

    epsilon: float
    delta: float
    sigma: float
    t_star: int
    sensitivity: float
    rounds_retrained: int
    forget: tuple[int, ...]
    removed: tuple[int, ...]
    regime: str
    smoothness: float
    strong_convexity: float
    rho: float
    mechanism: str
    bound: str
    heuristic: bool
    violations: tuple[str, ...] = ()

    @property
    def statement(self) -> str:
        kind = (
            "HEURISTIC (assumptions not verified: " + "; ".join(self.violations) + ")"
            if self.heuristic
            else ("certified")
        )
        return (
            f"({self.epsilon:g}, {self.delta:g})-unlearning of clients {list(self.forget)} ({kind}): rewind to "
            f"round {self.t_star} (bound {self.sensitivity:.4g}), noise sigma={self.sigma:.4g}, "
            f"{self.rounds_retrained} rounds retrained, regime={self.regime}, rho={self.rho:.6g}"
        )


@dataclass
class UnlearnResult:
    """``models``: final parameters ``(len(nodes), p)`` of the kept ``nodes``; ``certificate``; the new branch
    segment ``trajectory``; the ``sensitivity`` curve the choice was made on; ``noise``: the added perturbation."""

    models: torch.Tensor
    certificate: Certificate
    trajectory: Trajectory
    sensitivity: Sensitivity
    nodes: tuple[int, ...]
    noise: torch.Tensor = field(repr=False, default=None)


def _noise(seed: int, request: int, node: int, p: int) -> torch.Tensor:
    return torch.from_numpy(np.random.default_rng([int(seed), 10_000 + int(request), int(node)]).standard_normal(p))


def _release(checkpoint: torch.Tensor, noise: torch.Tensor) -> torch.Tensor:
    """The released start of the resumed run: the rewound checkpoint plus the Gaussian perturbation."""
    return checkpoint + noise


def _propagate(a: np.ndarray, W_kept: np.ndarray, shrink: float, injection: np.ndarray, bound: str) -> np.ndarray:
    """One round of the sensitivity recursion: the graph bound mixes the per-node bounds with ``W^{-U}`` then adds
    the injections; the agnostic bound keeps one scalar (``||W^{-U}||_2 = 1``) and adds their sum."""
    if bound == "graph":
        return shrink * (W_kept @ a) + injection
    return shrink * a + injection.sum()


class TraceDU:
    """Certified unlearning of clients from a recorded decentralized trajectory (module docstring).

    ``regime``: ``"strongly_convex"`` / ``"convex"`` / ``"nonconvex"``; ``smoothness`` (``beta``) defaults to the
    model's bound on the training data when it has one (:class:`SoftmaxRegression`), and must be declared for a
    non-convex model; ``strong_convexity`` (``gamma``) defaults to the model's L2 weight.  ``bound``: ``"graph"``
    (TRACE-DU) or ``"agnostic"`` (scalar SIFU-like); ``mechanism``: ``"classic"`` or ``"analytic"``."""

    def __init__(
        self,
        trajectory: Trajectory,
        regime: str = "strongly_convex",
        smoothness: float | None = None,
        strong_convexity: float | None = None,
        bound: str = "graph",
        mechanism: str = "classic",
    ) -> None:
        if not isinstance(trajectory, Trajectory):
            raise TypeError("trajectory must be a Trajectory (DecentralizedSGD(...).run())")
        if trajectory.start != 0 or not trajectory.node_data:
            raise ValueError("trajectory must be a full training run from round 0 with its node_data")
        if bound not in ("graph", "agnostic"):
            raise ValueError(f"bound must be 'graph' or 'agnostic', got {bound!r}")
        check_privacy(0.5, 0.5, mechanism)
        model, cfg = trajectory.model, trajectory.config
        self.violations: list[str] = []
        own = (
            model.smoothness(max(float((X * X).sum(1).max()) for X, _ in trajectory.node_data))
            if hasattr(model, "smoothness")
            else None
        )
        if own is not None and not math.isfinite(own):
            raise ValueError(
                f"trajectory.node_data must hold finite X (the model's smoothness bound on it is {own}); "
                "train on data without NaN or inf"
            )
        if smoothness is None:
            if own is None:
                raise ValueError("smoothness must be declared for a model without a smoothness bound")
            smoothness = own
        elif own is not None and isinstance(smoothness, (int, float)) and smoothness < own * (1 - 1e-12):
            self.violations.append(
                f"declared smoothness={smoothness:g} is below the model's own bound {own:g} on this data"
            )
        if strong_convexity is None:
            strong_convexity = getattr(model, "l2", 0.0) if regime == "strongly_convex" else 0.0
        self.rho, bad = expansiveness(regime, cfg["lr"], smoothness, strong_convexity)
        self.violations += bad
        if regime != "nonconvex" and not getattr(model, "convex", False):
            self.violations.append(f"regime={regime!r} declared for a non-convex model {type(model).__name__}")
        if regime == "strongly_convex" and strong_convexity > getattr(model, "l2", 0.0) + 1e-15:
            self.violations.append(f"strong_convexity={strong_convexity:g} exceeds the model's L2 weight")
        self.regime, self.smoothness, self.strong_convexity = regime, float(smoothness), float(strong_convexity)
        self.bound, self.mechanism, self.model, self.config = bound, mechanism, model, dict(cfg)
        self.W0, self.all_nodes = trajectory.W, tuple(trajectory.nodes)
        self.data = dict(zip(trajectory.nodes, trajectory.node_data))
        self.T = trajectory.end
        self.branch: list[tuple[Trajectory, int]] = [(trajectory, trajectory.end)]  # (segment, position it ends at)
        self.noises: list[tuple[int, float, int]] = []  # (request, sigma, noise seed) starting segments 1, 2, ...
        self.removed: tuple[int, ...] = ()
        self.certificates: list[Certificate] = []

    @property
    def heuristic(self) -> bool:
        return bool(self.violations)

    def _forget(self, forget: Iterable[int] | int, allow_empty: bool = False) -> tuple[int, ...]:
        if isinstance(forget, (int, np.integer)) and not isinstance(forget, bool):
            forget = (int(forget),)
        if isinstance(forget, (str, bytes)) or not isinstance(forget, Iterable):
            raise TypeError(f"forget must be a client id or an iterable of integer client ids, got {forget!r}")
        forget = list(forget)
        if bad := [c for c in forget if isinstance(c, bool) or not isinstance(c, (int, np.integer))]:
            raise TypeError(f"forget must hold integer client ids, got {bad!r}")
        F = tuple(sorted({int(c) for c in forget}))
        if not F and not allow_empty:
            raise ValueError("forget must name at least one client")
        unknown = [c for c in F if c not in self.all_nodes]
        if unknown:
            raise ValueError(f"forget must be node ids of the trajectory {list(self.all_nodes)}, got unknown {unknown}")
        if again := [c for c in F if c in self.removed]:
            raise ValueError(f"clients {again} were already removed")
        if len(set(F) | set(self.removed)) >= len(self.all_nodes):
            raise ValueError(
                f"cannot forget every node: forget={list(F)} with removed={list(self.removed)} leaves no "
                f"client of {len(self.all_nodes)}"
            )
        return F

    def sensitivity(self, forget: Iterable[int] | int, bound: str | None = None) -> Sensitivity:
        """``Delta_U(t)`` along the current branch for ``U = removed + forget`` (module docstring)."""
        bound = self.bound if bound is None else bound
        if bound not in ("graph", "agnostic"):
            raise ValueError(f"bound must be 'graph' or 'agnostic', got {bound!r}")
        U = set(self._forget(forget, allow_empty=True)) | set(self.removed)
        kept = tuple(i for i in self.all_nodes if i not in U)
        shrink = self.rho ** self.config["local_steps"]
        a = np.zeros(len(kept) if bound == "graph" else 1)
        rounds, deltas, per = [0], [0.0], [a.copy()]
        for seg, end in self.branch:
            loc = {g: k for k, g in enumerate(seg.nodes)}
            ks, cs = [loc[i] for i in kept], [loc[c] for c in U if c in loc]
            Wp = remove_nodes(seg.W, cs) if cs else seg.W
            Wkc = seg.W[np.ix_(ks, cs)]
            for r in range(end - seg.start):
                inj = (Wkc * seg.distances[r][np.ix_(ks, cs)]).sum(1) if cs else np.zeros(len(ks))
                a = _propagate(a, Wp, shrink, inj, bound)
                rounds.append(seg.start + r + 1)
                deltas.append(float(np.linalg.norm(a)))
                per.append(a.copy())
        return Sensitivity(np.array(rounds), np.array(deltas), np.array(per), kept)

    def _checkpoint(self, t: int) -> tuple[torch.Tensor, tuple[int, ...]] | None:
        """The branch's model at position ``t`` and its node ids: from the segment with ``start < t <= end`` (at a
        cut that is the model before the cut's noise), position 0 from the original run."""
        for s, (seg, end) in enumerate(self.branch):
            if (seg.start < t <= end or (t == 0 and s == 0)) and t in seg.checkpoints:
                return seg.checkpoints[t], seg.nodes
        return None

    def unlearn(
        self,
        forget: Iterable[int] | int,
        epsilon: float,
        delta: float,
        sigma: float | None = None,
        *,
        max_rounds: int | None = None,
        mechanism: str | None = None,
        bound: str | None = None,
        seed: int | None = None,
        select: str = "latest",
        t_star: int | None = None,
        resume_lr: float | None = None,
    ) -> UnlearnResult:
        """Remove ``forget`` (on top of earlier requests): rewind, add calibrated Gaussian noise, resume training.

        Give ``sigma`` (budgeted noise: the latest checkpoint whose bound ``<= psi*`` is chosen) or ``max_rounds``
        (budgeted rounds: the earliest checkpoint ``>= T - max_rounds``, ``sigma`` calibrated to its bound).
        ``seed`` seeds the noise (default: the training seed); each request draws fresh noise.

        ``select="precommitted"`` takes the rewind point ``t_star`` fixed before the request (so it cannot depend on
        the forgotten clients' messages): ``sigma`` given must cover the bound there (else ValueError), or, without
        ``sigma``, is calibrated to it.  ``select="latest"`` (default) picks it from the bound as above.

        ``resume_lr`` is the step size of the resumed rounds (default: the training run's).  The certificate covers
        the released start; the resumed rounds only post-process it on the kept clients' data, so their step size
        does not change it (the bound itself is always that of the original training run)."""
        mechanism = self.mechanism if mechanism is None else mechanism
        epsilon, delta = check_privacy(epsilon, delta, mechanism)
        if resume_lr is not None and (
            isinstance(resume_lr, bool)
            or not isinstance(resume_lr, (int, float))
            or not (math.isfinite(resume_lr) and resume_lr > 0)
        ):
            raise ValueError(f"resume_lr must be a finite number > 0, got {resume_lr!r}")
        if getattr(self, "_resumed_off_lr", False):
            raise ValueError(
                "an earlier request resumed with a resume_lr other than the training step size: the bound for a "
                "further request along that branch is not derived; use a fresh TraceDU for each such request"
            )
        F = self._forget(forget)
        if select not in ("latest", "precommitted"):
            raise ValueError(f"select must be 'latest' or 'precommitted', got {select!r}")
        if select == "precommitted":
            if max_rounds is not None:
                raise ValueError("select='precommitted' takes t_star (and optionally sigma), not max_rounds")
            if isinstance(t_star, bool) or not isinstance(t_star, (int, np.integer)) or not 0 <= t_star <= self.T:
                raise ValueError(
                    f"t_star must be an integer in [0, {self.T}] for select='precommitted', got {t_star!r}"
                )
        elif t_star is not None:
            raise ValueError("t_star is only taken with select='precommitted'")
        elif (sigma is None) == (max_rounds is None):
            raise ValueError("give exactly one of sigma (budgeted noise) or max_rounds (budgeted rounds)")
        sens = self.sensitivity(F, bound)
        ck = [k for k, t in enumerate(sens.rounds) if self._checkpoint(int(t)) is not None]
        if select == "precommitted":
            hit = [k for k in ck if int(sens.rounds[k]) == int(t_star)]
            if not hit:
                raise ValueError(f"t_star={t_star} is not a checkpoint of the current branch")
            k = hit[-1]
            if sigma is None:
                cal = gaussian_sigma if mechanism == "classic" else analytic_gaussian_sigma
                sigma = cal(epsilon, delta, float(sens.delta[k]))
            else:
                if not (isinstance(sigma, (int, float)) and math.isfinite(sigma) and sigma >= 0):
                    raise ValueError(f"sigma must be a finite number >= 0, got {sigma!r}")
                psi = sensitivity_threshold(epsilon, delta, float(sigma), mechanism)
                if sens.delta[k] > psi:
                    raise ValueError(
                        f"sigma={sigma:g} does not certify the precommitted t_star={t_star}: the bound there is "
                        f"{sens.delta[k]:.4g} > psi*={psi:.4g}; raise sigma or precommit an earlier t_star"
                    )
                sigma = float(sigma)
        elif sigma is not None:
            if not (isinstance(sigma, (int, float)) and math.isfinite(sigma) and sigma >= 0):
                raise ValueError(f"sigma must be a finite number >= 0, got {sigma!r}")
            psi = sensitivity_threshold(epsilon, delta, float(sigma), mechanism)
            k = max(k for k in ck if sens.delta[k] <= psi)  # position 0 always qualifies (Delta = 0)
            sigma = float(sigma)
        else:
            if (
                isinstance(max_rounds, bool)
                or not isinstance(max_rounds, (int, np.integer))
                or not (0 <= max_rounds <= self.T)
            ):
                raise ValueError(f"max_rounds must be an integer in [0, {self.T}], got {max_rounds!r}")
            k = min(k for k in ck if sens.rounds[k] >= self.T - max_rounds)
            cal = gaussian_sigma if mechanism == "classic" else analytic_gaussian_sigma
            sigma = cal(epsilon, delta, float(sens.delta[k]))
        t_star, D = int(sens.rounds[k]), float(sens.delta[k])
        X, ids = self._checkpoint(t_star)
        U = tuple(sorted(set(F) | set(self.removed)))
        kept = sens.nodes
        loc = {g: j for j, g in enumerate(ids)}
        req = len(self.certificates)
        s = self.config["seed"] if seed is None else int(seed)
        noise = torch.stack([_noise(s, req, i, X.shape[1]) for i in kept]) * sigma
        start = _release(X[[loc[i] for i in kept]], noise)
        cfg = self.config
        seg = DecentralizedSGD(
            self.model,
            [self.data[i] for i in kept],
            remove_nodes(self.W0, U),
            local_steps=cfg["local_steps"],
            lr=cfg["lr"] if resume_lr is None else float(resume_lr),
            batch_size=cfg["batch_size"],
            rounds=self.T - t_star,
            seed=cfg["seed"],
            ckpt_every=cfg["ckpt_every"],
            node_ids=kept,
            init=start,
            start_round=t_star,
        ).run()
        kept_segments = [(sg, min(end, t_star)) for sg, end in self.branch if sg.start < t_star]
        self.branch = kept_segments or [(self.branch[0][0], 0)]
        self.noises = self.noises[: len(self.branch) - 1]
        self.branch.append((seg, seg.end))
        self.noises.append((req, sigma, s))
        self.removed = U
        self._resumed_off_lr = resume_lr is not None and float(resume_lr) != float(cfg["lr"])
        cert = Certificate(
            epsilon,
            delta,
            sigma,
            t_star,
            D,
            self.T - t_star,
            F,
            U,
            self.regime,
            self.smoothness,
            self.strong_convexity,
            self.rho,
            mechanism,
            bound or self.bound,
            self.heuristic,
            tuple(self.violations),
        )
        self.certificates.append(cert)
        return UnlearnResult(seg.final, cert, seg, sens, kept, noise)

    def reference(self, forget: Iterable[int] | int = ()) -> tuple[np.ndarray, torch.Tensor, tuple[int, ...]]:
        """The coupled reference ``A_{-U}`` for ``U = removed + forget`` along the current branch: trained on
        ``V \\ U`` from the same init with the same batches, the same noise draws at the branch's cuts.  Returns
        ``(positions, models (len(positions), |V \\ U|, p), kept ids)`` (positions: every checkpoint of the branch)."""
        U = set(self._forget(forget, allow_empty=True)) | set(self.removed)
        kept = tuple(i for i in self.all_nodes if i not in U)
        Wk, cfg = remove_nodes(self.W0, sorted(U)), self.config
        X = self.branch[0][0].checkpoints[0][[self.all_nodes.index(i) for i in kept]]
        pos, out = [], []
        for s, (seg, end) in enumerate(self.branch):
            if s > 0:
                req, sigma, nseed = self.noises[s - 1]
                X = X + torch.stack([_noise(nseed, req, i, X.shape[1]) for i in kept]) * sigma
            run = DecentralizedSGD(
                self.model,
                [self.data[i] for i in kept],
                Wk,
                local_steps=cfg["local_steps"],
                lr=cfg["lr"],
                batch_size=cfg["batch_size"],
                rounds=end - seg.start,
                seed=cfg["seed"],
                ckpt_every=cfg["ckpt_every"],
                node_ids=kept,
                init=X,
                start_round=seg.start,
            ).run()
            for t in sorted(run.checkpoints):
                if s == 0 or t > seg.start:
                    pos.append(t)
                    out.append(run.checkpoints[t])
            X = run.final
        return np.array(pos), torch.stack(out), kept

    def branch_models(self) -> tuple[np.ndarray, list[torch.Tensor], list[tuple[int, ...]]]:
        """The actual run along the branch: ``(positions, models at each, node ids at each)``."""
        pos, out, ids = [], [], []
        for s, (seg, end) in enumerate(self.branch):
            for t in sorted(seg.checkpoints):
                if t <= end and (s == 0 or t > seg.start):
                    pos.append(t)
                    out.append(seg.checkpoints[t])
                    ids.append(seg.nodes)
        return np.array(pos), out, ids
