r"""``ConformalReliability``: conformal prediction sets in a latent space and the worst metric inside them.

For a condition ``x`` we draw ``K`` outputs from the generator, encode them, ``z_k = E(G(x, xi_k))``, and
build a set shape from them.  Split conformal calibration on held-out real pairs ``(x_i, y_i)`` picks the
set's size ``qhat`` so that ``P(E(Y) in C(X)) >= 1 - alpha``; the reliability score is
``R(x) = min_{z in C(x)} m(x, z)``.
"""

from __future__ import annotations

import hashlib
import math
import warnings
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, Protocol

import numpy as np
import torch

from ._optimize import WorstCase, worst_case
from ._sets import Ellipsoid, HullSet, UnionOfBalls

__all__ = ["ConformalReliability", "conformal_quantile", "min_calibration_size", "SET_TYPES"]

SET_TYPES = ("ellipsoid", "ball", "hull", "pcp")

#: Conditions whose latent samples are kept (least recently used dropped first) when samples are shared.
CACHE_SIZE = 4096


def _condition_key(x):
    """A hashable key that identifies the condition ``x`` by value (``None`` when there is none)."""
    if isinstance(x, torch.Tensor):
        x = x.detach().cpu().numpy()
    if isinstance(x, (str, bytes)):
        return (type(x).__name__, x)
    if isinstance(x, (int, float, complex, bool, np.generic, np.ndarray, list, tuple)):
        try:
            a = np.asarray(x)
        except (ValueError, TypeError):
            a = None
        if a is not None and a.dtype != object:
            return ("array", a.dtype.str, a.shape, a.tobytes())
    try:
        hash(x)
    except TypeError:
        return None
    return ("hash", type(x).__qualname__, x)


class Generator(Protocol):
    def sample(self, x: Any, n: int, rng: np.random.Generator) -> Any: ...


def min_calibration_size(alpha: float) -> int:
    """Smallest ``n`` with ``ceil((n + 1)(1 - alpha)) <= n``, i.e. a finite conformal quantile."""
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must lie in (0, 1), got {alpha!r}")
    n = max(1, math.floor((1.0 - alpha) / alpha) - 1)
    while _rank(n, alpha) > n:
        n += 1
    return n


def _rank(n: int, alpha: float) -> int:
    # ceil((n+1)(1-alpha)) with a guard against rounding just above an integer (e.g. 10 * 0.9)
    v = (n + 1) * (1.0 - alpha)
    return int(math.ceil(v - 1e-9 * max(1.0, v)))


def conformal_quantile(scores, alpha: float) -> float:
    r"""Split-conformal threshold: the ``k``-th smallest of ``n`` scores, ``k = ceil((n + 1)(1 - alpha))``.

    Returns ``inf`` when ``k > n`` (too few scores for level ``1 - alpha``).  With exchangeable scores,
    ``P(s_{n+1} <= qhat) >= 1 - alpha``, and ``<= 1 - alpha + 1 / (n + 1)`` when there are no ties.
    """
    s = np.asarray(scores, dtype=float).ravel()
    if s.size == 0:
        raise ValueError("scores must hold at least one value")
    if np.any(np.isnan(s)):
        raise ValueError("scores must not contain NaN")
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must lie in (0, 1), got {alpha!r}")
    k = _rank(s.size, alpha)
    if k > s.size:
        return math.inf
    return float(np.partition(s, k - 1)[k - 1])


