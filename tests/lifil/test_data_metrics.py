"""Split invariants, metrics on a hand-made accuracy matrix, FedAvg by hand, byte accounting."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from icml26.lifil import (
    accuracy_matrix,
    average_accuracy,
    average_incremental_accuracy,
    backward_transfer,
    fedavg,
    forgetting,
    load_digits_tasks,
    old_task_accuracy,
    split_class_incremental,
)


def _toy(n=400, classes=8, seed=0):
    rng = np.random.default_rng(seed)
    y = np.repeat(np.arange(classes), n // classes)
    X = rng.normal(size=(len(y), 5))
    X[:, 0] = np.arange(len(y))  # a unique id per row (monotone under standardisation)
    return X, y


@settings(max_examples=15, deadline=None)
@given(n_tasks=st.integers(1, 8), n_clients=st.integers(1, 4), seed=st.integers(0, 50))
def test_split_invariants(n_tasks, n_clients, seed):
    X, y = _toy()
    t = split_class_incremental(X, y, n_tasks, n_clients, alpha=1.0, seed=seed, min_samples=1)
    cls = np.concatenate(t.classes)
    assert sorted(cls.tolist()) == list(range(8))  # disjoint and covering
    assert t.n_tasks == n_tasks and t.n_clients == n_clients
    train_ids, test_ids = set(), set()
    for j in range(n_tasks):
        for Xk, yk in t[j]:
            assert len(yk) >= 1 and set(yk.tolist()) <= set(t.classes[j].tolist())
            train_ids |= set(np.round(Xk[:, 0], 5).tolist())
        Xt, yt = t.test[j]
        assert set(yt.tolist()) == set(t.classes[j].tolist())
        test_ids |= set(np.round(Xt[:, 0], 5).tolist())
    assert not train_ids & test_ids  # no test sample in train
    assert len(train_ids) + len(test_ids) == len(y)


def test_split_deterministic_and_min_samples():
    a = load_digits_tasks(5, 5, 1.0, seed=3)
    b = load_digits_tasks(5, 5, 1.0, seed=3)
    for t in range(5):
        assert np.array_equal(a.classes[t], b.classes[t])
        for k in range(5):
            assert np.array_equal(a[t][k][0], b[t][k][0]) and np.array_equal(a[t][k][1], b[t][k][1])
            assert len(a[t][k][1]) >= 5
    c = load_digits_tasks(5, 5, 1.0, seed=4)
    assert any(not np.array_equal(a.classes[t], c.classes[t]) for t in range(5))


def test_split_bad_inputs():
    X, y = _toy()
    with pytest.raises(ValueError, match="n_tasks"):
        split_class_incremental(X, y, n_tasks=9)
    with pytest.raises(ValueError, match="n_tasks"):
        split_class_incremental(X, y, n_tasks=0)
    with pytest.raises(ValueError, match="n_clients"):
        split_class_incremental(X, y, n_clients=0)
    with pytest.raises(ValueError, match="alpha"):
        split_class_incremental(X, y, alpha=0.0)
    with pytest.raises(ValueError, match="test_size"):
        split_class_incremental(X, y, test_size=1.5)
    with pytest.raises(ValueError, match="y must"):
        split_class_incremental(X, y[:-1])
    with pytest.raises(TypeError, match="y must hold integer"):
        split_class_incremental(X, y.astype(float))
    with pytest.raises(ValueError, match="min_samples"):
        split_class_incremental(X, y, n_tasks=4, n_clients=4, alpha=0.01, min_samples=40, max_tries=3)


def test_metrics_hand_matrix():
    A = np.array([[0.9, 0.0, 0.0], [0.6, 0.8, 0.0], [0.3, 0.5, 0.7]])
    assert average_accuracy(A) == pytest.approx(0.5)
    assert average_accuracy(A, 1) == pytest.approx(0.7)
    assert average_incremental_accuracy(A) == pytest.approx((0.9 + 0.7 + 0.5) / 3)
    assert forgetting(A) == pytest.approx(((0.9 - 0.3) + (0.8 - 0.5)) / 2)
    assert backward_transfer(A) == pytest.approx(((0.3 - 0.9) + (0.5 - 0.8)) / 2)
    assert old_task_accuracy(A) == pytest.approx(0.4)
    assert forgetting(np.ones((1, 1))) == 0.0 and backward_transfer(np.ones((1, 1))) == 0.0
    with pytest.raises(ValueError, match="acc_matrix"):
        forgetting(np.ones((2, 3)))
    y = [np.array([0, 0, 1]), np.array([2, 3])]
    got = accuracy_matrix(y, [[np.array([0, 1, 1]), np.array([0, 0])], [np.array([0, 0, 1]), np.array([2, 2])]])
    assert np.allclose(got, [[2 / 3, 0.0], [1.0, 0.5]])
    with pytest.raises(ValueError, match="y_pred"):
        accuracy_matrix(y, [[y[0]]])


def test_fedavg_by_hand():
    a = {"w": np.array([1.0, 2.0], dtype=np.float32)}
    b = {"w": np.array([3.0, 6.0], dtype=np.float32)}
    c = {"w": np.array([100.0, 100.0], dtype=np.float32)}
    got = fedavg([(a, 1), (b, 3), (c, 0)])["w"]
    assert np.allclose(got, [(1 + 9) / 4, (2 + 18) / 4]) and got.dtype == np.float32
    with pytest.raises(ValueError, match="results"):
        fedavg([(a, 0)])


def test_byte_accounting(tiny_tasks, tiny_kw):
    from icml26.lifil import run_fil

    M = 2
    ex = run_fil("exemplar", tiny_tasks, seed=0, exemplar_M=M, **tiny_kw)
    per_client = []
    for k in range(tiny_tasks.n_clients):
        n_cls = sum(len(np.unique(tiny_tasks[t][k][1])) for t in range(tiny_tasks.n_tasks))
        per_client.append(M * n_cls * 64 * 4)  # M raw float32 samples of 64 pixels per class the client has seen
    assert ex.client_storage_bytes == max(per_client)
    lf = run_fil("lifil", tiny_tasks, seed=0, **tiny_kw)
    n_up = sum(h["uploaded"] for h in lf.server_history)
    assert lf.bytes_uplink_features == n_up * (32 + 1) * 4  # d float32 features + one label each
    model_bytes = (64 * 64 + 64 + 64 * 32 + 32 + 32 * 10 + 10) * 4
    rounds = tiny_kw["rounds_per_task"] * tiny_tasks.n_tasks * tiny_tasks.n_clients
    assert lf.bytes_uplink == rounds * model_bytes + lf.bytes_uplink_features
    assert ex.bytes_uplink == rounds * model_bytes
    assert lf.raw_samples_stored == 0
