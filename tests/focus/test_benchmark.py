"""The GPU throughput benchmark's function, run tiny on CPU (it is device-generic; no GPU here)."""

import importlib.util
from pathlib import Path

import numpy as np
import pytest
import torch

from icml26.focus import DllmConfig
from icml26.focus.tasks import EOS, PAD, sample_xor_chain
from icml26.focus.train import TrainConfig

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "focus_throughput.py"


def _load():
    spec = importlib.util.spec_from_file_location("focus_throughput", BENCH)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_benchmark_runs_on_cpu_and_checks_exactness():
    bench = _load()
    torch.manual_seed(0)
    model = TrainConfig(n_layer=3, n_embd=16, n_head=2, n_kv_head=1, block_size=32, family="xor").model().eval()
    prompts = torch.from_numpy(sample_xor_chain(np.random.default_rng(0), 4)["prompt"])
    base = DllmConfig(block_size=32, threshold=1.0, suppress_ids=(PAD, EOS))
    res = bench.benchmark(model.to("cpu"), prompts, base, [2, 4], repeats=1)
    assert res["exact"] is True
    assert [r["batch"] for r in res["rows"]] == [2, 4]
    for r in res["rows"]:
        assert r["delayed_cache_tok_s"] > 0 and r["focus_tok_s"] > 0
        assert 0 < r["token_layer_ratio"] < 1  # FOCUS evicts under one token per step
    with pytest.raises(ValueError, match="batches"):
        bench.benchmark(model, prompts, base, [8], repeats=1)
