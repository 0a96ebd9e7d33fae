"""``CountICA``: the scikit-learn-style wrapper around :class:`~icml26.count_ica.model.ARPLNICA`.

Training alternates, per mini-batch, (i) one AdamW step on the encoder, ``W``, the intercept and ``M`` for
``-ELBO / (n_batch T K)`` (+ ``l2_mixing * sum_i ||W_:,i||``), gradient norm clipped to 5, cosine-annealed
learning rate, and (ii) the closed-form M-step for the prior (:meth:`ARPLNICA.m_step`).  Early stopping: the
relative change of the epoch loss stays below ``tol`` for ``patience`` epochs.  ``fit(..., checkpoint=path)``
saves the whole training state every ``checkpoint_every`` epochs and resumes from it when the file exists.
"""

from __future__ import annotations

import math
import os
import warnings
from pathlib import Path

import numpy as np
import torch
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted

from .model import ARPLNICA

__all__ = ["CountICA", "validate_counts", "regime_marginals", "viterbi_path"]


def validate_counts(X, name: str = "X") -> np.ndarray:
    """``X`` as a float ``(n, T, K)`` array of non-negative counts; errors name the offending entries.

    A 2-D ``X`` ``(n_samples, K)`` is read as ``n_samples`` sequences of length 1 (scikit-learn's reading: rows
    are samples; no dynamics).  Non-integer non-negative values are accepted, as scikit-learn's Poisson and KL
    models (``PoissonRegressor``, ``NMF(beta_loss="kullback-leibler")``, ``LatentDirichletAllocation``) accept
    them: the Poisson log-likelihood ``x log r - r - log Gamma(x + 1)`` is defined for real ``x >= 0``."""
    if isinstance(X, torch.Tensor):
        X = X.detach().cpu().numpy()
    if hasattr(X, "toarray") or hasattr(X, "tocsr"):
        raise TypeError(f"{name} must be a dense array of counts: sparse input is not supported")
    try:
        A = np.asarray(X)
    except Exception as exc:  # pragma: no cover - exotic inputs
        raise TypeError(f"{name} must be array-like of counts, got {type(X).__name__}") from exc
    if np.iscomplexobj(A):
        raise ValueError(f"Complex data not supported: {name} must hold real non-negative counts")
    if A.dtype == object:
        A = A.astype(np.float64)  # numbers stored as objects; anything else raises float()'s TypeError
    if not (np.issubdtype(A.dtype, np.number) or A.dtype == bool):
        raise TypeError(f"{name} must be a numeric array of counts, got dtype {A.dtype}")
    if A.ndim not in (2, 3):
        raise ValueError(
            f"{name} must have shape (n_sequences, n_times, n_features) or (n_samples, n_features), got shape "
            f"{A.shape}" + (": Reshape your data (one sample: X.reshape(1, -1))" if A.ndim < 2 else "")
        )
    if A.shape[-1] < 1:
        raise ValueError(f"{name} has 0 feature(s) (shape={A.shape}) while a minimum of 1 is required.")
    if min(A.shape) < 1:
        raise ValueError(f"{name} must hold at least one sequence and time, got shape {A.shape}")
    if A.ndim == 2:
        A = A[:, None, :]
    A = A.astype(np.float64)
    if not np.all(np.isfinite(A)):
        bad = np.argwhere(~np.isfinite(A))[:5].tolist()
        raise ValueError(
            f"{name} must be finite counts (no NaN or inf); non-finite entries at (sequence, time, feature) {bad}"
        )
    if np.any(A < 0):
        bad = np.argwhere(A < 0)[:5].tolist()
        raise ValueError(
            f"Negative values in data passed to {name}: it must hold non-negative counts; negative entries at "
            f"(sequence, time, feature) {bad} (values {[A[tuple(i)] for i in bad]})"
        )
    return A


def _check_int(name: str, v, lo: int) -> int:
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
        raise TypeError(f"{name} must be an integer >= {lo}, got {type(v).__name__}")
    if v < lo:
        raise ValueError(f"{name} must be an integer >= {lo}, got {v}")
    return int(v)


def _check_pos(name: str, v, allow_zero: bool = False) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float, np.floating, np.integer)):
        raise TypeError(f"{name} must be a real number, got {type(v).__name__}")
    if not (v >= 0 if allow_zero else v > 0) or not math.isfinite(v):
        raise ValueError(f"{name} must be {'>= 0' if allow_zero else '> 0'} and finite, got {v}")
    return float(v)


