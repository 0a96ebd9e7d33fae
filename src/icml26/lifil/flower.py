"""Li-FIL on Flower (``pip install 'icml26[fl]'``): ``LiFILStrategy`` (a ``FedAvg`` whose rounds follow the
class-incremental schedule, with the Li-FIL server's generator at task boundaries and replay features shipped as
arrays), ``client_fn`` / :func:`make_client_fn` (Flower clients around the same :class:`~icml26.lifil.FILClient`
objects the simulation uses, their persistent state kept in ``Context.state``), and :func:`run_flower`, which runs
Flower's own ``Server`` loop in this process with in-process client proxies (no Ray, no network).

Schedule: for each task ``t``, ``rounds_per_task`` training rounds (config ``phase="train"``: the global model, plus
the replay features ``H, y`` as two extra arrays for Li-FIL) and one boundary round (``phase="end_task"``: clients
return their privatized uploads as arrays ``[H, y]``; the strategy fits the generator and evaluates).  Flower
creates a fresh client object per round, which is why the state a method keeps across rounds (the previous encoder,
an EWC Fisher, an exemplar buffer) round-trips through ``Context.state`` as an ``ArrayRecord``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from functools import lru_cache

import numpy as np
from flwr.client import Client, NumPyClient
from flwr.common import (
    Array,
    ArrayRecord,
    ConfigRecord,
    Context,
    DisconnectRes,
    EvaluateIns,
    EvaluateRes,
    FitIns,
    FitRes,
    GetParametersIns,
    GetParametersRes,
    GetPropertiesIns,
    GetPropertiesRes,
    Parameters,
    ReconnectIns,
    RecordDict,
    Scalar,
    ndarrays_to_parameters,
    parameters_to_ndarrays,
)
from flwr.server import Server
from flwr.server.client_manager import ClientManager, SimpleClientManager
from flwr.server.client_proxy import ClientProxy
from flwr.server.strategy import FedAvg

from .client import FILClient
from .config import FILConfig
from .data import ClassIncrementalTasks, load_digits_tasks
from .model import DecoupledNet
from .simulation import FILResult, evaluate, make_client, make_server

__all__ = ["LiFILStrategy", "FILNumPyClient", "client_fn", "make_client_fn", "run_flower", "InProcessClientProxy"]

STATE_KEY = "icml26.lifil"


def _default_model_fn(tasks: ClassIncrementalTasks) -> Callable[[], DecoupledNet]:
    def model_fn() -> DecoupledNet:
        return DecoupledNet(tasks.n_features, 32, tasks.n_classes)

    return model_fn


def _ints(s: Scalar) -> list[int]:
    return [int(v) for v in str(s).split(",") if v != ""]


class FILNumPyClient(NumPyClient):
    """A Flower ``NumPyClient`` around one :class:`FILClient` of partition ``cid``: restores the method's persistent
    state from ``context.state`` before the round and stores it back after."""

    def __init__(self, fil: FILClient, context: Context, tasks: ClassIncrementalTasks) -> None:
        self.fil, self.ctx, self.tasks = fil, context, tasks
        self.keys = list(fil.model.state_dict())
        if STATE_KEY in context.state:
            rec = context.state[STATE_KEY]
            fil.set_persistent_state({k: a.numpy() for k, a in rec.items()})

    def _save(self) -> None:
        st = self.fil.get_persistent_state()
        self.ctx.state[STATE_KEY] = ArrayRecord({k: Array(np.ascontiguousarray(v)) for k, v in st.items()})
        self.ctx.state[STATE_KEY + ".meta"] = ConfigRecord({"task": int(self.fil.task)})

    def get_parameters(self, config: dict[str, Scalar]) -> list[np.ndarray]:
        return [v.detach().numpy().copy() for v in self.fil.model.state_dict().values()]

    def fit(self, parameters: list[np.ndarray], config: dict[str, Scalar]) -> tuple[list[np.ndarray], int, dict]:
        t, r, phase = int(config["task"]), int(config["round"]), str(config["phase"])
        X, y = self.tasks.train[t][self.fil.cid]
        self.fil.set_task(t, X, y, _ints(config["seen"]), new_classes=_ints(config["new"]))
        n_model = len(self.keys)
        state = dict(zip(self.keys, parameters[:n_model], strict=True))
        if phase == "train":
            replay = (parameters[n_model], parameters[n_model + 1]) if len(parameters) >= n_model + 2 else None
            new_state, n = self.fil.fit(state, replay, r)
            self._save()
            return [new_state[k] for k in self.keys], n, {"cid": self.fil.cid}
        if phase != "end_task":
            raise ValueError(f"config['phase'] must be 'train' or 'end_task', got {phase!r}")
        up = self.fil.end_task(state)
        self._save()
        if not up:
            return [], 0, {"cid": self.fil.cid}
        return [up["H"], up["y"]], int(len(up["y"])), {"cid": self.fil.cid}


def make_client_fn(
    tasks: ClassIncrementalTasks,
    method: str = "lifil",
    model_fn: Callable[[], DecoupledNet] | None = None,
    config: FILConfig | None = None,
    seed: int = 0,
) -> Callable[[Context], Client]:
    """``client_fn(context) -> Client`` for ``ClientApp(client_fn=...)``: the partition is
    ``context.node_config["partition-id"]``; ``method`` picks the same client class :func:`run_fil` uses."""
    model_fn = model_fn or _default_model_fn(tasks)
    cfg = config if config is not None else FILConfig()

    def fn(context: Context) -> Client:
        cid = int(context.node_config["partition-id"])
        if not 0 <= cid < tasks.n_clients:
            raise ValueError(f"partition-id must lie in [0, {tasks.n_clients - 1}], got {cid}")
        return FILNumPyClient(make_client(method, cid, model_fn, cfg, seed), context, tasks).to_client()

    return fn


@lru_cache(maxsize=4)
def _digits(n_tasks: int, n_clients: int, alpha: float, seed: int) -> ClassIncrementalTasks:
    return load_digits_tasks(n_tasks, n_clients, alpha, seed)


def client_fn(context: Context) -> Client:
    """The ``ClientApp`` entry point on the digits benchmark: ``run_config`` keys ``num-tasks`` (5), ``alpha``
    (1.0), ``seed`` (0), ``method`` ("lifil"); ``node_config`` ``partition-id`` and ``num-partitions`` (5)."""
    rc, nc = context.run_config, context.node_config
    tasks = _digits(
        int(rc.get("num-tasks", 5)),
        int(nc.get("num-partitions", 5)),
        float(rc.get("alpha", 1.0)),
        int(rc.get("seed", 0)),
    )
    return make_client_fn(tasks, str(rc.get("method", "lifil")), seed=int(rc.get("seed", 0)))(context)


class LiFILStrategy(FedAvg):
    """``FedAvg`` on a class-incremental schedule (module docstring), with every client in every round.  The server
    side is :class:`~icml26.lifil.LiFILServer` (``method="lifil"``) or the plain FedAvg server of a baseline, the
    same objects the simulation uses, so both paths aggregate identically (results sorted by client id).  After each
    task's boundary round the global model is evaluated on ``tests`` (if given): :attr:`acc_matrix_`."""

    def __init__(
        self,
        task_classes,
        model_fn: Callable[[], DecoupledNet],
        method: str = "lifil",
        config: FILConfig | None = None,
        seed: int = 0,
        tests=None,
    ) -> None:
        super().__init__(
            fraction_fit=1.0,
            fraction_evaluate=0.0,
            min_fit_clients=1,
            min_evaluate_clients=0,
            min_available_clients=1,
            accept_failures=False,
        )
        self.cfg = config if config is not None else FILConfig()
        self.task_classes = [np.sort(np.asarray(c, dtype=np.int64)) for c in task_classes]
        if not self.task_classes:
            raise ValueError("task_classes must list at least one task's classes")
        self.server = make_server(method, model_fn, self.cfg, seed)
        self.keys = list(self.server.state)
        self.schedule = [
            (t, r, "train") for t in range(len(self.task_classes)) for r in range(self.cfg.rounds_per_task)
        ]
        self.schedule = sorted(
            self.schedule + [(t, self.cfg.rounds_per_task, "end_task") for t in range(len(self.task_classes))]
        )
        self.tests, self.model_fn = tests, model_fn
        T = len(self.task_classes)
        self.acc_matrix_ = np.full((T, T), np.nan)
        self.bytes_uplink_ = 0

    @property
    def num_rounds(self) -> int:
        return len(self.schedule)

    def _seen(self, t: int) -> list[int]:
        return np.sort(np.concatenate(self.task_classes[: t + 1])).tolist()

    def _model_arrays(self) -> list[np.ndarray]:
        return [self.server.state[k] for k in self.keys]

    def initialize_parameters(self, client_manager: ClientManager) -> Parameters | None:
        return ndarrays_to_parameters(self._model_arrays())

    def configure_fit(
        self, server_round: int, parameters: Parameters, client_manager: ClientManager
    ) -> list[tuple[ClientProxy, FitIns]]:
        if not 1 <= server_round <= self.num_rounds:
            return []
        t, r, phase = self.schedule[server_round - 1]
        if phase == "train" and r == 0:
            self.server.begin_task(t, self._seen(t))
        arrays = self._model_arrays()
        replay = self.server.replay()
        if phase == "train" and replay is not None:
            arrays = arrays + [replay[0], replay[1]]
        cfg = {
            "task": t,
            "round": r,
            "phase": phase,
            "seen": ",".join(map(str, self._seen(t))),
            "new": ",".join(map(str, self.task_classes[t].tolist())),
        }
        ins = FitIns(ndarrays_to_parameters(arrays), cfg)
        clients = sorted(client_manager.all().values(), key=lambda c: int(c.cid))
        return [(c, ins) for c in clients]

    def aggregate_fit(self, server_round: int, results, failures):
        if failures:
            raise RuntimeError(f"{len(failures)} client(s) failed in round {server_round}: {failures[:1]}")
        t, _, phase = self.schedule[server_round - 1]
        res = sorted(results, key=lambda cr: int(cr[1].metrics["cid"]))
        arrays = [(parameters_to_ndarrays(fr.parameters), fr.num_examples) for _, fr in res]
        self.bytes_uplink_ += int(sum(sum(a.size for a in arr) * 4 for arr, n in arrays if n > 0))
        if phase == "train":
            self.server.aggregate([(dict(zip(self.keys, arr, strict=True)), n) for arr, n in arrays if n > 0])
        else:
            self.server.end_task([{"H": arr[0], "y": arr[1]} if n > 0 else {} for arr, n in arrays])
            if self.tests is not None:
                self.acc_matrix_[t] = evaluate(self.model_fn(), self.server.state, self.tests, self._seen(t))
        return ndarrays_to_parameters(self._model_arrays()), {}

    def configure_evaluate(self, server_round, parameters, client_manager):
        return []


