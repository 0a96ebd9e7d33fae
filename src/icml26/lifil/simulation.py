"""``run_fil``: the in-process federated class-incremental simulation (no Ray, no network) shared by every method."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace

import numpy as np
import torch

from .baselines import EWCClient, ExemplarClient, FineTuneClient, JointClient, LwFClient
from .client import FILClient, LiFILClient
from .config import METHODS, FILConfig
from .data import ClassIncrementalTasks
from .metrics import (
    average_accuracy,
    average_incremental_accuracy,
    backward_transfer,
    forgetting,
    old_task_accuracy,
)
from .model import DecoupledNet, set_state, state_bytes
from .server import FILServer, LiFILServer

__all__ = ["FILResult", "run_fil", "make_client", "make_server", "evaluate"]

CLIENTS: dict[str, type[FILClient]] = {
    "finetune": FineTuneClient,
    "ewc": EWCClient,
    "lwf": LwFClient,
    "exemplar": ExemplarClient,
    "joint": JointClient,
    "lifil": LiFILClient,
}


def make_client(method: str, cid: int, model_fn, config: FILConfig, seed: int) -> FILClient:
    if method not in CLIENTS:
        raise ValueError(f"method must be one of {', '.join(METHODS)}, got {method!r}")
    return CLIENTS[method](cid, model_fn, config, seed)


def make_server(method: str, model_fn, config: FILConfig, seed: int) -> FILServer:
    if method not in CLIENTS:
        raise ValueError(f"method must be one of {', '.join(METHODS)}, got {method!r}")
    return (LiFILServer if method == "lifil" else FILServer)(model_fn, config, seed)


@dataclass
class FILResult:
    """Outcome of one run: ``acc_matrix[t, j]`` (accuracy on task ``j`` after task ``t``), communication
    (``bytes_uplink`` / ``bytes_downlink``, all clients and rounds, float32), ``client_storage_bytes`` (the largest
    peak over clients of what a client keeps beyond its current data and model), ``raw_samples_stored`` (largest over
    clients), per-round diagnostics and the server's history (generator fits)."""

    method: str
    acc_matrix: np.ndarray
    bytes_uplink: int
    bytes_downlink: int
    client_storage_bytes: int
    raw_samples_stored: int
    bytes_uplink_features: int = 0
    rounds: list[dict] = field(default_factory=list)
    server_history: list[dict] = field(default_factory=list)

    def average_accuracy(self, t: int | None = None) -> float:
        return average_accuracy(self.acc_matrix, t)

    def average_incremental_accuracy(self) -> float:
        return average_incremental_accuracy(self.acc_matrix)

    def forgetting(self) -> float:
        return forgetting(self.acc_matrix)

    def backward_transfer(self) -> float:
        return backward_transfer(self.acc_matrix)

    def old_accuracy(self) -> float:
        return old_task_accuracy(self.acc_matrix)

    def to_dict(self) -> dict:
        T = self.acc_matrix.shape[0]
        return {
            "method": self.method,
            "acc_matrix": self.acc_matrix.tolist(),
            "final_acc": self.average_accuracy(),
            "avg_acc_per_task": [self.average_accuracy(t) for t in range(T)],
            "avg_incremental_acc": self.average_incremental_accuracy(),
            "forgetting": self.forgetting(),
            "bwt": self.backward_transfer(),
            "old_acc": self.old_accuracy(),
            "new_acc": float(self.acc_matrix[-1, -1]),
            "bytes_uplink": self.bytes_uplink,
            "bytes_uplink_features": self.bytes_uplink_features,
            "bytes_downlink": self.bytes_downlink,
            "client_storage_bytes": self.client_storage_bytes,
            "raw_samples_stored": self.raw_samples_stored,
            "rounds": self.rounds,
            "server_history": self.server_history,
        }


def evaluate(model: DecoupledNet, state: dict, tests, seen: list[int]) -> list[float]:
    """Accuracy of the global ``state`` on each test set, argmax over the ``seen`` classes."""
    set_state(model, state).eval()
    out = []
    with torch.no_grad():
        for X, y in tests:
            if len(y) == 0:
                out.append(float("nan"))
                continue
            pred = model(torch.as_tensor(X), seen).argmax(1).numpy()
            out.append(float(np.mean(pred == y)))
    return out


