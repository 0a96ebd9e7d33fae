"""The learned projector on the unit circle; the baselines' shapes and errors."""

import numpy as np
import pytest
import torch

from icml26.latent_geodesics import (
    LatentProjector,
    knn_graph_path,
    linear_interpolation,
    projected_linear_interpolation,
    resample_polyline,
)


def test_projector_learns_the_unit_circle():
    from icml26.core.runner import limited_threads

    with limited_threads(1):  # a small MLP: one thread is several times faster than two contending ones
        _learn_unit_circle()


def _learn_unit_circle():
    rng = np.random.default_rng(0)
    t = rng.uniform(0, 2 * np.pi, 2000)
    Z = np.column_stack([np.cos(t), np.sin(t)])
    torch.manual_seed(0)
    p = LatentProjector(2, hidden=64, depth=4).fit(Z, sigma=0.05, steps=1500, batch_size=256, lr=3e-3)
    s = np.linspace(0, 2 * np.pi, 50, endpoint=False)
    for r in (0.9, 1.0, 1.1):
        q = r * np.column_stack([np.cos(s), np.sin(s)])
        err = np.linalg.norm(p.project(q) - q / np.linalg.norm(q, axis=1, keepdims=True), axis=1)
        assert err.max() < 0.05, (r, err.max())
    h = p.history_
    assert h[-1]["val_loss"] < h[0]["val_loss"] and p.best_val_loss_ <= min(x["val_loss"] for x in h) + 1e-12
    z = torch.zeros(4, 2, dtype=torch.float64, requires_grad=True)
    assert p.zeta(z).dtype == torch.float64


def test_projector_bad_inputs():
    with pytest.raises(ValueError, match="latent_dim"):
        LatentProjector(0)
    with pytest.raises(ValueError, match="depth"):
        LatentProjector(3, depth=1)
    with pytest.raises(ValueError, match="activation"):
        LatentProjector(3, activation="gelu2")
    p = LatentProjector(3)
    with pytest.raises(ValueError, match="sigma"):
        p.fit(np.zeros((10, 3)), sigma=-1.0)
    with pytest.raises(ValueError, match="columns"):
        p.fit(np.zeros((10, 2)))
    with pytest.raises(TypeError, match="Z"):
        p.fit([[0.0, 0.0, 0.0]] * 4)
    with pytest.raises(ValueError, match="steps"):
        p.fit(np.zeros((10, 3)), steps=0)


def test_baselines():
    a, b = np.array([1.0, 0.0]), np.array([0.0, 1.0])
    lin = linear_interpolation(a, b, 4)
    assert lin.shape == (5, 2) and np.allclose(lin[2], [0.5, 0.5])
    proj = projected_linear_interpolation(a, b, 4, lambda z: z / np.linalg.norm(z, axis=1, keepdims=True))
    assert np.allclose(np.linalg.norm(proj, axis=1), 1.0)
    t = np.linspace(0, np.pi / 2, 200)
    C = np.column_stack([np.cos(t), np.sin(t)])
    path = knn_graph_path(C, a, b, 8, k=3)
    assert path.shape == (9, 2) and np.allclose(path[0], a) and np.allclose(path[-1], b)
    assert np.abs(np.linalg.norm(path, axis=1) - 1).max() < 1e-3
    far = np.vstack([C, C + 100.0])
    with pytest.raises(ValueError, match="not connected"):
        knn_graph_path(far, a, b + 100.0, 4, k=2)
    with pytest.raises(ValueError, match="n_steps"):
        linear_interpolation(a, b, 1)
    r = resample_polyline(np.array([[0.0, 0], [1, 0], [1, 1]]), 4)
    assert np.allclose(r[2], [1, 0])


def test_spline_energy_path_is_straight_on_a_plane_and_on_the_sphere_near_the_arc():
    import math

    import torch

    from icml26.latent_geodesics import sphere_zeta
    from icml26.latent_geodesics.baselines import spline_energy_path
    from icml26.latent_geodesics.data import dist_to_arc, sphere_pair

    A = torch.tensor([[0.0, 0.0, 1.0]], dtype=torch.float64)
    a, b = np.array([0.0, 0.0, 0.5]), np.array([1.0, 2.0, 0.5])
    p = spline_energy_path(a, b, 6, lambda z: z @ A.T - 0.5)
    assert p.shape == (7, 3) and np.abs(p - np.linspace(a, b, 7)).max() < 1e-5
    th = math.radians(90)
    a, b, u = sphere_pair(th, np.random.default_rng(0))
    p = spline_energy_path(a, b, 16, sphere_zeta, penalty=1e3)
    assert dist_to_arc(p, a, u, th).max() < 0.05  # a penalty and 4 control points: close, not exact
    with pytest.raises(ValueError, match="n_ctrl"):
        spline_energy_path(a, b, 4, sphere_zeta, n_ctrl=0)
    with pytest.raises(ValueError, match="penalty"):
        spline_energy_path(a, b, 4, sphere_zeta, penalty=0)
    with pytest.raises(TypeError, match="zeta"):
        spline_energy_path(a, b, 4, 3.0)
