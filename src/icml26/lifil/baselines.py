"""Baseline clients, all trained by FedAvg on the same schedule as Li-FIL (``E_e + E_c`` local epochs per round):
fine-tuning (lower bound), FedEWC, FedLwF, exemplar replay (stores raw samples; an upper reference) and joint training
(keeps all its past data; the ceiling)."""

from __future__ import annotations

import numpy as np
import torch

from .client import FILClient, State, _prefixed, _unprefixed
from .model import get_state, set_state, state_bytes

__all__ = ["FineTuneClient", "EWCClient", "LwFClient", "ExemplarClient", "JointClient"]

F = torch.nn.functional


class FineTuneClient(FILClient):
    """FedAvg fine-tuning: CE on the new task's data only (the base :class:`FILClient`)."""

    method = "finetune"


class LwFClient(FILClient):
    """FedLwF (Li & Hoiem 2017, federated): ``CE + lwf_weight T^2 KL(p_{t-1}^T || p^T)`` over the old classes'
    logits on new data, ``p^T = softmax(z / T)``, with the previous task's final global model as teacher."""

    method = "lwf"

    def __init__(self, *a, **kw) -> None:
        super().__init__(*a, **kw)
        self.prev = None

    def end_task(self, global_state: State) -> dict:
        self.prev = set_state(self.model_fn(), global_state).eval()
        self._track_storage()
        return {}

    def _extra_loss(self, x, logits):
        if self.prev is None or not self.old or self.cfg.lwf_weight == 0:
            return torch.zeros(())
        T = self.cfg.lwf_T
        with torch.no_grad():
            t = torch.softmax(self.prev(x)[:, self.old] / T, dim=1)
        s = torch.log_softmax(logits[:, self.old] / T, dim=1)
        return self.cfg.lwf_weight * T * T * F.kl_div(s, t, reduction="batchmean")

    def storage(self) -> dict[str, int]:
        return {"raw_samples": 0, "bytes": 0 if self.prev is None else state_bytes(get_state(self.prev))}

    def get_persistent_state(self) -> State:
        return {} if self.prev is None else _prefixed(get_state(self.prev), "prev/")

    def set_persistent_state(self, state: State) -> None:
        prev = _unprefixed(state, "prev/")
        self.prev = set_state(self.model_fn(), prev).eval() if prev else None


class EWCClient(FILClient):
    """FedEWC (Kirkpatrick et al. 2017, federated): ``CE + (ewc_lambda / 2) sum_i F_i (theta_i - theta*_i)^2`` with
    ``theta*`` the previous task's final global model and ``F`` the sum over past tasks of the empirical diagonal
    Fisher ``mean_n (d log p(y_n | x_n) / d theta)^2`` on this client's own data of that task."""

    method = "ewc"

    def __init__(self, *a, **kw) -> None:
        super().__init__(*a, **kw)
        self.fisher: dict[str, torch.Tensor] = {}
        self.anchor: dict[str, torch.Tensor] = {}

    def end_task(self, global_state: State) -> dict:
        model = set_state(self.model_fn(), global_state)
        self.anchor = {k: p.detach().clone() for k, p in model.named_parameters()}
        if self.n_samples:
            fisher = {k: torch.zeros_like(p) for k, p in model.named_parameters()}
            for i in range(self.n_samples):
                model.zero_grad()
                logp = torch.log_softmax(model(self.X[i : i + 1], self.seen), dim=1)[0, self.y[i]]
                logp.backward()
                for k, p in model.named_parameters():
                    fisher[k] += p.grad.detach() ** 2 / self.n_samples
            for k, f in fisher.items():
                self.fisher[k] = self.fisher.get(k, torch.zeros_like(f)) + f
        self._track_storage()
        return {}

    def _extra_loss(self, x, logits):
        if not self.fisher or self.cfg.ewc_lambda == 0:
            return torch.zeros(())
        pen = sum((self.fisher[k] * (p - self.anchor[k]) ** 2).sum() for k, p in self.model.named_parameters())
        return 0.5 * self.cfg.ewc_lambda * pen

    def storage(self) -> dict[str, int]:
        n = sum(v.numel() for v in self.fisher.values()) + sum(v.numel() for v in self.anchor.values())
        return {"raw_samples": 0, "bytes": int(4 * n)}

    def get_persistent_state(self) -> State:
        out = {f"fisher/{k}": v.numpy() for k, v in self.fisher.items()}
        return {**out, **{f"anchor/{k}": v.numpy() for k, v in self.anchor.items()}}

    def set_persistent_state(self, state: State) -> None:
        self.fisher = {k: torch.from_numpy(np.array(v)) for k, v in _unprefixed(state, "fisher/").items()}
        self.anchor = {k: torch.from_numpy(np.array(v)) for k, v in _unprefixed(state, "anchor/").items()}


class ExemplarClient(FILClient):
    """Exemplar replay (iCaRL / Re-Fed style buffer): the client keeps ``exemplar_M`` raw samples per class it has
    seen (chosen at random at the task's end) and trains on new data plus its buffer.  Stores raw data."""

    method = "exemplar"

    def __init__(self, *a, **kw) -> None:
        super().__init__(*a, **kw)
        self.buf_X = torch.zeros(0, self.model.n_features)
        self.buf_y = torch.zeros(0, dtype=torch.long)

    def _train_data(self):
        return torch.cat([self.X, self.buf_X]), torch.cat([self.y, self.buf_y])

    def end_task(self, global_state: State) -> dict:
        rng = self.rng(3)
        keep = []
        for c in torch.unique(self.y).tolist():
            idx = torch.nonzero(self.y == c).squeeze(1).numpy()
            keep.extend(rng.choice(idx, min(self.cfg.exemplar_M, len(idx)), replace=False).tolist())
        keep = torch.as_tensor(sorted(keep), dtype=torch.long)
        self.buf_X = torch.cat([self.buf_X, self.X[keep]])
        self.buf_y = torch.cat([self.buf_y, self.y[keep]])
        self._track_storage()
        return {}

    def storage(self) -> dict[str, int]:
        return {"raw_samples": int(len(self.buf_y)), "bytes": int(self.buf_X.numel() * 4)}

    def get_persistent_state(self) -> State:
        return {"buf_X": self.buf_X.numpy(), "buf_y": self.buf_y.numpy()}

    def set_persistent_state(self, state: State) -> None:
        if "buf_X" in state:
            self.buf_X = torch.from_numpy(np.array(state["buf_X"], dtype=np.float32))
            self.buf_y = torch.from_numpy(np.array(state["buf_y"], dtype=np.int64))


class JointClient(ExemplarClient):
    """Joint training (the ceiling): the client keeps every sample of its past tasks and trains on all of them."""

    method = "joint"

    def end_task(self, global_state: State) -> dict:
        self.buf_X = torch.cat([self.buf_X, self.X])
        self.buf_y = torch.cat([self.buf_y, self.y])
        self._track_storage()
        return {}
