"""run_fil end to end (skips clients without data, thread-count invariance, a replay mutant) and the Flower path."""

import numpy as np
import pytest
import torch

from icml26.lifil import FILConfig, LiFILServer, load_digits_tasks, run_fil, split_class_incremental


def test_clients_without_data_are_skipped():
    rng = np.random.default_rng(0)
    y = np.repeat(np.arange(4), 30)
    X = rng.normal(size=(len(y), 64)) + y[:, None]
    tasks = split_class_incremental(X, y, n_tasks=2, n_clients=6, alpha=0.05, seed=1, min_samples=0)
    empty = [(t, k) for t in range(2) for k in range(6) if len(tasks[t][k][1]) == 0]
    assert empty  # the setting has clients that sit a task out
    for method in ("lifil", "ewc", "exemplar"):
        r = run_fil(method, tasks, seed=0, rounds_per_task=2, generator_steps=10)
        assert np.isfinite(r.acc_matrix).all()
        n_active = sum(len(tasks[t][k][1]) > 0 for t in range(2) for k in range(6))
        model_bytes = (64 * 64 + 64 + 64 * 32 + 32 + 32 * 4 + 4) * 4
        assert r.bytes_uplink - r.bytes_uplink_features == 2 * n_active * model_bytes


def test_run_fil_bad_inputs(tiny_tasks):
    with pytest.raises(ValueError, match="method"):
        run_fil("icarl", tiny_tasks)
    with pytest.raises(TypeError, match="tasks"):
        run_fil("lifil", [[(np.zeros((2, 64)), np.zeros(2, int))]])
    with pytest.raises(ValueError, match="eval_set"):
        run_fil("lifil", tiny_tasks, eval_set="train")
    with pytest.raises(ValueError, match="sigma_f"):
        run_fil("lifil", tiny_tasks, sigma_f=-1.0)


def test_same_records_under_one_and_two_threads():
    tasks = load_digits_tasks(2, 1, 1.0, seed=2)  # tiny: two threads on tiny ops are slow on a shared machine
    kw = {"rounds_per_task": 1, "generator_steps": 5, "local_epochs": 1, "classifier_epochs": 1, "n_replay": 10}
    before = torch.get_num_threads()
    try:
        torch.set_num_threads(1)
        a = run_fil("lifil", tasks, seed=2, **kw)
        torch.set_num_threads(2)
        b = run_fil("lifil", tasks, seed=2, **kw)
    finally:
        torch.set_num_threads(before)
    assert np.array_equal(a.acc_matrix, b.acc_matrix)


def test_replay_mutant_forgets(tiny_tasks, monkeypatch):
    """Without the server's replay, Li-FIL's classifier sees only new classes and the old tasks are lost."""
    kw = {"rounds_per_task": 3, "generator_steps": 40, "lambda_fd": 10.0}
    base = run_fil("lifil", tiny_tasks, seed=0, **kw)
    monkeypatch.setattr(LiFILServer, "replay", lambda self: None)
    mutant = run_fil("lifil", tiny_tasks, seed=0, **kw)
    assert base.old_accuracy() > mutant.old_accuracy() + 0.2
    assert mutant.old_accuracy() < 0.1


def test_flower_two_rounds_and_same_matrix_as_simulation():
    pytest.importorskip("flwr")
    from flwr.common import Context, FitIns, RecordDict, ndarrays_to_parameters, parameters_to_ndarrays
    from flwr.server.client_manager import SimpleClientManager

    from icml26.lifil import DecoupledNet
    from icml26.lifil.flower import InProcessClientProxy, LiFILStrategy, make_client_fn, run_flower

    tasks = load_digits_tasks(2, 3, 1.0, seed=5)
    cfg = FILConfig(rounds_per_task=2, generator_steps=20)

    def model_fn():
        return DecoupledNet(64, 32, 10)

    # two training rounds of the strategy by hand, with real Flower clients (NumPyClient -> to_client())
    strategy = LiFILStrategy(tasks.classes, model_fn, "lifil", cfg, seed=0, tests=tasks.test)
    fn = make_client_fn(tasks, "lifil", model_fn, cfg, seed=0)
    cm = SimpleClientManager()
    for k in range(3):
        ctx = Context(run_id=0, node_id=k + 1, node_config={"partition-id": k}, state=RecordDict(), run_config={})
        cm.register(InProcessClientProxy(str(k), fn, ctx))
    params = strategy.initialize_parameters(cm)
    for rnd in (1, 2):
        ins = strategy.configure_fit(rnd, params, cm)
        assert len(ins) == 3 and all(isinstance(i, FitIns) for _, i in ins)
        results = [(p, p.fit(i, None, rnd)) for p, i in ins]
        params, _ = strategy.aggregate_fit(rnd, results, [])
    sim_state = strategy.server.state
    assert all(np.array_equal(a, sim_state[k]) for a, k in zip(parameters_to_ndarrays(params), strategy.keys))
    assert isinstance(ndarrays_to_parameters([sim_state[strategy.keys[0]]]).tensors[0], bytes)

    # the whole schedule through Flower's Server loop equals the simulation
    sim = run_fil("lifil", tasks, seed=0, config=cfg)
    _, fl = run_flower("lifil", tasks, seed=0, config=cfg)
    assert np.allclose(sim.acc_matrix, fl.acc_matrix, atol=1e-6)
    assert sim.bytes_uplink == fl.bytes_uplink
    _, ewc = run_flower("ewc", tasks, seed=0, config=cfg)  # a baseline whose state lives in Context.state
    assert np.allclose(run_fil("ewc", tasks, seed=0, config=cfg).acc_matrix, ewc.acc_matrix, atol=1e-6)


def test_flower_client_fn_entry_point():
    pytest.importorskip("flwr")
    from flwr.client import Client
    from flwr.common import Context, RecordDict

    from icml26.lifil.flower import client_fn

    ctx = Context(
        run_id=0,
        node_id=1,
        node_config={"partition-id": 1, "num-partitions": 5},
        state=RecordDict(),
        run_config={"num-tasks": 5, "seed": 0},
    )
    assert isinstance(client_fn(ctx), Client)
    ctx.node_config = {"partition-id": 9, "num-partitions": 5}
    with pytest.raises(ValueError, match="partition-id"):
        client_fn(ctx)