class CountICA(TransformerMixin, BaseEstimator):
    """Regime-adaptive ICA for temporal count data (ARPLN-ICA): a scikit-learn transformer (FastICA's names).

    Parameters: ``n_components`` (d), ``n_regimes`` (C), ``variational`` ``"ar"`` | ``"mf"`` (mean field,
    ``Bt = 0``), ``temporal_prior`` (``False`` holds the prior's AR coefficient at 0: sources i.i.d. in time, the
    ablation that removes the dynamics the method relies on), ``predictive`` (causal encoder), ``offsets``
    ``"zero"`` | ``"logsum"`` (``log(sum_j x_tj + 1)``) or an ``(n, T)`` array passed to ``fit``,
    ``fit_intercept`` (per-feature log-rate ``mu0``), ``encoder_hidden``,
    ``max_epochs``, ``lr``, ``weight_decay``, ``batch_size`` (``None`` = full batch), ``tol``, ``patience``,
    ``l2_mixing``, ``init`` ``"random"`` (the paper's start: ``W = 0.01 N(0, 1)``, ``Gamma = W / ||W||`` random
    directions; the small scale lets each Adam step turn ``Gamma`` far) | ``"pca"`` | ``"fastica"`` (FastICA on
    ``log(X + 0.5)``, unit columns) | a ``(K, d)`` array of starting columns, ``covariance`` ``"full"`` (the
    posterior couples the components at each time; the default, issue 56) | ``"diag"`` (the paper's family, factorised
    across components), ``fix_mixing`` (hold ``Gamma`` at an ``init`` array: fit only the posterior and the prior,
    e.g. known loadings, or the truth frozen in place), ``dtype``,
    ``random_state`` (an int, a ``RandomState`` or ``None``: seeds a torch generator local to ``fit``; torch's
    global generator is left as it was), ``checkpoint_every``, ``n_init`` (fits from that many starts, drawn from
    ``random_state``, and keeps the one with the highest final ELBO: a label-free selection, as scikit-learn's
    ``GaussianMixture(n_init=...)``; the first start is the ``n_init=1`` fit; with a checkpoint, start ``r`` writes
    ``checkpoint.init{r}``).

    ``X`` is ``(n, T, K)`` (``n`` sequences of ``T`` times) or ``(n_samples, K)`` (``n_samples`` sequences of length
    1: a static PLN-ICA).  ``transform(X)`` returns the posterior means of the sources, ``(n, T, d)`` (``(n, d)``
    for 2-D ``X``); ``transform(X, return_variance=True)`` or :meth:`transform_variance` give the variances.

    Attributes after ``fit``: ``mixing_`` ``(K, d)`` unit columns (Gamma), ``components_`` ``(d, K)`` its
    pseudo-inverse, ``intercept_`` ``(K,)``, ``transition_`` ``(d, C, C)``, ``initial_`` ``(d, C)``,
    ``ar_coef_``/``ar_bias_``/``ar_var_`` ``(d, C)``, ``elbo_history_`` (ELBO per sequence, each epoch),
    ``n_iter_``, ``model_`` (the :class:`ARPLNICA`).
    """

    def __init__(
        self,
        n_components: int,
        n_regimes: int = 1,
        *,
        variational: str = "ar",
        temporal_prior: bool = True,
        predictive: bool = False,
        offsets="zero",
        fit_intercept: bool = True,
        encoder_hidden: int = 32,
        max_epochs: int = 600,
        lr: float = 5e-3,
        weight_decay: float = 1e-4,
        batch_size: int | None = None,
        tol: float = 1e-4,
        patience: int = 10,
        l2_mixing: float = 0.0,
        init="random",
        covariance: str = "full",
        fix_mixing: bool = False,
        dtype: str = "float32",
        random_state: int | None = 0,
        checkpoint_every: int = 50,
        n_init: int = 1,
    ) -> None:
        self.n_components, self.n_regimes, self.variational = n_components, n_regimes, variational
        self.temporal_prior = temporal_prior
        self.predictive, self.offsets, self.fit_intercept = predictive, offsets, fit_intercept
        self.encoder_hidden, self.max_epochs, self.lr, self.weight_decay = encoder_hidden, max_epochs, lr, weight_decay
        self.batch_size, self.tol, self.patience, self.l2_mixing = batch_size, tol, patience, l2_mixing
        self.init, self.dtype, self.random_state, self.checkpoint_every = init, dtype, random_state, checkpoint_every
        self.covariance, self.fix_mixing, self.n_init = covariance, fix_mixing, n_init

    # -- validation ------------------------------------------------------------------------------------------
    def _validate_params(self) -> None:
        _check_int("n_components", self.n_components, 1)
        _check_int("n_regimes", self.n_regimes, 1)
        _check_int("encoder_hidden", self.encoder_hidden, 1)
        _check_int("max_epochs", self.max_epochs, 1)
        _check_int("patience", self.patience, 1)
        _check_int("checkpoint_every", self.checkpoint_every, 1)
        _check_int("n_init", self.n_init, 1)
        if self.batch_size is not None:
            _check_int("batch_size", self.batch_size, 1)
        _check_pos("lr", self.lr)
        _check_pos("weight_decay", self.weight_decay, allow_zero=True)
        _check_pos("tol", self.tol, allow_zero=True)
        _check_pos("l2_mixing", self.l2_mixing, allow_zero=True)
        if not isinstance(self.temporal_prior, bool):
            raise TypeError(f"temporal_prior must be a bool, got {type(self.temporal_prior).__name__}")
        if self.variational not in ("ar", "mf"):
            raise ValueError(f"variational must be 'ar' or 'mf', got {self.variational!r}")
        if isinstance(self.init, str):
            if self.init not in ("random", "pca", "fastica"):
                raise ValueError(f"init must be 'random', 'pca', 'fastica' or a (K, d) array, got {self.init!r}")
        else:
            W0 = np.asarray(self.init, dtype=float)
            if W0.shape != (self.n_features_in_, self.n_components) or not np.all(np.isfinite(W0)):
                raise ValueError(
                    f"init must be a finite (n_features, n_components) = {(self.n_features_in_, self.n_components)} "
                    f"array of mixing columns, got shape {W0.shape}"
                )
            norms = np.linalg.norm(W0, axis=0)
            if np.any(norms == 0):
                raise ValueError("init has a zero column: every mixing column needs a direction")
            C = np.abs((W0 / norms).T @ (W0 / norms))
            dup = np.argwhere(np.triu(C, 1) > 1.0 - 1e-10)
            if dup.size:
                warnings.warn(
                    f"init has parallel columns {dup[0].tolist()}: a degenerate start"
                    + (" (with fix_mixing=True a rank-deficient model)" if self.fix_mixing else ""),
                    UserWarning,
                    stacklevel=3,
                )
        if self.covariance not in ("full", "diag"):
            raise ValueError(f"covariance must be 'full' or 'diag', got {self.covariance!r}")
        if not isinstance(self.fix_mixing, (bool, np.bool_)):
            raise TypeError(f"fix_mixing must be a bool, got {type(self.fix_mixing).__name__}")
        if self.fix_mixing and isinstance(self.init, str):
            raise ValueError("fix_mixing=True needs init to be a (K, d) array: the mixing to hold fixed")
        if self.dtype not in ("float32", "float64"):
            raise ValueError(f"dtype must be 'float32' or 'float64', got {self.dtype!r}")
        if isinstance(self.offsets, str) and self.offsets not in ("zero", "logsum", "given"):
            raise ValueError(f"offsets must be 'zero', 'logsum', 'given' or an (n, T) array, got {self.offsets!r}")

    def _check_covariates(self, given: int | None) -> None:
        """``covariates`` after ``fit`` must match what the model was fit with (none, or the same number)."""
        want = self.model_.n_covariates
        if given is None and want:
            raise ValueError(f"covariates must be given: this CountICA was fit with {want} covariate(s)")
        if given is not None and not want:
            raise ValueError(
                "covariates were given, but this CountICA was fit without covariates (they would be ignored)"
            )
        if given is not None and given != want:
            raise ValueError(f"covariates must have {want} column(s) (as in fit), got {given}")

    @property
    def _torch_dtype(self):
        return torch.float64 if self.dtype == "float64" else torch.float32

    def _prepare(self, X, offsets=None, covariates=None, reset: bool = False):
        A = validate_counts(X)
        n, T, K = A.shape
        if not reset and hasattr(self, "n_features_in_") and K != self.n_features_in_:
            raise ValueError(f"X has {K} features, but CountICA is expecting {self.n_features_in_} features as input")
        spec = self.offsets if offsets is None else offsets
        if isinstance(spec, str) and spec == "zero":
            o = np.zeros((n, T))
        elif isinstance(spec, str) and spec == "logsum":
            o = np.log(A.sum(-1) + 1.0)
        elif isinstance(spec, str):
            raise ValueError("offsets='given' needs an (n, T) array passed as fit(X, offsets=...)")
        else:
            o = np.asarray(spec, dtype=np.float64)
            if o.shape != (n, T) or not np.all(np.isfinite(o)):
                raise ValueError(f"offsets must be a finite array of shape (n, T) = {(n, T)}, got shape {o.shape}")
        c = None
        if covariates is not None:
            c = np.asarray(covariates, dtype=np.float64)
            if c.ndim != 2 or c.shape[0] != n or not np.all(np.isfinite(c)):
                raise ValueError(f"covariates must be a finite (n, n_covariates) array with n = {n}, got {c.shape}")
        if not reset and hasattr(self, "model_"):
            self._check_covariates(None if c is None else c.shape[1])
        dt = self._torch_dtype
        return (
            torch.as_tensor(A, dtype=dt),
            torch.as_tensor(o, dtype=dt),
            None if c is None else torch.as_tensor(c, dtype=dt),
        )

    # -- fit -------------------------------------------------------------------------------------------------
    def fit(self, X, y=None, *, offsets=None, covariates=None, checkpoint: str | os.PathLike | None = None):
        """Fit by amortised variational EM.  ``X``: ``(n, T, K)`` non-negative integer counts."""
        x, o, c = self._prepare(X, offsets, covariates, reset=True)
        K, d = x.shape[2], self.n_components
        self.n_features_in_ = K
        self._validate_params()
        if d > K:
            raise ValueError(f"n_components must be <= n_features ({K}), got {d}")
        rng = check_random_state(self.random_state)
        seeds = [int(rng.randint(2**31 - 1)) for _ in range(self.n_init)]  # start 0 is the single-start seed
        best = None
        for r, seed in enumerate(seeds):
            with torch.random.fork_rng(devices=[]):  # a local generator: torch's global state is restored on exit
                torch.manual_seed(seed)
                model = self._init_model(x, o, c, seed)
            ck = checkpoint if checkpoint is None or self.n_init == 1 else f"{os.fspath(checkpoint)}.init{r}"
            self._fit_loop(model, x, o, c, seed, ck)
            if self.n_init > 1:  # keep the start with the highest final ELBO (label-free, as GaussianMixture)
                with torch.no_grad():
                    elbo = float(self.model_.elbo(x, o, c)) / x.shape[0]
                if best is None or elbo > best[0]:
                    best = (elbo, self.model_, self.elbo_history_, self.stopped_early_)
        if best is not None:
            self.model_, self.elbo_history_, self.stopped_early_ = best[1:]
            self.n_iter_ = len(self.elbo_history_)
            self._set_attributes()
        return self

    def _init_model(self, x, o, c, seed: int) -> ARPLNICA:
        n, T, K = x.shape
        d, C = self.n_components, self.n_regimes
        model = ARPLNICA(
            K,
            d,
            C,
            0 if c is None else c.shape[1],
            hidden=self.encoder_hidden,
            mlp=self.encoder_hidden,
            mean_field=self.variational == "mf",
            covariance=self.covariance,
            temporal=self.temporal_prior,
            predictive=self.predictive,
            fit_intercept=self.fit_intercept,
        ).to(self._torch_dtype)
        with torch.no_grad():
            logx = torch.log(x + 0.5) - o.unsqueeze(-1)
            model.intercept.copy_(logx.mean((0, 1)) if self.fit_intercept else torch.zeros(K))
            init = self.init if isinstance(self.init, str) else "array"
            if init == "pca":
                Z = (logx - logx.mean((0, 1))).reshape(-1, K)
                _, _, Vt = torch.linalg.svd(Z, full_matrices=False)
                model.W.copy_(Vt[:d].T + 0.1 * torch.randn(K, d, dtype=x.dtype))
            elif init == "fastica":
                from .baselines import fastica_log

                G0 = fastica_log(x.numpy(), d, random_state=seed)
                model.W.copy_(torch.as_tensor(G0 / np.linalg.norm(G0, axis=0), dtype=x.dtype))
            elif init == "array":
                W0 = np.asarray(self.init, dtype=float)
                model.W.copy_(torch.as_tensor(W0 / np.linalg.norm(W0, axis=0), dtype=x.dtype))
        model.W.requires_grad_(not self.fix_mixing)
        return model

    def _fit_loop(self, model: ARPLNICA, x, o, c, seed: int, checkpoint) -> None:
        n, T, K = x.shape
        params = [p for p in model.parameters() if p.requires_grad]
        opt = torch.optim.AdamW(params, lr=self.lr, weight_decay=self.weight_decay)
        bs = n if self.batch_size is None else min(self.batch_size, n)
        n_batches = math.ceil(n / bs)
        sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=self.max_epochs * n_batches)
        history, start, calm = [], 0, 0
        gen = torch.Generator().manual_seed(seed)
        ck = None if checkpoint is None else Path(checkpoint)
        if ck is not None and ck.exists():
            state = torch.load(ck, weights_only=False)
            model.load_state_dict(state["model"])
            opt.load_state_dict(state["opt"])
            sched.load_state_dict(state["sched"])
            gen.set_state(state["gen"])
            history, start, calm = list(state["history"]), int(state["epoch"]), int(state["calm"])
        self.stopped_early_ = False
        for epoch in range(start, self.max_epochs):
            if calm >= self.patience:
                self.stopped_early_ = True
                break
            perm = torch.randperm(n, generator=gen) if n_batches > 1 else torch.arange(n)
            total = 0.0
            for k in range(n_batches):
                idx = perm[k * bs : (k + 1) * bs]
                xb, ob = x[idx], o[idx]
                cb = None if c is None else c[idx]
                q = model(xb, ob, cb)
                elbo = model.elbo(xb, ob, cb, q=q)
                loss = -elbo / (len(idx) * T * K)
                if self.l2_mixing:
                    loss = loss + self.l2_mixing * model.W.norm(dim=0).sum()
                opt.zero_grad(set_to_none=True)
                loss.backward()
                torch.nn.utils.clip_grad_norm_(params, 5.0)
                opt.step()
                sched.step()
                model.m_step({k2: v.detach() for k2, v in q.items()})
                total += float(elbo.detach())
            history.append(total / n)
            if len(history) > 1:
                rel = abs(history[-1] - history[-2]) / max(abs(history[-2]), 1e-12)
                calm = calm + 1 if rel < self.tol else 0
            if ck is not None and ((epoch + 1) % self.checkpoint_every == 0 or epoch + 1 == self.max_epochs):
                tmp = ck.with_suffix(ck.suffix + ".tmp")
                torch.save(
                    {
                        "model": model.state_dict(),
                        "opt": opt.state_dict(),
                        "sched": sched.state_dict(),
                        "gen": gen.get_state(),
                        "history": list(history),
                        "epoch": epoch + 1,
                        "calm": calm,
                    },
                    tmp,
                )
                os.replace(tmp, ck)
        self.model_ = model.eval()
        self.elbo_history_ = np.asarray(history)
        self.n_iter_ = len(history)
        self._set_attributes()

    def _set_attributes(self) -> None:
        m = self.model_
        with torch.no_grad():
            G = m.Gamma.detach().double().numpy()
        self.mixing_ = G
        self.components_ = np.linalg.pinv(G)
        self.intercept_ = m.intercept.detach().double().numpy()
        self.transition_ = m.A.double().numpy()
        self.initial_ = m.pi.double().numpy()
        self.ar_coef_, self.ar_bias_, self.ar_var_ = (
            m.B.double().numpy(),
            m.b.double().numpy(),
            m.psi.double().numpy(),
        )
        self.init_mean_, self.init_var_ = m.bbar.double().numpy(), m.psibar.double().numpy()

    def _check_fitted(self) -> None:
        check_is_fitted(self, "model_")  # sklearn's NotFittedError (a ValueError and an AttributeError)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.positive_only = True  # counts
        tags.input_tags.three_d_array = True  # (n, T, K) sequences
        tags.non_deterministic = False
        return tags

    @torch.no_grad()
    def _posterior(self, X, offsets=None, covariates=None):
        self._check_fitted()
        x, o, c = self._prepare(X, offsets, covariates)
        q = self.model_(x, o, c)
        return x, o, c, q

    # -- inference -------------------------------------------------------------------------------------------
    def transform(self, X, *, return_variance: bool = False, offsets=None, covariates=None):
        """Posterior means of the sources, ``(n, T, d)`` (``(n, d)`` for 2-D ``X``); with ``return_variance=True``
        the pair ``(means, marginal variances)``."""
        if not isinstance(return_variance, bool):
            raise TypeError(f"return_variance must be a bool, got {type(return_variance).__name__}")
        _, _, _, q = self._posterior(X, offsets, covariates)
        mu, var = q["mu"].double().numpy(), q["Sigma"].double().numpy()
        if np.asarray(X).ndim == 2:
            mu, var = mu[:, 0], var[:, 0]
        return (mu, var) if return_variance else mu

    def transform_variance(self, X, *, offsets=None, covariates=None) -> np.ndarray:
        """Posterior marginal variances of the sources, same shape as :meth:`transform`."""
        return self.transform(X, return_variance=True, offsets=offsets, covariates=covariates)[1]

    def score(self, X, y=None, *, offsets=None, covariates=None) -> float:
        """Mean ELBO per sequence (a lower bound on ``log p(x)`` per sequence)."""
        x, o, c, q = self._posterior(X, offsets, covariates)
        with torch.no_grad():
            return float(self.model_.elbo(x, o, c, q=q)) / x.shape[0]

    def refine_posterior(self, X, *, n_steps: int = 300, lr: float = 0.05, offsets=None, covariates=None) -> dict:
        """A non-amortised posterior at the fitted mixing: the family's best bound found on ``X``, not the encoder's.

        Rule: the encoder's per-(sequence, time) head outputs ``z`` (:meth:`ARPLNICA.head_outputs`) become free
        parameters, initialised at the encoder's output for ``X``; the mixing, the intercept and ``M`` are held.
        Each of ``n_steps`` steps (i) runs the closed-form M-step for the prior given ``q(z)``, (ii) records the ELBO
        at ``(q(z), prior)``, (iii) takes one Adam step (learning rate ``lr``) on ``z`` for ``-ELBO / (n T K)``; a
        last M-step and ELBO follow the last step.  Every recorded value is a valid bound (a ``q`` of the family and
        a prior), so the best one, returned, is >= the amortised ELBO at the same parameters.  The estimator is not
        changed (the work is done on a copy of ``model_``).

        Returns a dict: ``elbo`` (the best ELBO per sequence), ``elbo_amortised`` (:meth:`score` at the start),
        ``history`` (ELBO per sequence at each step), ``model`` (the copy with the best step's prior), ``q`` (the
        best step's variational parameters and moments, detached) and ``z`` (its head outputs)."""
        import copy

        self._check_fitted()
        n_steps = _check_int("n_steps", n_steps, 1)
        lr = _check_pos("lr", lr)
        x, o, c = self._prepare(X, offsets, covariates)
        n, T, K = x.shape
        model = copy.deepcopy(self.model_)
        for p in model.parameters():
            p.requires_grad_(False)
        with torch.no_grad():
            z0 = model.head_outputs(x, o, c)
            start = float(model.elbo(x, o, c, q=model.posterior_from_head(z0, x, o, c))) / n
        z = torch.nn.Parameter(z0.clone())
        opt = torch.optim.Adam([z], lr=lr)

        def prior() -> dict:
            return {k: v.clone() for k, v in model.named_buffers()}

        best = (start, z0.clone(), prior())
        history = []
        for step in range(n_steps + 1):
            q = model.posterior_from_head(z, x, o, c)
            model.m_step({k: v.detach() for k, v in q.items()})  # the prior's buffers: q does not depend on them
            elbo = model.elbo(x, o, c, q=q)
            history.append(float(elbo.detach()) / n)
            if history[-1] > best[0]:
                best = (history[-1], z.detach().clone(), prior())
            if step == n_steps:
                break
            opt.zero_grad(set_to_none=True)
            (-elbo / (n * T * K)).backward()
            opt.step()
        for k, v in model.named_buffers():
            v.copy_(best[2][k])
        with torch.no_grad():
            q = model.posterior_from_head(best[1], x, o, c)
        return {
            "elbo": best[0],
            "elbo_amortised": start,
            "history": np.asarray(history),
            "model": model.eval(),
            "q": q,
            "z": best[1],
        }

    def _regime_potentials(self, X, offsets=None, covariates=None):
        _, _, _, q = self._posterior(X, offsets, covariates)
        return self.model_.expected_loglik(q).double()  # (n, T, d, C)

    def predict_proba_regimes(self, X, *, offsets=None, covariates=None) -> np.ndarray:
        """Smoothed regime marginals ``P(u_t^(i) = c | x)`` ``(n, T, d, C)``: forward-backward on the HMM with
        prior ``(pi, A)`` and potentials ``exp L_t(c)`` (the expected Gaussian log-likelihoods under ``q(s)``)."""
        L = self._regime_potentials(X, offsets, covariates)
        logpi = np.log(np.maximum(self.initial_, 1e-300))
        logA = np.log(np.maximum(self.transition_, 1e-300))
        return regime_marginals(logpi, logA, L.numpy())

    def predict_regimes(self, X, *, viterbi: bool = True, offsets=None, covariates=None) -> np.ndarray:
        """Regime path ``(n, T, d)`` ints: the Viterbi path (``viterbi=True``) or the argmax of the marginals."""
        if not isinstance(viterbi, (bool, np.bool_)):
            raise TypeError(f"viterbi must be a bool, got {type(viterbi).__name__} {viterbi!r}")
        if not viterbi:
            return self.predict_proba_regimes(X, offsets=offsets, covariates=covariates).argmax(-1)
        L = self._regime_potentials(X, offsets, covariates).numpy()
        return viterbi_path(np.log(np.maximum(self.initial_, 1e-300)), np.log(np.maximum(self.transition_, 1e-300)), L)

    # -- generation ------------------------------------------------------------------------------------------
    def sample(self, n: int = 100, T: int = 20, *, offsets=None, covariates=None, random_state=None):
        """Draw ``(X, S, U)`` from the fitted generative model: counts ``(n, T, K)``, sources ``(n, T, d)``,
        regimes ``(n, T, d)``.  ``offsets``: a scalar or ``(n, T)`` array (default 0)."""
        self._check_fitted()
        n, T = _check_int("n", n, 1), _check_int("T", T, 1)
        if offsets is not None:
            o = np.asarray(offsets, dtype=float)
            if not (o.ndim == 0 or o.shape == (n, T)) or not np.all(np.isfinite(o)):
                raise ValueError(f"offsets must be a finite scalar or an (n, T) = {(n, T)} array, got shape {o.shape}")
        if covariates is not None:
            cv = np.asarray(covariates, dtype=float)
            if cv.ndim != 2 or cv.shape[0] != n or not np.all(np.isfinite(cv)):
                raise ValueError(f"covariates must be a finite (n, n_covariates) array with n = {n}, got {cv.shape}")
            self._check_covariates(cv.shape[1])
        elif getattr(self.model_, "n_covariates", 0):
            self._check_covariates(None)
        rng = np.random.default_rng(random_state)
        U0 = _draw_cat(rng, np.broadcast_to(self.initial_, (n,) + self.initial_.shape))
        S, U = _simulate(
            rng,
            U0,
            self.init_mean_,
            self.init_var_,
            self.transition_,
            self.ar_coef_,
            self.ar_bias_,
            self.ar_var_,
            T,
            s0=None,
        )
        o = np.zeros((n, T)) if offsets is None else np.broadcast_to(np.asarray(offsets, dtype=float), (n, T))
        eta = o[..., None] + self.intercept_ + S @ self.mixing_.T
        if covariates is not None:
            eta = eta + (np.asarray(covariates, dtype=float) @ self.model_.M.detach().double().numpy().T)[:, None]
        return rng.poisson(np.exp(np.minimum(eta, 30.0))).astype(np.int64), S, U

    def forecast(
        self, X, horizon: int = 1, *, n_samples: int = 200, offsets=None, future_offsets=None, random_state=None
    ) -> np.ndarray:
        """Expected counts ``(n, horizon, K)`` after the observed prefix ``X`` (``(n, T0, K)``): draw
        ``s_{T0} ~ q``, ``u_{T0}`` from the filtered marginal, roll the prior dynamics forward and average
        ``exp(eta)`` over ``n_samples`` paths.  Meant for ``predictive=True`` (the posterior at ``T0`` then
        conditions on the prefix exactly as during training)."""
        horizon, n_samples = _check_int("horizon", horizon, 1), _check_int("n_samples", n_samples, 1)
        self._check_fitted()
        if not self.predictive:
            raise ValueError(
                "forecast needs a model fitted with predictive=True (a causal encoder); this one has predictive=False"
            )
        _, _, _, q = self._posterior(X, offsets)
        mu, Sig = q["mu"][:, -1].double().numpy(), q["Sigma"][:, -1].double().numpy()
        pU = self.predict_proba_regimes(X, offsets=offsets)[:, -1]  # (n, d, C)
        rng = np.random.default_rng(random_state)
        n = mu.shape[0]
        fo = (
            np.zeros((n, horizon))
            if future_offsets is None
            else np.broadcast_to(np.asarray(future_offsets, dtype=float), (n, horizon))
        )
        out = np.zeros((n, horizon, self.n_features_in_))
        for _ in range(n_samples):
            s = mu + np.sqrt(Sig) * rng.standard_normal(mu.shape)
            u = _draw_cat(rng, pU)
            S, _ = _simulate(
                rng, u, None, None, self.transition_, self.ar_coef_, self.ar_bias_, self.ar_var_, horizon + 1, s0=s
            )
            out += np.exp(np.minimum(fo[..., None] + self.intercept_ + S[:, 1:] @ self.mixing_.T, 30.0))
        return out / n_samples


