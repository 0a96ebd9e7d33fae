import matplotlib
import pytest

matplotlib.use("Agg")


@pytest.fixture(scope="session")
def tiny_tasks():
    from icml26.lifil import load_digits_tasks

    return load_digits_tasks(n_tasks=3, n_clients=3, alpha=1.0, seed=0)


@pytest.fixture(scope="session")
def tiny_kw():
    return {"rounds_per_task": 2, "generator_steps": 20}
