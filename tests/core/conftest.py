import os
import sys
from pathlib import Path

import pytest

HERE = str(Path(__file__).resolve().parent)
sys.path.insert(0, HERE)  # toyexp importable by name (spawned workers get sys.path; submitit's get PYTHONPATH)

import toyexp  # noqa: E402

from icml26.core import registry as reg  # noqa: E402


@pytest.fixture
def toy_experiment(monkeypatch):
    """Register the throwaway experiment for the duration of one test."""
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(p for p in (HERE, os.environ.get("PYTHONPATH")) if p))
    exp = reg.register(toyexp.EXPERIMENT)
    toyexp.CALLS.clear()
    yield exp
    reg._REGISTRY.pop("toy", None)


@pytest.fixture
def calls():
    return toyexp.CALLS