def _draw_cat(rng, P: np.ndarray) -> np.ndarray:
    """One categorical draw per row of ``P`` (``(..., C)``)."""
    cum = np.cumsum(P, axis=-1)
    return np.minimum((rng.random(P.shape[:-1] + (1,)) * cum[..., -1:] > cum).sum(-1), P.shape[-1] - 1)


def _simulate(rng, U0, bbar, psibar, A, B, b, psi, T, s0=None):
    n, d = U0.shape
    cols = np.arange(d)
    U = np.empty((n, T, d), dtype=np.int64)
    S = np.empty((n, T, d))
    U[:, 0] = U0
    S[:, 0] = s0 if s0 is not None else bbar[cols, U0] + np.sqrt(psibar[cols, U0]) * rng.standard_normal((n, d))
    for t in range(1, T):
        U[:, t] = _draw_cat(rng, A[cols, U[:, t - 1]])
        c = U[:, t]
        S[:, t] = B[cols, c] * S[:, t - 1] + b[cols, c] + np.sqrt(psi[cols, c]) * rng.standard_normal((n, d))
    return S, U


def regime_marginals(log_pi: np.ndarray, log_A: np.ndarray, L: np.ndarray) -> np.ndarray:
    """Exact smoothed marginals ``P(u_t = c | potentials)`` of a Markov chain per sequence and component by
    forward-backward in log space: ``log_pi`` ``(d, C)``, ``log_A`` ``(d, C, C)``, ``L`` ``(n, T, d, C)`` log
    potentials -> ``(n, T, d, C)``."""
    from scipy.special import logsumexp, softmax

    n, T, d, C = L.shape
    fw = [log_pi[None] + L[:, 0]]
    for t in range(1, T):
        fw.append(logsumexp(fw[-1][..., :, None] + log_A[None], axis=-2) + L[:, t])
    bw = [np.zeros((n, d, C))]
    for t in range(T - 1, 0, -1):
        bw.append(logsumexp(log_A[None] + (L[:, t] + bw[-1])[..., None, :], axis=-1))
    bw = bw[::-1]
    return softmax(np.stack([f + b for f, b in zip(fw, bw)], 1), axis=-1)


def viterbi_path(log_pi: np.ndarray, log_A: np.ndarray, L: np.ndarray) -> np.ndarray:
    """Most likely regime path per sequence and component: ``argmax_u log pi(u_1) + sum_t log A(u_{t-1}, u_t) +
    sum_t L_t(u_t)``.  ``log_pi`` ``(d, C)``, ``log_A`` ``(d, C, C)``, ``L`` ``(n, T, d, C)`` -> ``(n, T, d)``."""
    n, T, d, C = L.shape
    delta = log_pi[None] + L[:, 0]
    back = np.empty((n, T, d, C), dtype=np.int64)
    for t in range(1, T):
        cand = delta[..., :, None] + log_A[None]  # (n, d, C', C)
        back[:, t] = cand.argmax(-2)
        delta = cand.max(-2) + L[:, t]
    path = np.empty((n, T, d), dtype=np.int64)
    path[:, -1] = delta.argmax(-1)
    for t in range(T - 1, 0, -1):
        path[:, t - 1] = np.take_along_axis(back[:, t], path[:, t][..., None], -1)[..., 0]
    return path
