import numpy as np
import pytest
import torch

torch.set_num_threads(1)


class GaussianGenerator:
    """y | x ~ N(m(x), diag(s)^2) in R^d, with m(x) = x * a (a test generator)."""

    def __init__(self, d: int = 2, scale=(1.0, 0.3)) -> None:
        self.d = d
        self.a = np.linspace(1.0, -1.0, d)
        self.s = np.resize(np.asarray(scale, dtype=float), d)

    def sample(self, x, n, rng):
        return float(x) * self.a + rng.standard_normal((n, self.d)) * self.s


def linear(w):
    wt = torch.as_tensor(np.asarray(w, dtype=float))
    return lambda x, z: z @ wt


@pytest.fixture
def gaussian_generator():
    return GaussianGenerator()
