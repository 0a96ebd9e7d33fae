"""Shared fixtures of the SlaClip tests."""

import pytest
import torch


@pytest.fixture(autouse=True)
def _one_thread():
    """Tiny models: one intra-op thread is faster, and the CPUs are shared."""
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)
