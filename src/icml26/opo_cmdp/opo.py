"""OPO-CMDP (optimistic policy optimization with offline oracles; reconstructed) and OPO-CMAB (its H = 1 case).

Per context ``c`` the learner keeps a policy ``pi_j(a|c, s)`` and counterfactual visit counts ``n_j(c, s, a)``,
replayed for EVERY tracked context after every episode ``j`` (counterfactual: whether or not ``c`` was played),
with the models of the epoch of ``j``::

    q_j      = occupancy of pi_j(.|c, .) under P_hat(c) from s_0          (sums to 1 per layer)
    beta_j   = gamma * sqrt(j / (|S||A|))
    b_j      = min(1, (beta_j / 2) / (1 + n_j(c, s, a)))                   n_j = sum_{i<j} q_i
    l~_j     = max(0, f_hat(c, s, a) - b_j(c, s, a))                       (optimistic loss)
    Q_j      = l~_j + P_hat(c) V_j,   V_j(c, s) = sum_a pi_j(a|c, s) Q_j(c, s, a)      (policy EVALUATION of pi_j)
    pi_{j+1} ∝ pi_j * exp(-eta * Q_j),   n_{j+1} = n_j + q_j

``f_hat = least_squares_oracle(F, data)`` and ``P_hat = log_loss_oracle(P, data)`` are refitted on all episodes
before ``j`` at the start of each epoch (``epoch_schedule="doubling"``: epochs ``[2^m, 2^{m+1})``; ``"every"``:
each episode).  With ``H = |S| = 1`` this is exactly OPO-CMAB (Levy & Mansour; the Vowpal Wabbit reduction):
``b_k = min(1, (gamma sqrt(k/|A|)/2) / (1 + sum_{i<k} pi_i(c, a)))``, ``l~ = max(0, f_hat - b)``,
``pi_{k+1} ∝ pi_k exp(-eta l~)``.  The MDP extension (occupancy bonus, epochs) is our reconstruction.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from .classes import FiniteDynamicsClass, FiniteFunctionClass, least_squares_oracle, log_loss_oracle
from .tabular import evaluate_policy

__all__ = ["OPOCMDP", "OPOCMAB", "RegretLog", "run", "OracleAgent"]

SCHEDULES = ("doubling", "every")


def _dims(name: str, v) -> int:
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
        raise ValueError(f"{name} must be a positive integer, got {v!r}")
    return int(v)


def _append(buf: np.ndarray | None, used: int, new: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``buf[:used]`` with the rows ``new`` appended, in a buffer that at least doubles when full; returns ``(view of
    the used rows, buffer)``."""
    need = used + len(new)
    if buf is None or need > len(buf):
        grown = np.empty((max(need, 2 * (0 if buf is None else len(buf))),) + new.shape[1:], dtype=new.dtype)
        if used:
            grown[:used] = buf[:used]
        buf = grown
    buf[used:need] = new
    return buf[:need], buf