def _check_tasks(tasks) -> None:
    if not isinstance(tasks, ClassIncrementalTasks):
        raise TypeError(
            f"tasks must be a ClassIncrementalTasks (from split_class_incremental), got {type(tasks).__name__}"
        )


def run_fil(
    method: str,
    tasks: ClassIncrementalTasks,
    model_fn: Callable[[], DecoupledNet] | None = None,
    *,
    rounds_per_task: int | None = None,
    seed: int = 0,
    config: FILConfig | None = None,
    eval_set: str = "test",
    **overrides,
) -> FILResult:
    """Run ``method`` (one of ``finetune, ewc, lwf, exemplar, joint, lifil``) over ``tasks`` with FedAvg, every client
    taking part in every round (clients without data for a task sit it out), and return its :class:`FILResult`.

    Per task ``t``: clients get their data and the server's replay (Li-FIL), ``rounds_per_task`` rounds of local
    training + weighted FedAvg, then the task boundary (clients' uploads, the server's generator fit) and an
    evaluation on every task's ``eval_set`` (``"test"`` or ``"val"``) with the classes seen so far.  ``config`` (a
    :class:`FILConfig`) and keyword ``overrides`` of its fields set the hyperparameters; ``seed`` fixes the global
    initialisation and every client's randomness."""
    _check_tasks(tasks)
    if method not in CLIENTS:
        raise ValueError(f"method must be one of {', '.join(METHODS)}, got {method!r}")
    cfg = config if config is not None else FILConfig()
    if rounds_per_task is not None:
        overrides["rounds_per_task"] = rounds_per_task
    cfg = replace(cfg, **overrides) if overrides else cfg
    if model_fn is None:

        def model_fn():
            return DecoupledNet(tasks.n_features, 32, tasks.n_classes)

    if eval_set not in ("test", "val"):
        raise ValueError(f"eval_set must be 'test' or 'val', got {eval_set!r}")
    tests = tasks.test if eval_set == "test" else tasks.val
    if tests is None:
        raise ValueError("eval_set='val' needs tasks split with val_size > 0")
    server = make_server(method, model_fn, cfg, seed)
    clients = [make_client(method, k, model_fn, cfg, seed) for k in range(tasks.n_clients)]
    evaluator = model_fn()
    model_bytes = state_bytes(server.state)
    T = tasks.n_tasks
    A = np.zeros((T, T))
    up = down = up_feat = 0
    rounds = []
    for t in range(T):
        seen = tasks.seen_classes(t).tolist()
        server.begin_task(t, seen)
        for k, c in enumerate(clients):
            c.set_task(t, *tasks.train[t][k], seen, new_classes=tasks.classes[t].tolist())
        replay = server.replay()
        active = [c for c in clients if c.n_samples > 0]
        if replay is not None:
            down += len(active) * int(replay[0].size * 4)
        for r in range(cfg.rounds_per_task):
            results = [c.fit(server.state, replay, r) for c in active]
            down += len(active) * model_bytes
            up += len(active) * model_bytes
            server.aggregate(results)
            accs = evaluate(evaluator, server.state, tests[: t + 1], seen)
            rounds.append(
                {"task": t, "round": r, "new_acc": accs[t], "old_acc": float(np.mean(accs[:t])) if t else float("nan")}
            )
        uploads = [c.end_task(server.state) for c in clients]
        feat = int(sum(sum(np.asarray(v).size for v in u.values()) for u in uploads if u) * 4)
        # labels count as 4 bytes each here too (int32 on the wire would suffice)
        up += feat
        up_feat += feat
        server.end_task(uploads)
        A[t] = evaluate(evaluator, server.state, tests, seen)
    return FILResult(
        method=method,
        acc_matrix=A,
        bytes_uplink=int(up),
        bytes_downlink=int(down),
        client_storage_bytes=int(max(c.peak_storage_bytes for c in clients)),
        raw_samples_stored=int(max(c.storage()["raw_samples"] for c in clients)),
        bytes_uplink_features=up_feat,
        rounds=rounds,
        server_history=server.history,
    )
