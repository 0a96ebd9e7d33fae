import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from icml26.faps import band_index, dct_band_energies, dct_matrix, patch_features, patchify, unpatchify


@settings(max_examples=25, deadline=None)
@given(b=st.integers(1, 3), c=st.integers(1, 3), gh=st.integers(1, 4), gw=st.integers(1, 4), p=st.integers(1, 4))
def test_patchify_round_trip_is_exact(b, c, gh, gw, p):
    x = torch.randn(b, c, gh * p, gw * p, generator=torch.Generator().manual_seed(b + 10 * c))
    tokens = patchify(x, p)
    assert tokens.shape == (b, gh * gw, c * p * p)
    assert torch.equal(unpatchify(tokens, p, c, gh * p, gw * p), x)


def test_patchify_token_order_is_row_major():
    x = torch.arange(16.0).reshape(1, 1, 4, 4)
    t = patchify(x, 2)
    assert t[0, 0].tolist() == [0, 1, 4, 5] and t[0, 1].tolist() == [2, 3, 6, 7] and t[0, 2].tolist() == [8, 9, 12, 13]


@pytest.mark.parametrize("h,w,p", [(16, 16, 3), (10, 16, 4), (8, 6, 4)])
def test_image_size_not_divisible_by_patch_size_raises(h, w, p):
    with pytest.raises(ValueError, match="patch_size"):
        patchify(torch.zeros(1, 1, h, w), p)
    with pytest.raises(ValueError, match="patch_size"):
        unpatchify(torch.zeros(1, 4, 1), p, 1, h, w)


def test_dct_matrix_is_orthonormal():
    for n in (1, 2, 4, 7):
        m = dct_matrix(n, torch.float64)
        assert torch.allclose(m @ m.T, torch.eye(n, dtype=torch.float64), atol=1e-12)


@pytest.mark.parametrize("p", [2, 4, 8])
def test_constant_patch_has_all_energy_in_band_zero(p):
    e = dct_band_energies(torch.full((p, p), 0.7, dtype=torch.float64), 4)
    assert e[0] == pytest.approx(0.49 * p * p)
    assert torch.all(e[1:].abs() < 1e-12)


def test_checkerboard_has_all_energy_in_the_top_band():
    board = torch.tensor([[1.0, -1.0], [-1.0, 1.0]], dtype=torch.float64)
    e = dct_band_energies(board, 4)
    assert e[-1] == pytest.approx(4.0) and torch.all(e[:-1].abs() < 1e-12)


@pytest.mark.parametrize("p", [4, 8])
def test_highest_dct_basis_image_is_in_the_top_band_and_pixel_checkerboard_is_mostly_there(p):
    m = dct_matrix(p, torch.float64)
    basis = torch.outer(m[-1], m[-1])  # the (p-1, p-1) cosine: all energy at the top frequency
    e = dct_band_energies(basis, 4)
    assert e[-1] == pytest.approx(1.0) and torch.all(e[:-1].abs() < 1e-12)
    i = torch.arange(p)
    board = ((-1.0) ** (i[:, None] + i[None, :])).double()
    e = dct_band_energies(board, 4)
    assert e[0] < 0.01 * p * p and int(e.argmax()) == 3 and e[-1] > 0.7 * p * p


@settings(max_examples=30, deadline=None)
@given(p=st.integers(1, 6), bands=st.integers(1, 6), seed=st.integers(0, 1000))
def test_parseval_band_energies_sum_to_squared_norm(p, bands, seed):
    x = torch.randn(3, p, p, dtype=torch.float64, generator=torch.Generator().manual_seed(seed))
    e = dct_band_energies(x, bands)
    assert e.shape == (3, bands) and torch.all(e >= 0)
    assert torch.allclose(e.sum(-1), x.pow(2).sum((-1, -2)), rtol=1e-10)


def test_band_index_runs_from_dc_to_corner():
    idx = band_index(4, 4, 4)
    assert idx[0, 0] == 0 and idx[-1, -1] == 3 and idx.max() == 3


def test_patch_features_shape_and_values():
    x = torch.zeros(2, 1, 4, 4)
    x[:, :, :2, :2] = 1.0  # patch 0 constant, others zero
    f = patch_features(x, 2, 4)
    assert f.shape == (2, 4, 5)
    assert f[0, 0, 0] == pytest.approx(0.0, abs=1e-5)  # all energy in band 0: log(1) = 0
    assert f[0, 0, -1] == pytest.approx(math.log(4.0 + 1e-6), abs=1e-5)