class InProcessClientProxy(ClientProxy):
    """A ``ClientProxy`` that calls ``client_fn(context)`` in this process for every message (a fresh client object
    each time, as Flower's simulation does), with one ``Context`` per node kept across rounds."""

    def __init__(self, cid: str, client_fn: Callable[[Context], Client], context: Context) -> None:
        super().__init__(cid)
        self.client_fn, self.context = client_fn, context

    def get_properties(self, ins: GetPropertiesIns, timeout, group_id) -> GetPropertiesRes:
        return self.client_fn(self.context).get_properties(ins)

    def get_parameters(self, ins: GetParametersIns, timeout, group_id) -> GetParametersRes:
        return self.client_fn(self.context).get_parameters(ins)

    def fit(self, ins: FitIns, timeout, group_id) -> FitRes:
        return self.client_fn(self.context).fit(ins)

    def evaluate(self, ins: EvaluateIns, timeout, group_id) -> EvaluateRes:
        return self.client_fn(self.context).evaluate(ins)

    def reconnect(self, ins: ReconnectIns, timeout, group_id) -> DisconnectRes:
        return DisconnectRes(reason="")


def run_flower(
    method: str,
    tasks: ClassIncrementalTasks,
    model_fn: Callable[[], DecoupledNet] | None = None,
    *,
    rounds_per_task: int | None = None,
    seed: int = 0,
    config: FILConfig | None = None,
    num_rounds: int | None = None,
    **overrides,
) -> tuple[LiFILStrategy, FILResult | None]:
    """Run ``method`` through Flower's ``Server`` loop in-process (one worker thread), every client a real Flower
    ``Client`` built by :func:`make_client_fn`.  ``num_rounds`` (default: the whole schedule) can stop early.
    Returns the strategy and, for a full schedule, a :class:`FILResult` with the accuracy matrix and uplink bytes."""
    cfg = config if config is not None else FILConfig()
    if rounds_per_task is not None:
        overrides["rounds_per_task"] = rounds_per_task
    cfg = replace(cfg, **overrides) if overrides else cfg
    model_fn = model_fn or _default_model_fn(tasks)
    strategy = LiFILStrategy(tasks.classes, model_fn, method, cfg, seed, tests=tasks.test)
    fn = make_client_fn(tasks, method, model_fn, cfg, seed)
    cm = SimpleClientManager()
    for k in range(tasks.n_clients):
        ctx = Context(
            run_id=0,
            node_id=k + 1,
            node_config={"partition-id": k, "num-partitions": tasks.n_clients},
            state=RecordDict(),
            run_config={},
        )
        cm.register(InProcessClientProxy(str(k), fn, ctx))
    server = Server(client_manager=cm, strategy=strategy)
    server.set_max_workers(1)
    n = strategy.num_rounds if num_rounds is None else int(num_rounds)
    server.fit(num_rounds=n, timeout=None)
    if n < strategy.num_rounds:
        return strategy, None
    return strategy, FILResult(
        method=method,
        acc_matrix=strategy.acc_matrix_,
        bytes_uplink=strategy.bytes_uplink_,
        bytes_downlink=0,
        client_storage_bytes=0,
        raw_samples_stored=0,
        server_history=strategy.server.history,
    )
