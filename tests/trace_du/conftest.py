import pytest
import torch


@pytest.fixture(autouse=True)
def _one_torch_thread():
    """These models are tiny: one thread is faster, and two threads crawl on a loaded 2-core machine."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)
