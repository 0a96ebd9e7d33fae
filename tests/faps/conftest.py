import pytest
import torch


@pytest.fixture(autouse=True)
def _one_thread():
    """One intra-op thread: the tiny models here are slower with more threads on a shared CPU."""
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)