class OracleAgent:
    """Shared machinery: logged data, epoch schedule, oracle refits and per-context model predictions.

    Subclasses implement ``policy(context) -> [H, S, A]`` and ``_after_episode(j)``.
    """

    def __init__(
        self,
        F: FiniteFunctionClass,
        P: FiniteDynamicsClass | None,
        n_layers: int,
        n_states: int,
        n_actions: int,
        epoch_schedule: str = "doubling",
    ) -> None:
        if not isinstance(F, FiniteFunctionClass):
            raise TypeError(f"F must be a FiniteFunctionClass, got {type(F).__name__}")
        if P is not None and not isinstance(P, FiniteDynamicsClass):
            raise TypeError(f"P must be a FiniteDynamicsClass or None, got {type(P).__name__}")
        if epoch_schedule not in SCHEDULES:
            raise ValueError(f"epoch_schedule must be one of {SCHEDULES}, got {epoch_schedule!r}")
        self.F, self.P, self.epoch_schedule = F, P, epoch_schedule
        self.H, self.S, self.A = _dims("n_layers", n_layers), _dims("n_states", n_states), _dims("n_actions", n_actions)
        if P is None and self.H > 1:
            raise ValueError("P may be None only when n_layers == 1 (a bandit)")
        self.context_dim = F.context_dim
        self._data: dict[str, list] = {k: [] for k in ("context", "h", "s", "a", "loss", "next_state")}
        self._keys: dict[bytes, int] = {}
        self._C = np.zeros((0, 0))
        self._fpred = np.zeros((0,))
        self._ppred = np.zeros((0,))
        self._Cbuf = self._fbuf = self._pbuf = None
        self.t = 0  # episodes observed
        self.s0 = 0  # the start state every trajectory must begin in (OPOCMDP's s0)
        self.kf, self.kp = 0, 0  # current oracle picks
        self.oracle_calls = 0
        self.history: list[tuple[int, int]] = []  # (kf, kp) used for the update after episode j (index j - 1)

    # -- inputs -----------------------------------------------------------------------------------------------
    def _context(self, context) -> np.ndarray:
        c = np.asarray(context, dtype=float)
        if c.ndim != 1:
            raise ValueError(f"context must be a 1-d feature vector, got shape {c.shape}")
        if not np.all(np.isfinite(c)):
            raise ValueError(f"context must hold finite numbers, got {context!r}")
        if self.context_dim is None:
            self.context_dim = c.shape[0]
        if c.shape[0] != self.context_dim:
            raise ValueError(f"context must have {self.context_dim} features (context_dim), got {c.shape[0]}")
        return c

    def _predict(self, C: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        f = self.F.predict(C)
        want = (len(self.F), len(C), self.H, self.S, self.A)
        if f.shape != want:
            raise ValueError(f"F predicts shape {f.shape[2:]} per context, expected (H, S, A) = {want[2:]}")
        if self.P is None:
            p = np.ones((1, len(C), 1, 1, self.A, 1))
        else:
            p = self.P.predict(C)
            if p.shape != (len(self.P), len(C), self.H, self.S, self.A, self.S):
                raise ValueError(
                    f"P predicts shape {p.shape[2:]} per context, expected (H, S, A, S) = "
                    f"{(self.H, self.S, self.A, self.S)}"
                )
        return np.moveaxis(f, 0, 1), np.moveaxis(p, 0, 1)

    def track(self, contexts) -> np.ndarray:
        """Register contexts (e.g. a finite pool) so their policies are updated every episode (batched);
        returns their row indices.  A context first seen later is replayed from episode 1, or takes the state of a
        tracked context with the same predicted models (same result; ``OPOCMDP._add_rows``)."""
        C = np.atleast_2d(np.asarray(contexts, dtype=float))
        for c in C:
            self._context(c)
        new = [c for c in C if c.tobytes() not in self._keys]
        if new:
            N = np.array(new)
            f, p = self._predict(N)
            start = len(self._keys)
            for i, c in enumerate(N):
                self._keys[c.tobytes()] = start + i
            # amortised growth (capacity doubling): copying every tracked context's predictions for each new context
            # made N contexts first seen one at a time cost O(N^2) copies of [K, H, S, A(, S)] arrays
            self._C, self._Cbuf = _append(self._Cbuf, start, N)
            self._fpred, self._fbuf = _append(self._fbuf, start, f)
            self._ppred, self._pbuf = _append(self._pbuf, start, p)
            self._add_rows(np.arange(start, start + len(N)))
        return np.array([self._keys[c.tobytes()] for c in C])

    def _add_rows(self, rows: np.ndarray) -> None:
        pass

    def _models(self, rows: np.ndarray, kf: int, kp: int) -> tuple[np.ndarray, np.ndarray]:
        f = self._fpred[rows, kf]
        p = self._ppred[rows, kp] if self.P is not None else np.ones((len(rows), 1, 1, self.A, 1))
        return f, p

    # -- learning -----------------------------------------------------------------------------------------------
    def _epoch_start(self, j: int) -> bool:
        return self.epoch_schedule == "every" or (j & (j - 1)) == 0  # j = 1, 2, 4, 8, ...

    def _refit(self) -> None:
        data = {k: np.asarray(v) for k, v in self._data.items()}
        if len(data["h"]) == 0:
            data["context"] = np.zeros((0, self.context_dim or 1))
        self.kf = least_squares_oracle(self.F, data)
        self.kp = log_loss_oracle(self.P, data) if self.P is not None else 0
        self.oracle_calls += 1 + (self.P is not None)

    def observe(self, context, trajectory: Sequence[tuple[int, int, int, float, int]]) -> None:
        """Log one episode ``[(h, s, a, loss, next_state), ...]`` and update.  The trajectory is continuous: it
        starts in ``s0`` at layer 0, each step's ``s`` is the previous step's ``next_state``, and ``next_state = -1``
        exactly at the last layer ``h = n_layers - 1``.  At an epoch start the oracles are refitted on the episodes
        BEFORE this one."""
        c = self._context(context)
        traj = list(trajectory)
        if not traj:
            raise ValueError("trajectory is empty: an episode has at least one step (h, s, a, loss, next_state)")
        if len(traj) > self.H:
            raise ValueError(f"trajectory has {len(traj)} steps, more than n_layers={self.H}")
        for i, step in enumerate(traj):
            if len(step) != 5:
                raise ValueError(f"trajectory step {step!r} must be (h, s, a, loss, next_state)")
            h, s, a, loss, s2 = step
            for name, v in (("h", h), ("s", s), ("a", a), ("next_state", s2)):
                if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)):
                    raise ValueError(f"trajectory step {step!r}: {name} must be an integer, got {v!r}")
            if h != i:
                raise ValueError(f"trajectory step {step!r}: layer h must be {i} (layers 0, 1, ... in order), got {h}")
            if not (0 <= s < self.S and 0 <= a < self.A):
                raise ValueError(f"trajectory step {step} is outside H={self.H}, S={self.S}, A={self.A}")
            if not (s2 == -1 or 0 <= s2 < self.S):
                raise ValueError(f"trajectory step {step!r}: next_state must be -1 or lie in [0, {self.S}), got {s2}")
            if (s2 == -1) != (h == self.H - 1):
                raise ValueError(
                    f"trajectory step {step!r}: next_state must be -1 exactly at the last layer h={self.H - 1}, got "
                    f"{s2} at h={h}"
                )
            want = self.s0 if i == 0 else traj[i - 1][4]
            if s != want:
                raise ValueError(
                    f"trajectory step {step!r}: state s must be "
                    + (f"s0={self.s0} at h=0" if i == 0 else f"the previous step's next_state {want}")
                    + f", got {s}"
                )
            if isinstance(loss, (bool, np.bool_)) or not isinstance(loss, (int, float, np.integer, np.floating)):
                raise ValueError(f"trajectory step {step!r}: loss must be a number, got {loss!r}")
            if not 0.0 <= loss <= 1.0:
                raise ValueError(f"trajectory losses must lie in [0, 1], got {loss}")
        self.track(c)
        j = self.t + 1
        if self._epoch_start(j):
            self._refit()
        for h, s, a, loss, s2 in traj:
            for k, v in zip(("context", "h", "s", "a", "loss", "next_state"), (c, h, s, a, loss, s2)):
                self._data[k].append(v)
        self.t = j
        self.history.append((self.kf, self.kp))
        self._after_episode(j)

    def _after_episode(self, j: int) -> None:
        pass


