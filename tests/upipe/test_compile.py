"""UPipe and Ulysses compile to one graph (``torch.compile(fullgraph=True)``: a graph break raises) on 2 gloo ranks,
forward and backward, and give the eager numbers."""

import pytest
import torch

from icml26.upipe import testing
from icml26.upipe._checks import compiled_vs_eager


@pytest.mark.skipif(not torch.distributed.is_available(), reason="this torch build has no torch.distributed")
@pytest.mark.parametrize("method", ["upipe", "ulysses"])
def test_fullgraph_compile_on_two_ranks_equals_eager(method):
    for r in testing.spawn(compiled_vs_eager, 2, args=(method,), timeout_s=300):
        assert r["frames"] == 1  # one graph, compiled by Dynamo + inductor (not an eager fallback)
        assert r["out"] < 1e-5 and r["grad"] < 1e-5, r
