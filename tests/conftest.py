import os

import matplotlib
import pytest

matplotlib.use("Agg")
os.environ.setdefault("MPLBACKEND", "Agg")

try:
    import torch

    torch.set_num_threads(2)
except ImportError:  # pragma: no cover
    pass


@pytest.fixture(autouse=True)
def _no_global_torch_state_leaks():
    """A test that changes torch's default dtype or deterministic mode must put it back (a leak broke 39 tests)."""
    import torch

    dtype, det = torch.get_default_dtype(), torch.are_deterministic_algorithms_enabled()
    yield
    assert torch.get_default_dtype() == dtype, f"the test left torch's default dtype at {torch.get_default_dtype()}"
    assert torch.are_deterministic_algorithms_enabled() == det, "the test left torch's deterministic mode changed"