class OPOCMDP(OracleAgent):
    """Optimistic policy optimization for a contextual layered MDP (update rules in the module docstring).

    ``eta``: mirror-descent step; ``None`` uses ``eta_scale * sqrt(log|A| / (H^2 T))`` (needs ``T``).
    ``gamma``: optimism scale (``gamma = 0``: no bonus).  ``s0``: start state.  ``bonus_sign=-1`` flips the bonus
    (``l~ = min(1, f_hat + b)``: pessimism), a control arm that keeps everything but the bonus's direction.
    """

    def __init__(
        self,
        F: FiniteFunctionClass,
        P: FiniteDynamicsClass | None,
        n_layers: int,
        n_states: int,
        n_actions: int,
        eta: float | None = None,
        gamma: float = 1.0,
        T: int | None = None,
        eta_scale: float = 1.0,
        epoch_schedule: str = "doubling",
        s0: int = 0,
        bonus_sign: float = 1.0,
    ) -> None:
        super().__init__(F, P, n_layers, n_states, n_actions, epoch_schedule)
        if bonus_sign not in (1.0, -1.0):
            raise ValueError(f"bonus_sign must be +1 (optimism) or -1 (the sign-flipped control), got {bonus_sign!r}")
        self.bonus_sign = float(bonus_sign)
        if eta is None:
            if T is None:
                raise ValueError("pass eta, or T (the number of episodes) for the default eta")
            _dims("T", T)
            if isinstance(eta_scale, (bool, np.bool_)) or not isinstance(
                eta_scale, (int, float, np.integer, np.floating)
            ):
                raise ValueError(f"eta_scale must be a number, got {eta_scale!r}")
            if not eta_scale > 0:
                raise ValueError(f"eta_scale must be > 0, got {eta_scale}")
            eta = eta_scale * np.sqrt(np.log(self.A) / (self.H**2 * T))
        for name, v in (("eta", eta), ("gamma", gamma), ("eta_scale", eta_scale)):
            if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, float, np.integer, np.floating)):
                raise ValueError(f"{name} must be a number, got {v!r}")
        if not (np.isfinite(eta) and eta > 0):
            raise ValueError(f"eta must be a positive finite number, got {eta}")
        if not (np.isfinite(gamma) and gamma >= 0):
            raise ValueError(f"gamma must be >= 0, got {gamma}")
        if isinstance(s0, (bool, np.bool_)) or not isinstance(s0, (int, np.integer)) or not 0 <= s0 < self.S:
            raise ValueError(f"s0 must be an integer in [0, {self.S}), got {s0!r}")
        self.eta, self.gamma, self.s0 = float(eta), float(gamma), int(s0)
        shape = (0, self.H, self.S, self.A)
        self._logpi, self._n = np.zeros(shape), np.zeros(shape)
        self._twins: dict[bytes, int] = {}  # the per-context cache: model key -> a tracked row (see _add_rows)
        self._twin_pairs: tuple = ()
        self._ws: dict[tuple, tuple] = {}  # _update's scratch arrays per batch shape (_workspace)
        self.bonus_trace: list[float] = []  # per episode: mean over tracked contexts of E_{q_j}[b_j] (diagnostic)
        self.entropy_trace: list[float] = []  # per episode: mean policy entropy (diagnostic)

    def _add_rows(self, rows: np.ndarray) -> None:
        """State of contexts first seen now.  A context that every model used so far maps to the same losses and
        dynamics as a tracked context (the same ``f_hat(c)``, ``P_hat(c)`` for each oracle pick in the history) went
        through the same updates, so it takes that context's state (the per-context cache); any other is replayed
        through every past update (:meth:`_replay`)."""
        k = len(rows)
        logpi = np.full((k, self.H, self.S, self.A), -np.log(self.A))
        n = np.zeros((k, self.H, self.S, self.A))
        if self.history:
            pairs = tuple(dict.fromkeys(self.history))  # the distinct oracle picks so far, in order of first use
            if pairs != self._twin_pairs:  # a new pick: the cache's keys change (rare: at most one per epoch)
                self._twin_pairs = pairs
                self._twins = {}
                for r in range(len(self._logpi)):
                    self._twins.setdefault(self._model_key(r, pairs), r)
            keys = [self._model_key(r, pairs) for r in rows]
            todo = [i for i, key in enumerate(keys) if key not in self._twins]
            for i, key in enumerate(keys):
                if key in self._twins:
                    logpi[i], n[i] = self._logpi[self._twins[key]], self._n[self._twins[key]]
            if todo:
                logpi[todo], n[todo] = self._replay(logpi[todo], n[todo], rows[todo])
            for key, r in zip(keys, rows):
                self._twins.setdefault(key, int(r))
        self._logpi = np.concatenate([self._logpi, logpi])
        self._n = np.concatenate([self._n, n])

    def _model_key(self, row: int, pairs: tuple) -> bytes:
        """What the rule sees of a context: its predicted losses and dynamics under each oracle pick used so far."""
        return b"".join(self._fpred[row, kf].tobytes() + self._ppred[row, kp].tobytes() for kf, kp in pairs)

    def _replay(self, logpi: np.ndarray, n: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The updates of episodes ``1..t`` for contexts first seen after episode ``t``: exactly the arithmetic of
        :meth:`_step` (the same :meth:`_update` on the same arrays), episode by episode, with the models sliced once
        per epoch (a run of episodes with the same oracle picks).  v3d's reorganised kernel (shared ``M_h``, plain
        ``matmul``) was 3.3x faster but not the rule: its different rounding, amplified by near-deterministic mirror
        descent at large ``eta``, moved policies by up to 1.0 at ``eta_scale >= 3e4`` and by 1e-5 at the grid's
        ``(1e4, 0.3)`` (referee pass 3).  This path equals :meth:`_step` (``test_learners``: every grid point,
        several seeds, ``T = 2000``, to 1e-10; bitwise in practice)."""
        j, hist = 0, self.history
        while j < len(hist):
            kf, kp = hist[j]
            end = j
            while end < len(hist) and hist[end] == (kf, kp):
                end += 1
            f, p = self._models(rows, kf, kp)
            for jj in range(j + 1, end + 1):  # episodes j+1..end (1-based)
                logpi, n, _, _ = self._update(logpi, n, f, p, jj)
            j = end
        return logpi, n

    def _workspace(self, batch: tuple) -> tuple:
        """Scratch arrays of :meth:`_update` for a batch shape, and their per-layer views, made once per shape
        (the replay calls the update ~t times for one context; re-slicing ~30 views per call was ~20% of its cost).
        ``K``: per layer ``[M_h | r_h]``; ``D``: ``d_h`` as row vectors (``d_0 = e_{s0}`` set here once); ``V``:
        ``[v_h; 1]`` as column vectors (its last row set here once).  Every other entry the update reads is written
        first in each call, so reuse changes no number (tested bitwise against fresh arrays)."""
        ws = self._ws.get(batch)
        if ws is None:
            H, S = self.H, self.S
            K = np.empty(batch + (H - 1, S, 1, S + 1))
            M = K[..., :S]
            D = np.empty(batch + (H, 1, S))
            D[..., 0, 0, :] = 0.0  # d_0 = e_{s0}: never written by the update
            D[..., 0, 0, self.s0] = 1.0
            V = np.empty(batch + (H, S + 1, 1))
            V[..., S, 0] = 1.0
            fwd = [(D[..., h, :, :], M[..., h, :, 0, :], D[..., h + 1, :, :]) for h in range(H - 1)]
            bwd = [(K[..., h, :, 0, :], V[..., h + 1, :, :], V[..., h, :S, :]) for h in range(H - 2, -1, -1)]
            ws = self._ws[batch] = (K, M, D, V, fwd, bwd)
            if len(self._ws) > 8:  # the tracked batch grows: keep the newest shapes only
                self._ws.pop(next(iter(self._ws)))
        return ws

    def _update(self, logpi, n, f, p, j):
        """One episode's update of the rule (module docstring), given that episode's models ``f``, ``p``.

        The occupancy and the policy evaluation go through the policy's state-to-state kernel ``M_h(s, s') =
        sum_a pi_h(a|s) P_h(s'|s, a)`` (``d_{h+1} = d_h M_h``, ``V_h = r_h + M_h V_{h+1}`` with ``r_h(s) = sum_a
        pi_h(a|s) l~_h(s, a)``, ``Q_h = l~_h + P_h V_{h+1}``): the same quantities as :func:`~.tabular.occupancy` and
        :func:`~.tabular.evaluate_policy` in half the numpy calls (v3f; this is the one update both the tracked
        contexts and the replay of a late context run, so they agree bitwise; ``mdp_reference`` checks it against
        scalar loops)."""
        H, S, add, mm = self.H, self.S, np.add.reduce, np.matmul
        pi = np.exp(logpi)
        K, M, D, V, fwd, bwd = self._workspace(pi.shape[:-3])
        p_head = p[..., :-1, :, :, :]  # P_h for h < H - 1
        mm(pi[..., :-1, :, None, :], p_head, out=M)
        for d_h, m_h, d_next in fwd:
            mm(d_h, m_h, out=d_next)
        q = D.swapaxes(-1, -2) * pi
        b = np.minimum(1.0, (self.gamma * math.sqrt(j / (self.S * self.A)) / 2.0) / (1.0 + n))
        lt = np.maximum(0.0, f - b) if self.bonus_sign > 0 else np.minimum(1.0, f + b)
        r = add(pi * lt, axis=-1)  # r_h(s) = sum_a pi_h(a|s) l~_h(s, a)
        K[..., 0, S] = r[..., :-1, :]
        V[..., H - 1, :S, 0] = r[..., H - 1, :]
        for k_h, v_next, v_h in bwd:
            mm(k_h, v_next, out=v_h)
        V = V[..., :S, :]
        Q = lt.copy()
        Q[..., :-1, :, :] += mm(p_head, V[..., 1:, None, :, :])[..., 0]
        z = logpi - self.eta * Q
        z -= np.maximum.reduce(z, axis=-1, keepdims=True)  # log-normaliser with the max shift (scipy's cost 2x)
        logpi = z - np.log(add(np.exp(z), axis=-1, keepdims=True))
        return logpi, n + q, q, b

    def _step(self, logpi, n, rows, j, kf, kp):
        f, p = self._models(rows, kf, kp)
        logpi, n, q, b = self._update(logpi, n, f, p, j)
        return logpi, n, float(np.mean(np.sum(q * b, axis=(-1, -2, -3)))) if len(rows) else 0.0

    def _after_episode(self, j: int) -> None:
        rows = np.arange(len(self._keys))
        kf, kp = self.history[-1]
        self._logpi, self._n, width = self._step(self._logpi, self._n, rows, j, kf, kp)
        self.bonus_trace.append(width)
        self.entropy_trace.append(self.entropy())

    def policy(self, context) -> np.ndarray:
        """``pi_t(a | c, s)`` as an array ``[H, S, A]`` (after the updates of episodes ``1..t-1``)."""
        row = self.track(self._context(context))[0]
        return np.exp(self._logpi[row])

    def entropy(self) -> float:
        """Mean (over tracked contexts, layers and states) entropy of the current policy, in nats."""
        pi = np.exp(self._logpi)
        return float(np.mean(-np.sum(pi * np.where(pi > 0, self._logpi, 0.0), axis=-1)))


class OPOCMAB(OPOCMDP):
    """OPO-CMAB: the one-step (``H = |S| = 1``) case of :class:`OPOCMDP`, same code path.

    Defaults follow the Vowpal Wabbit reduction: ``eta = 0.1``, ``gamma = 1``, the LS oracle refitted every
    round (``epoch_schedule="every"``).  ``policy(c)`` returns ``[A]`` action probabilities; ``observe(c, a,
    loss)`` logs one round.
    """

    def __init__(
        self,
        F: FiniteFunctionClass,
        n_actions: int,
        eta: float = 0.1,
        gamma: float = 1.0,
        epoch_schedule: str = "every",
    ) -> None:
        super().__init__(F, None, 1, 1, n_actions, eta=eta, gamma=gamma, epoch_schedule=epoch_schedule)

    def policy(self, context) -> np.ndarray:
        return super().policy(context)[0, 0]

    def observe(self, context, action: int, loss: float) -> None:  # type: ignore[override]
        if isinstance(action, (bool, np.bool_)) or not isinstance(action, (int, np.integer)):
            raise ValueError(f"action must be an integer in [0, {self.A}), got {action!r}")
        super().observe(context, [(0, 0, int(action), loss, -1)])


@dataclass
class RegretLog:
    """Per-episode exact regret ``V^{pi_t}(c_t) - V*(c_t)`` (by DP on the true model) and its running sum."""

    cum_regret: np.ndarray
    per_episode_gap: np.ndarray
    oracle_calls: int
    extra: dict = field(default_factory=dict)


def _unpack(obs, info) -> tuple[int, int, np.ndarray | None]:
    """``(state, layer, context)`` from an observation: a mapping with ``state``, ``layer`` and ``context`` (the
    ``Dict`` observation of :class:`~icml26.opo_cmdp.lock.ContextualCombinationLock`), or a plain state with the layer
    and context in ``info`` (``"h"``, ``"context"``)."""
    if isinstance(obs, dict):
        missing = {"state", "layer", "context"} - set(obs)
        if missing:
            raise ValueError(f"a dict observation must hold state, layer and context; missing {sorted(missing)}")
        return int(obs["state"]), int(obs["layer"]), np.asarray(obs["context"])
    if "h" not in info:
        raise ValueError("an env with a plain state observation must put the layer in info['h']")
    if np.ndim(obs) != 0 or not float(np.asarray(obs)).is_integer():
        raise TypeError(
            f"obs must be a mapping with state, layer and context or an integer state, got {type(obs).__name__} "
            f"of shape {np.shape(obs)} (a flattened Dict observation, e.g. FlattenObservation, cannot be read back: "
            "pass the unflattened env)"
        )
    c = info.get("context")
    return int(obs), int(info["h"]), None if c is None else np.asarray(c)


def _env_attr(env, name: str):
    """``env.name``, else ``env.unwrapped.name`` (gymnasium 1.x wrappers such as ``RecordEpisodeStatistics`` do not
    forward attributes); ``n_actions`` falls back to ``action_space.n``."""
    for e in (env, getattr(env, "unwrapped", None)):
        if e is not None and hasattr(e, name):
            return getattr(e, name)
    if name == "n_actions" and hasattr(getattr(env, "action_space", None), "n"):
        return int(env.action_space.n)
    raise TypeError(f"env must provide {name} (see run's docstring), {type(env).__name__} and its unwrapped env do not")


def run(env, agent, T: int, seed: int) -> RegretLog:
    """Play ``T`` episodes of ``agent`` (``policy(c) -> [H, S, A]``, ``observe(c, trajectory)``) in ``env``.

    ``env``: any environment with the documented interface: ``reset(seed=...) -> (obs, info)`` and ``step(a) ->
    (obs, reward, terminated, truncated, info)`` with ``info["loss"]`` (else ``-reward``) where ``obs`` is a
    ``{"state", "layer", "context"}`` mapping or a plain state with ``info["h"]`` and ``info["context"]`` (at reset);
    ``n_actions`` (else ``action_space.n``); ``contexts`` (the finite pool the episodes draw from) and
    ``true_model(contexts) -> (f*, P*)``, used for the exact regret; these three are read through ``env.unwrapped``
    when a wrapper hides them.  Actions are drawn from ``np.random.default_rng([seed, 3])``; the environment is reset
    with ``seed`` once.  The regret of episode ``t`` is exact: ``evaluate_policy(pi_t, f*(c_t), P*(c_t))`` minus the
    optimal value, for the policy ``pi_t`` the episode is played with (asked for before the episode, before
    ``observe``).

    The observed context is matched to the pool after casting the pool to the observation's dtype (a gymnasium
    ``Box(..., dtype=float32)`` over a float64 pool works; two pool contexts equal after the cast raise
    ``ValueError``); the agent gets the pool's own vector.  Episodes must run all ``n_layers`` steps: an episode the
    env ends early (``truncated``, e.g. a ``TimeLimit`` shorter than the horizon, or ``terminated`` before the last
    layer) raises ``ValueError`` (the exact regret and the learners' updates are for whole episodes).
    """
    T = _dims("T", T)
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be an integer >= 0, got {seed!r}")
    for need in ("reset", "step"):
        if not hasattr(env, need):
            raise TypeError(f"env must provide {need} (see run's docstring), {type(env).__name__} does not")
    n_actions = _env_attr(env, "n_actions")
    contexts, true_model = _env_attr(env, "contexts"), _env_attr(env, "true_model")
    for need in ("policy", "observe"):
        if not hasattr(agent, need):
            raise TypeError(f"agent must provide {need}(...), {type(agent).__name__} does not")
    if hasattr(agent, "track"):
        agent.track(contexts)
    rng = np.random.default_rng([seed, 3])
    fstar, pstar = true_model(contexts)
    from .tabular import optimal_policy

    _, Vstar, _ = optimal_policy(fstar, pstar)
    pool = np.asarray(contexts)
    n_layers = fstar.shape[-3]
    indexes: dict[np.dtype, dict[bytes, int]] = {}  # per observation dtype: the pool cast to it -> pool row

    def lookup(c: np.ndarray | None) -> int:
        if c is None:
            raise ValueError("the env must give the context (obs['context'] or info['context'] at reset)")
        if c.dtype not in indexes:
            cast = pool.astype(c.dtype)
            indexes[c.dtype] = {x.tobytes(): i for i, x in enumerate(cast)}
            if len(indexes[c.dtype]) < len(cast):
                raise ValueError(
                    f"env.contexts has distinct contexts that are equal as {c.dtype} (the observation's "
                    "dtype): the pool cannot be matched; observe the context at the pool's precision"
                )
        key = c.tobytes()
        if key not in indexes[c.dtype]:
            raise ValueError(
                f"the env's context must be one of env.contexts (exact regret needs the finite pool); "
                f"matched after casting the pool to the observation's dtype {c.dtype}, got {c!r}"
            )
        return indexes[c.dtype][key]

    gaps = np.empty(T)
    for t in range(T):
        obs, info = env.reset(seed=seed if t == 0 else None)
        s, h, c = _unpack(obs, info)
        i = lookup(c)
        c = np.asarray(contexts[i], dtype=float)
        pi = np.asarray(agent.policy(c), dtype=float)
        V, _ = evaluate_policy(pi, fstar[i], pstar[i])
        gaps[t] = V[0, 0] - Vstar[i, 0, 0]
        traj, done = [], False
        while not done:
            a = int(rng.choice(n_actions, p=pi[h, s] / pi[h, s].sum()))
            obs, reward, done, truncated, step_info = env.step(a)
            if truncated or (done and h + 1 < n_layers):
                raise ValueError(
                    f"episode {t + 1} ended after {h + 1} of n_layers={n_layers} steps ("
                    + ("truncated, e.g. a TimeLimit shorter than the horizon" if truncated else "terminated early")
                    + "): run needs whole episodes (exact regret, the learners' updates)"
                )
            loss = float(step_info.get("loss", -reward))
            s2, _, _ = _unpack(obs, {"h": h + 1})
            traj.append((h, s, a, loss, -1 if done else s2))
            s, h = s2, h + 1
        agent.observe(c, traj)
    return RegretLog(np.cumsum(gaps), gaps, int(getattr(agent, "oracle_calls", 0)))
