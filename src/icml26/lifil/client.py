"""Federated class-incremental clients.  ``FILClient`` is the shared base (plain FedAvg fine-tuning); ``LiFILClient``
implements Li-FIL's decoupled local training and its end-of-task feature upload.  The same objects run in the
in-process simulation (:func:`icml26.lifil.run_fil`) and behind Flower (:mod:`icml26.lifil.flower`), where their
persistent state travels through ``Context.state`` (:meth:`FILClient.get_persistent_state`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import torch
from torch import nn

from .config import FILConfig
from .features import feature_mixup, privatize, select_high_confidence
from .model import DecoupledNet, get_state, set_state, state_bytes

__all__ = ["FILClient", "LiFILClient", "Replay"]

Replay = tuple[np.ndarray, np.ndarray] | None
State = dict[str, np.ndarray]
F = nn.functional


class FILClient:
    """One client.  Per task: :meth:`set_task` (its new data, the classes seen so far), ``rounds_per_task`` calls of
    :meth:`fit` (start from the global state, train locally, return ``(state, n)``), then :meth:`end_task` with the
    final global state (returns the arrays it uploads besides the model: none for fine-tuning).

    This base is FedAvg fine-tuning: ``E_e + E_c`` epochs of SGD on ``CE(g(f(x)), y)`` with logits restricted to the
    classes seen so far.  Subclasses add a penalty (:meth:`_extra_loss`), change the training data
    (:meth:`_train_data`) or the whole local step.  All randomness comes from ``(seed, cid, task, round)``."""

    method = "finetune"

    def __init__(
        self, cid: int, model_fn: Callable[[], DecoupledNet], config: FILConfig | None = None, seed: int = 0
    ) -> None:
        if isinstance(cid, bool) or not isinstance(cid, (int, np.integer)) or cid < 0:
            raise ValueError(f"cid must be a non-negative integer, got {cid!r}")
        self.cid, self.model_fn, self.seed = int(cid), model_fn, int(seed)
        self.cfg = config if config is not None else FILConfig()
        if not isinstance(self.cfg, FILConfig):
            raise TypeError(f"config must be a FILConfig, got {type(self.cfg).__name__}")
        self.model = model_fn()
        self.task = -1
        self.X = torch.zeros(0, self.model.n_features)
        self.y = torch.zeros(0, dtype=torch.long)
        self.seen: list[int] = []
        self.old: list[int] = []
        self.peak_storage_bytes = 0
        self.replay_bytes_held = 0

    # -- lifecycle -----------------------------------------------------------------------------------------------------
    def set_task(
        self,
        task: int,
        X: np.ndarray,
        y: np.ndarray,
        seen_classes: Sequence[int],
        new_classes: Sequence[int] | None = None,
    ) -> None:
        """Receive task ``task``'s local data (may be empty: the client then sits the task out); ``seen_classes``:
        classes of tasks ``0..task``; ``new_classes``: this task's classes (default: the labels in ``y``), so that
        ``self.old`` = the classes of earlier tasks."""
        X = np.asarray(X, dtype=np.float32).reshape(-1, self.model.n_features)
        y = np.asarray(y, dtype=np.int64).reshape(-1)
        if len(X) != len(y):
            raise ValueError(f"X and y must have the same length, got {len(X)} and {len(y)}")
        self.task, self.seen = int(task), sorted(int(c) for c in seen_classes)
        new = set(np.unique(y).tolist()) if new_classes is None else {int(c) for c in new_classes}
        self.old = sorted(set(self.seen) - new)
        self.X, self.y = torch.from_numpy(X), torch.from_numpy(y)
        self.replay_bytes_held = 0

    @property
    def n_samples(self) -> int:
        return int(len(self.y))

    def rng(self, *tags: int) -> np.random.Generator:
        return np.random.default_rng([self.seed, self.cid, self.task + 1, *tags])

    def fit(self, global_state: State, replay: Replay = None, round: int = 0) -> tuple[State, int]:
        """Local training from ``global_state``; returns the new state and the number of local samples (0 and the
        unchanged state when the client has no data for this task)."""
        if self.n_samples == 0:
            return global_state, 0
        set_state(self.model, global_state)
        self.model.train()
        self._local_train(replay, self.rng(1, round))
        return get_state(self.model), self.n_samples

    def end_task(self, global_state: State) -> dict[str, np.ndarray]:
        """Task boundary with the final global model: keep what the method needs later; return the upload."""
        self._track_storage()
        return {}

    # -- storage accounting and state for stateless (Flower) clients -----------------------------------------------
    def storage(self) -> dict[str, int]:
        """What the client keeps on the device beyond its current data and the model: ``raw_samples`` and ``bytes``
        (raw samples, frozen models, Fisher, replay features held during a task; float32)."""
        return {"raw_samples": 0, "bytes": self.replay_bytes_held}

    def _track_storage(self) -> None:
        self.peak_storage_bytes = max(self.peak_storage_bytes, self.storage()["bytes"])

    def get_persistent_state(self) -> State:
        """Arrays this client must remember across rounds and tasks (empty for fine-tuning)."""
        return {}

    def set_persistent_state(self, state: State) -> None:
        """Restore :meth:`get_persistent_state` (a fresh client object per round, as Flower creates them)."""

    # -- local training ---------------------------------------------------------------------------------------------
    def _train_data(self) -> tuple[torch.Tensor, torch.Tensor]:
        return self.X, self.y

    def _extra_loss(self, x: torch.Tensor, logits: torch.Tensor) -> torch.Tensor:
        return torch.zeros(())

    def _sgd(self, params) -> torch.optim.Optimizer:
        return torch.optim.SGD(params, lr=self.cfg.lr, momentum=self.cfg.momentum)

    def _batches(self, n: int, rng: np.random.Generator):
        perm = torch.as_tensor(rng.permutation(n))
        for s in range(0, n, self.cfg.batch_size):
            yield perm[s : s + self.cfg.batch_size]

    def _local_train(self, replay: Replay, rng: np.random.Generator) -> None:
        X, y = self._train_data()
        opt = self._sgd(self.model.parameters())
        for _ in range(self.cfg.local_epochs + self.cfg.classifier_epochs):
            for b in self._batches(len(y), rng):
                logits = self.model(X[b], self.seen)
                loss = F.cross_entropy(logits, y[b]) + self._extra_loss(X[b], logits)
                opt.zero_grad()
                loss.backward()
                opt.step()


def _prefixed(state: State, prefix: str) -> State:
    return {f"{prefix}{k}": v for k, v in state.items()}


def _unprefixed(state: State, prefix: str) -> State:
    return {k[len(prefix) :]: v for k, v in state.items() if k.startswith(prefix)}


def balanced_weights(y: torch.Tensor, n_classes: int) -> torch.Tensor:
    """Class weights ``w_c = n / (K n_c)`` over the ``K`` classes present (0 elsewhere): every class counts equally."""
    counts = torch.bincount(y, minlength=n_classes).double()
    present = counts > 0
    w = torch.zeros(n_classes, dtype=torch.float64)
    w[present] = len(y) / (present.sum() * counts[present])
    return w.float()


class LiFILClient(FILClient):
    """Li-FIL's client (inferred from the abstract; spec §2).

    Local round (decoupled): (1) encoder regularization, ``E_e`` epochs on the encoder only (head frozen),
    ``L_E = CE(g(f(x)), y) + lambda_fd ||f(x) - f_{t-1}(x)||^2`` with ``f_{t-1}`` the frozen global encoder of the
    end of the previous task; (2) classifier stabilization, ``E_c`` epochs on the head only (features detached), CE
    with class-balanced weights on real new features ``f(x)`` and the server's replay features of old classes.
    ``decouple=False`` (ablation) trains encoder and head together on ``L_E`` plus the balanced replay CE.

    End of task: :meth:`dense_features` (select high-confidence features, intra-class mixup, privatize) is the upload;
    the client keeps the global encoder as ``f_{t-1}``.  It stores no raw samples."""

    method = "lifil"

    def __init__(
        self, cid: int, model_fn: Callable[[], DecoupledNet], config: FILConfig | None = None, seed: int = 0
    ) -> None:
        super().__init__(cid, model_fn, config, seed)
        self.prev: DecoupledNet | None = None
        self.last_upload_counts: dict[int, int] = {}

    def dense_features(
        self, model: nn.Module | None = None, rng: np.random.Generator | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """``(H, y)``: privatized dense features of this task's classes: samples predicted correctly with
        confidence ``>= tau`` (at most ``m`` per class), ``m`` intra-class mixups per class (``mixup=False``: the
        selected features themselves), then ``clip_R + N(0, (sigma_f R)^2)``."""
        model = self.model if model is None else model
        rng = self.rng(2) if rng is None else rng
        c = self.cfg
        with torch.no_grad():
            H = model.features(self.X)
            probs = torch.softmax(model.classify(H, self.seen), dim=1)
        idx = select_high_confidence(probs, self.y, c.tau, c.m)
        Hs, ys = H[idx], self.y[idx]
        self.last_upload_counts = {int(k): int((ys == k).sum()) for k in torch.unique(ys).tolist()}
        if c.mixup and len(ys):
            Hs, ys = feature_mixup(Hs, ys, c.m, c.mixup_alpha, rng)
        Hp = privatize(Hs, c.sigma_f, c.clip_R, rng)
        return Hp.numpy().astype(np.float32), ys.numpy().astype(np.int64)

    def end_task(self, global_state: State) -> dict[str, np.ndarray]:
        set_state(self.model, global_state)
        self.model.eval()
        self.prev = set_state(self.model_fn(), global_state).eval()
        out = {}
        if self.n_samples:
            H, y = self.dense_features()
            out = {"H": H, "y": y}
        self._track_storage()
        return out

    def storage(self) -> dict[str, int]:
        enc = (
            0
            if self.prev is None
            else state_bytes({k: v for k, v in get_state(self.prev).items() if k.startswith("encoder.")})
        )
        return {"raw_samples": 0, "bytes": enc + self.replay_bytes_held}

    def get_persistent_state(self) -> State:
        if self.prev is None:
            return {}
        return _prefixed({k: v for k, v in get_state(self.prev).items() if k.startswith("encoder.")}, "prev/")

    def set_persistent_state(self, state: State) -> None:
        enc = _unprefixed(state, "prev/")
        if enc:
            self.prev = self.model_fn()
            self.prev.encoder.load_state_dict({k[len("encoder.") :]: torch.from_numpy(v) for k, v in enc.items()})
            self.prev.eval()

    def _local_train(self, replay: Replay, rng: np.random.Generator) -> None:
        c, m = self.cfg, self.model
        Hr = yr = None
        if replay is not None and len(replay[1]):
            Hr = torch.as_tensor(np.asarray(replay[0], dtype=np.float32))
            yr = torch.as_tensor(np.asarray(replay[1], dtype=np.int64))
            if Hr.ndim != 2 or Hr.shape[1] != m.feature_dim or len(Hr) != len(yr):
                raise ValueError(
                    f"replay must be (H, y) with H of shape (n, {m.feature_dim}) and n labels, got "
                    f"{tuple(Hr.shape)} and {tuple(yr.shape)}"
                )
            self.replay_bytes_held = int(Hr.numel() * 4)
            self._track_storage()

        def fd(x, h):
            if self.prev is None or c.lambda_fd == 0:
                return torch.zeros(())
            with torch.no_grad():
                h0 = self.prev.features(x)
            return c.lambda_fd * (h - h0).pow(2).sum(1).mean()

        if not c.decouple:
            self._joint_train(Hr, yr, fd, rng)
            return
        # (1) encoder regularization: encoder only, head frozen
        opt = self._sgd(m.encoder.parameters())
        for _ in range(c.local_epochs):
            for b in self._batches(self.n_samples, rng):
                h = m.features(self.X[b])
                loss = F.cross_entropy(m.classify(h, self.seen), self.y[b]) + fd(self.X[b], h)
                opt.zero_grad()
                loss.backward()
                opt.step()
        # (2) classifier stabilization: head only, on detached real features + replay, class-balanced
        if c.classifier_epochs == 0:
            return
        with torch.no_grad():
            H = m.features(self.X)
        if Hr is not None:
            H, y = torch.cat([H, Hr]), torch.cat([self.y, yr])
        else:
            y = self.y
        w = balanced_weights(y, m.n_classes)
        opt = self._sgd(m.head.parameters())
        for _ in range(c.classifier_epochs):
            for b in self._batches(len(y), rng):
                loss = F.cross_entropy(m.classify(H[b], self.seen), y[b], weight=w)
                opt.zero_grad()
                loss.backward()
                opt.step()

    def _joint_train(self, Hr, yr, fd, rng) -> None:
        """Ablation without decoupling: all parameters on ``L_E`` + balanced CE on a replay batch of the same size."""
        c, m = self.cfg, self.model
        opt = self._sgd(m.parameters())
        w = balanced_weights(torch.cat([self.y, yr]) if yr is not None else self.y, m.n_classes)
        for _ in range(c.local_epochs + c.classifier_epochs):
            for b in self._batches(self.n_samples, rng):
                h = m.features(self.X[b])
                loss = F.cross_entropy(m.classify(h, self.seen), self.y[b], weight=w) + fd(self.X[b], h)
                if yr is not None:
                    r = torch.as_tensor(rng.integers(len(yr), size=len(b)))
                    loss = loss + F.cross_entropy(m.classify(Hr[r], self.seen), yr[r], weight=w)
                opt.zero_grad()
                loss.backward()
                opt.step()