class ConformalReliability:
    r"""Conformal reliability (CReL) of a conditional generator, in the style of MAPIE's conformal estimators.

    ``R_alpha(x) = min_{z in C_alpha(x)} m(x, z)`` where ``C_alpha(x)`` is a conformal prediction set for
    the latent ``E(Y)`` at confidence ``1 - alpha``, built from ``K`` generated samples.

    Set types (``set_type``), with ``mu`` / ``S`` the mean / covariance of the ``K`` latent samples:

    * ``"ellipsoid"`` (default): ``Sigma = (1 - lam) S + lam (tr S / d) I + eps I``, ``L = chol(Sigma)``,
      score ``||L^{-1}(E(y) - mu)||``, set ``{mu + L u : ||u|| <= qhat}``.
    * ``"ball"``: isotropic, score ``||E(y) - mu||``, set ``B(mu, qhat)``.
    * ``"hull"``: score = the gauge of the centred convex hull ``conv{z_k} - mu`` at ``E(y) - mu`` (an LP, or
      closed form from the hull's facets), set ``mu + qhat (conv{z_k} - mu)`` (:class:`HullSet`); needs
      ``K >= d + 1`` samples to span the latent space.
    * ``"pcp"``: the PCP baseline, score ``min_k ||E(y) - z_k||``, set ``union_k B(z_k, qhat)`` (not convex).

    Parameters
    ----------
    generator : object with ``sample(x, n, rng) -> outputs``
        Draws ``n`` outputs for the condition ``x`` (``rng`` is a ``numpy.random.Generator``).
    encoder : callable ``outputs -> array (n, d)``
        Maps outputs (generated or real) to latent vectors; ``None`` means the identity.
    metric : callable ``(x, z) -> Tensor (n,)``
        Quality of latent points ``z`` (float64 tensor ``(n, d)``) for condition ``x``; higher is better,
        differentiable in ``z``.
    confidence_level : float in (0, 1)
        ``1 - alpha``.
    n_samples : int >= 1
        ``K``, generated samples per condition (``"ellipsoid"`` needs ``K >= 2`` to estimate a covariance).
    set_type : {"ellipsoid", "ball", "hull", "pcp"}
    shrinkage : float in [0, 1]
        ``lam`` above.
    eps : float > 0
        Ridge added to ``Sigma`` (keeps degenerate sample clouds invertible).
    random_state : int or None
        Seed of the generator draws.
    optimizer_kwargs : dict, optional
        Passed to :func:`worst_case` (``n_random_starts``, ``max_iter``, ``tol``, ``n_screen``, ...).
    share_samples : bool
        If True (default), the ``K`` latent samples of a condition are drawn once after calibration and reused
        by :meth:`predict_set`, :meth:`reliability`, :meth:`latent_samples` and the baselines, so they all
        describe the same set (cached per condition, keyed by its value: numbers, arrays, tensors, strings or
        any hashable object; up to ``CACHE_SIZE`` conditions).  If False, each call draws fresh samples.
        Either way, an explicit ``latent_samples=`` argument wins.  Calibration always draws fresh samples
        per pair and never reads the cache (the test draws must be independent of the calibration labels).

    Attributes (after :meth:`conformalize`)
    ----------------------------------------
    conformity_scores_ : array (n,), the calibration scores.
    qhat_ : float, the conformal threshold (the sets' radius).
    latent_dim_ : int, ``d``.
    """

    def __init__(
        self,
        generator: Generator,
        encoder: Callable[[Any], Any] | None,
        metric: Callable[[Any, torch.Tensor], torch.Tensor],
        confidence_level: float = 0.9,
        n_samples: int = 32,
        set_type: str = "ellipsoid",
        shrinkage: float = 0.1,
        eps: float = 1e-6,
        random_state: int | None = 0,
        optimizer_kwargs: dict | None = None,
        share_samples: bool = True,
    ) -> None:
        if not hasattr(generator, "sample") or not callable(generator.sample):
            raise TypeError("generator must have a method sample(x, n, rng) -> outputs")
        if encoder is not None and not callable(encoder):
            raise TypeError("encoder must be callable (outputs -> array of shape (n, d)) or None")
        if not callable(metric):
            raise TypeError("metric must be callable: metric(x, z) -> Tensor of shape (n,)")
        if isinstance(confidence_level, bool) or not isinstance(confidence_level, (int, float, np.floating)):
            raise TypeError(f"confidence_level must be a float in (0, 1), got {confidence_level!r}")
        if not 0.0 < float(confidence_level) < 1.0:
            raise ValueError(f"confidence_level must lie in the open interval (0, 1), got {confidence_level!r}")
        if set_type not in SET_TYPES:
            raise ValueError(f"set_type must be one of {SET_TYPES}, got {set_type!r}")
        if isinstance(n_samples, bool) or not isinstance(n_samples, (int, np.integer)):
            raise TypeError(f"n_samples must be an integer >= 1, got {n_samples!r}")
        min_k = 2 if set_type == "ellipsoid" else 1
        if n_samples < min_k:
            raise ValueError(f"n_samples must be >= {min_k} for set_type={set_type!r}, got {n_samples}")
        if not 0.0 <= float(shrinkage) <= 1.0:
            raise ValueError(f"shrinkage must lie in [0, 1], got {shrinkage!r}")
        if not float(eps) > 0.0:
            raise ValueError(f"eps must be > 0, got {eps!r}")
        if optimizer_kwargs is not None and not isinstance(optimizer_kwargs, dict):
            raise TypeError(f"optimizer_kwargs must be a dict or None, got {type(optimizer_kwargs).__name__}")
        if random_state is not None and (
            isinstance(random_state, bool) or not isinstance(random_state, (int, np.integer))
        ):
            raise TypeError(f"random_state must be a non-negative integer or None, got {random_state!r}")
        if random_state is not None and random_state < 0:
            raise ValueError(f"random_state must be a non-negative integer or None, got {random_state!r}")
        if not isinstance(share_samples, bool):
            raise TypeError(f"share_samples must be True or False, got {share_samples!r}")
        self.generator = generator
        self.encoder = encoder
        self.metric = metric
        self.confidence_level = float(confidence_level)
        self.n_samples = int(n_samples)
        self.set_type = set_type
        self.shrinkage = float(shrinkage)
        self.eps = float(eps)
        self.random_state = random_state
        self.optimizer_kwargs = dict(optimizer_kwargs or {})
        self.share_samples = share_samples
        self._rng = np.random.default_rng(random_state)
        self._cache: OrderedDict = OrderedDict()

    @property
    def alpha(self) -> float:
        return 1.0 - self.confidence_level

    # -- latent samples and set shapes -------------------------------------------------------------------
    def _encode(self, outputs, n_expected: int | None, what: str) -> np.ndarray:
        z = outputs if self.encoder is None else self.encoder(outputs)
        if isinstance(z, torch.Tensor):
            z = z.detach().cpu().numpy()
        z = np.asarray(z, dtype=float)
        d_known = getattr(self, "latent_dim_", None)
        ok = z.ndim == 2 and (n_expected is None or z.shape[0] == n_expected)
        ok = ok and (d_known is None or z.shape[1] == d_known) and z.shape[1] >= 1
        if (
            not ok
            and z.ndim == 2
            and d_known is not None
            and z.shape[1] != d_known
            and (n_expected is None or z.shape[0] == n_expected)
        ):
            src = getattr(self, "_dim_source", "the calibration outputs")
            raise ValueError(
                f"encoder output for {what} must have shape ({z.shape[0]}, {d_known}), got shape {z.shape}: "
                f"{src} encoded to latent dimension d = {d_known} and the generator's outputs to d = {z.shape[1]}; "
                "they must match (after the encoder)"
            )
        if not ok:
            want = f"({n_expected if n_expected is not None else 'n'}, {d_known if d_known else 'd'})"
            raise ValueError(f"encoder output for {what} must have shape {want}, got shape {z.shape}")
        if not np.all(np.isfinite(z)):
            raise ValueError(f"encoder output for {what} contains NaN or inf")
        return z

    def _draw(self, x) -> np.ndarray:
        out = self.generator.sample(x, self.n_samples, self._rng)
        return self._encode(out, self.n_samples, f"generator samples (n_samples={self.n_samples})")

    def latent_samples(self, x, *, fresh: bool = False) -> np.ndarray:
        """``K`` encoded generator samples for condition ``x``, shape ``(K, d)``.

        With ``share_samples=True`` (the default) and ``fresh=False``, the same samples for the same ``x`` on
        every call until the next :meth:`conformalize` (drawn on first use); otherwise fresh draws.
        """
        if fresh or not self.share_samples:
            return self._draw(x)
        key = _condition_key(x)
        if key is None:
            warnings.warn(
                f"condition of type {type(x).__name__} cannot be used as a cache key: its latent samples are drawn "
                "fresh on every call; pass latent_samples= to predict_set / reliability to share them",
                stacklevel=2,
            )
            return self._draw(x)
        if key in self._cache:
            self._cache.move_to_end(key)
            return self._cache[key].copy()
        Z = self._draw(x)
        self._cache[key] = Z.copy()
        if len(self._cache) > CACHE_SIZE:
            self._cache.popitem(last=False)
        return Z

    def clear_samples(self) -> None:
        """Forget the shared latent samples (the next call draws new ones)."""
        self._cache.clear()

    def _shape(self, Z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(mu, L)`` of the set built from latent samples ``Z`` (``L`` is ``I`` for "ball")."""
        d = Z.shape[1]
        mu = Z.mean(axis=0)
        if self.set_type == "ball":
            return mu, np.eye(d)
        S = np.cov(Z, rowvar=False, ddof=1).reshape(d, d) if len(Z) > 1 else np.zeros((d, d))
        Sigma = (1 - self.shrinkage) * S + self.shrinkage * (np.trace(S) / d) * np.eye(d) + self.eps * np.eye(d)
        return mu, np.linalg.cholesky(Sigma)

    def _score_one(self, Z: np.ndarray, z_true: np.ndarray) -> float:
        if self.set_type == "pcp":
            return float(np.linalg.norm(Z - z_true, axis=1).min())
        if self.set_type == "hull":
            H = HullSet(Z, 1.0)
            return float(H.gauge(z_true - H.center))
        mu, L = self._shape(Z)
        from scipy.linalg import solve_triangular

        return float(np.linalg.norm(solve_triangular(L, z_true - mu, lower=True)))

    def _set_from(self, Z: np.ndarray, radius: float) -> Ellipsoid | UnionOfBalls | HullSet:
        if self.set_type == "pcp":
            return UnionOfBalls(Z, radius)
        if self.set_type == "hull":
            return HullSet(Z, radius)
        mu, L = self._shape(Z)
        return Ellipsoid(mu, L, radius)

    def _pairs(self, X, Y, name_x: str, name_y: str):
        if isinstance(X, (str, bytes)) or not hasattr(X, "__len__"):
            raise TypeError(f"{name_x} must be a sequence or array of conditions")
        n = len(X)
        if n == 0:
            raise ValueError(f"{name_x} must hold at least one condition")
        if not hasattr(Y, "__len__") or len(Y) != n:
            got = len(Y) if hasattr(Y, "__len__") else type(Y).__name__
            raise ValueError(f"{name_y} must hold one output per condition in {name_x} ({n}), got {got}")
        Zy = self._encode(Y, n, name_y)
        return n, Zy

    def conformity_scores(self, X, Y) -> np.ndarray:
        """Non-conformity scores ``s(x_i, y_i)`` of pairs, with fresh generator draws for each ``x_i``.

        ``y in C(x)`` if and only if ``s(x, y) <= qhat``, so thresholding these at ``qhat_`` gives coverage.
        """
        n, Zy = self._pairs(X, Y, "X", "Y")
        return np.array([self._score_one(self._draw(X[i]), Zy[i]) for i in range(n)])

    # -- the MAPIE-style workflow -------------------------------------------------------------------------
    def conformalize(self, X_cal, Y_cal) -> ConformalReliability:
        """Compute calibration scores on real pairs and the conformal threshold ``qhat_``.

        Raises ``ValueError`` when ``len(X_cal)`` is below :func:`min_calibration_size` for the level
        (the threshold would be infinite).
        """
        if isinstance(X_cal, (str, bytes)) or not hasattr(X_cal, "__len__"):
            raise TypeError("X_cal must be a sequence or array of conditions")
        n_min = min_calibration_size(self.alpha)
        if len(X_cal) < n_min:
            raise ValueError(
                f"X_cal holds {len(X_cal)} calibration points, too few for confidence_level="
                f"{self.confidence_level:g}: at least {n_min} are needed (ceil((n + 1) * confidence_level) "
                "must not exceed n)"
            )
        self.__dict__.pop("latent_dim_", None)  # a new calibration may use a new encoder output size
        self._rng = np.random.default_rng(self.random_state)
        self._cache.clear()
        n, Zy = self._pairs(X_cal, Y_cal, "X_cal", "Y_cal")
        self.latent_dim_ = Zy.shape[1]
        self._dim_source = "Y_cal"
        if self.set_type == "hull" and self.n_samples < self.latent_dim_ + 1:
            raise ValueError(
                f"n_samples must be >= d + 1 = {self.latent_dim_ + 1} for set_type='hull' (the hull of fewer samples "
                f"does not span the {self.latent_dim_}-dimensional latent space), got {self.n_samples}"
            )
        self.conformity_scores_ = np.array([self._score_one(self._draw(X_cal[i]), Zy[i]) for i in range(n)])
        self.qhat_ = conformal_quantile(self.conformity_scores_, self.alpha)
        self.n_calibration_ = n
        return self

    calibrate = conformalize

    def _check_fitted(self) -> None:
        if not hasattr(self, "qhat_"):
            raise RuntimeError("call conformalize(X_cal, Y_cal) before predict_set / reliability / score / coverage")

    def _samples(self, x, latent_samples) -> np.ndarray:
        if latent_samples is None:
            return self.latent_samples(x)
        Z = np.asarray(latent_samples, dtype=float)
        if Z.ndim != 2 or Z.shape[1] != self.latent_dim_ or len(Z) < (2 if self.set_type == "ellipsoid" else 1):
            raise ValueError(
                f"latent_samples must have shape (K, {self.latent_dim_}) with K >= "
                f"{2 if self.set_type == 'ellipsoid' else 1}, got {Z.shape}"
            )
        return Z

    def predict_set(self, x, latent_samples=None) -> Ellipsoid | UnionOfBalls | HullSet:
        """The prediction set ``C_alpha(x)``: an :class:`Ellipsoid` ("ellipsoid", "ball"), a :class:`HullSet`
        ("hull") or a :class:`UnionOfBalls` ("pcp").

        ``latent_samples`` (shape ``(K, d)``): encoded generator samples for ``x`` to build the set from; when
        ``None``, :meth:`latent_samples` (the shared samples of ``x`` by default, see ``share_samples``).
        """
        self._check_fitted()
        return self._set_from(self._samples(x, latent_samples), self.qhat_)

    def reliability(self, x, return_argmin: bool = False, latent_samples=None) -> float | tuple[float, np.ndarray]:
        """``R_alpha(x) = min_{z in C_alpha(x)} m(x, z)`` by multi-start PGD (the samples are extra starts).

        The set is the one :meth:`predict_set` returns for the same ``x`` (the same shared samples unless
        ``share_samples=False``).  With ``return_argmin=True`` also returns the latent minimiser (decode it to
        see the worst output).
        """
        res = self.reliability_details(x, latent_samples)
        return (res.value, res.argmin) if return_argmin else res.value

    def reliability_details(self, x, latent_samples=None) -> WorstCase:
        """Like :meth:`reliability` but returns the full :class:`WorstCase` record."""
        self._check_fitted()
        Z = self._samples(x, latent_samples)
        S = self._set_from(Z, self.qhat_)
        kw = {"random_state": self._optimizer_seed(x)} | self.optimizer_kwargs
        return worst_case(lambda z: self.metric(x, z), S, "pgd", starts=Z, **kw)

    def _optimizer_seed(self, x) -> int:
        """A seed for the optimizer's random starts that depends on ``random_state`` and ``x`` only, so that a
        repeated call returns the same worst case (and does not consume the generator's random stream)."""
        key = _condition_key(x)
        if key is None or (key[0] == "hash" and type(x).__repr__ is object.__repr__):
            h = b"\0\0\0\0"  # no value-based repr (it would hold a memory address): one fixed seed
        else:
            h = hashlib.blake2b(repr(key).encode(), digest_size=4).digest()
        base = 0 if self.random_state is None else int(self.random_state)
        return int(np.random.default_rng([base % 2**32, int.from_bytes(h, "little")]).integers(2**31))

    def score(self, X) -> float:
        """Model-level reliability: the mean of ``R_alpha(x)`` over conditions ``X`` (higher is better)."""
        self._check_fitted()
        if isinstance(X, (str, bytes)) or not hasattr(X, "__len__") or len(X) == 0:
            raise ValueError("X must be a non-empty sequence of conditions")
        return float(np.mean([self.reliability(x) for x in X]))

    def coverage(self, X_test, Y_test) -> float:
        """Share of test pairs whose latent output lies in its prediction set."""
        self._check_fitted()
        n, Zy = self._pairs(X_test, Y_test, "X_test", "Y_test")
        return float(np.mean([self.predict_set(X_test[i]).contains(Zy[i]) for i in range(n)]))
