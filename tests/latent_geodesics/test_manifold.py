"""Closed forms and invariants of the discrete geodesic calculus on exact constraints."""

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from icml26.latent_geodesics import EuclideanMetric, ImplicitManifold, PullbackMetric, sphere_zeta, torus_zeta
from icml26.latent_geodesics.data import dist_to_arc, sphere_exp, sphere_pair, torus_chart_geodesic, torus_point

S2 = ImplicitManifold(sphere_zeta)


def _pair(deg, seed=0):
    return sphere_pair(math.radians(deg), np.random.default_rng(seed))


def test_sphere_geodesic_on_great_circle_equal_chords_and_energy():
    th = math.radians(120)
    a, b, u = _pair(120)
    for K in (4, 8):
        p = S2.geodesic(a, b, K)
        assert dist_to_arc(p, a, u, th).max() < 1e-5
        chords = np.linalg.norm(np.diff(p, axis=0), axis=1)
        assert np.ptp(chords) < 1e-6
        assert abs(S2.energy(p) - (2 * K * math.sin(th / (2 * K))) ** 2) < 1e-5  # K E^K -> theta^2 as K grows
        assert abs(S2.length(p) - 2 * K * math.sin(th / (2 * K))) < 1e-6


def test_reversing_endpoints_reverses_path():
    a, b, _ = _pair(90, 1)
    assert np.abs(S2.geodesic(b, a, 6)[::-1] - S2.geodesic(a, b, 6)).max() < 1e-5


def test_exp_matches_closed_form_and_exp_log_roundtrip():
    a, b, u = _pair(80, 2)
    v = math.radians(80) * u
    e16 = np.linalg.norm(S2.exp(v, a, 16) - sphere_exp(a, v))
    assert e16 < 3e-3  # O(K^-2): 1.8e-3 at K = 16
    e32 = np.linalg.norm(S2.exp(v, a, 32) - sphere_exp(a, v))
    assert 3.0 < e16 / e32 < 5.0
    assert np.linalg.norm(S2.exp(S2.log(b, a, 16), a, 16) - b) < 3e-3  # exp(log b) = b up to O(K^-2)
    path = S2.exp_path(v, a, 16)
    assert path.shape == (17, 3) and np.abs(np.linalg.norm(path, axis=1) - 1).max() < 1e-10


def test_log_is_the_projected_tangent_vector_in_geomstats_order():
    for deg, seed in ((30, 0), (80, 1), (120, 2)):
        th = math.radians(deg)
        a, b, u = _pair(deg, seed)
        v = S2.log(b, a, 16)  # Log_a(b): the point first, the base point second (geomstats)
        assert abs(v @ a) < 1e-12  # tangent at a
        assert np.linalg.norm(v - th * u) < th**3 / (24 * 16**2) * 1.1 + 1e-9  # only the length's O(K^-2) error
    a, b, u = _pair(80, 1)
    chord = 16 * (S2.geodesic(a, b, 16)[1] - a)
    assert np.linalg.norm(chord - math.radians(80) * u) > 0.04  # the v2 log (the chord) was 4% off


def test_batched_geodesic_exp_log_equal_the_looped_ones():
    rng = np.random.default_rng(5)
    pairs = [sphere_pair(math.radians(d), rng) for d in (40, 70, 100)]
    A = np.array([p[0] for p in pairs])
    B = np.array([p[1] for p in pairs])
    G = S2.geodesic(A, B, 6)
    assert G.shape == (3, 7, 3)
    assert len(S2.last_info_["batch"]) == 3
    for i in range(3):
        assert np.abs(G[i] - S2.geodesic(A[i], B[i], 6)).max() < 1e-10
    V = S2.log(B, A, 8)
    assert V.shape == (3, 3)
    assert np.abs(V[1] - S2.log(B[1], A[1], 8)).max() < 1e-10
    E = S2.exp(V, A, 8)
    assert np.abs(E[2] - S2.exp(V[2], A[2], 8)).max() < 1e-12
    # a single base point broadcast against a batch of vectors
    assert S2.exp(V[:2] * 0.0, A[0], 4).shape == (2, 3)
    assert np.allclose(S2.dist(A, B, 6), [S2.length(g) for g in G])


def test_degenerate_endpoints_are_flagged():
    a = np.array([0.0, 0.0, 1.0])
    with pytest.warns(RuntimeWarning, match="degenerate"):
        p = S2.geodesic(a, -a, 8, init="jump")
    assert S2.energy(p) > 30  # the jump path (optimum 9.74)
    assert S2.last_info_["converged"] is False and S2.last_info_["degenerate"] is True
    b, _, _ = _pair(90)
    S2.geodesic(b, -b, 8, init="jump")  # a random antipodal pair: the solver leaves the jump path
    assert S2.last_info_["converged"] and not S2.last_info_["degenerate"]


def test_non_tangent_vector_is_projected_or_rejected():
    a, _, u = _pair(60, 3)
    v = 0.8 * u + 0.3 * a  # a normal part
    assert np.abs(S2.to_tangent(v, a) - 0.8 * u).max() < 1e-12
    tangent = S2.exp(0.8 * u, a, 8)
    assert np.abs(S2.exp(v, a, 8) - tangent).max() < 1e-10
    assert S2.last_info_["projected_tangent_vec"] == pytest.approx(0.3)
    with pytest.raises(ValueError, match="tangent_vec is not tangent"):
        S2.exp(v, a, 8, non_tangent="raise")


def test_v2_exp_is_kept_as_the_control_scheme():
    a, _, u = _pair(60, 4)
    v = math.radians(60) * u
    old = S2.exp_path(v, a, 16, multiplier="full")[-1]
    assert np.linalg.norm(old - sphere_exp(a, v)) < 5e-3  # exact on an exact constraint


def test_flat_constraint_gives_straight_segment_and_linear_exp():
    A = torch.tensor([[0.0, 0.0, 1.0]], dtype=torch.float64)
    plane = ImplicitManifold(lambda z: z @ A.T - 0.5)
    a, b = np.array([0.0, 0.0, 0.5]), np.array([1.0, 2.0, 0.5])
    p = plane.geodesic(a, b, 5, init="jump")
    assert np.abs(p - np.linspace(a, b, 6)).max() < 1e-5
    v = np.array([0.3, -0.2, 0.0])
    assert np.abs(plane.exp(v, a, 4) - (a + v)).max() < 1e-6


def test_torus_matches_chart_reference():
    T = ImplicitManifold(torus_zeta)
    uva, uvb, K = (1.0, 0.0), (0.0, 1.0), 10
    s = np.linspace(0, 1, K + 1)[:, None]
    init = torus_point(*((1 - s) * np.array(uva) + s * np.array(uvb)).T)
    p = T.geodesic(torus_point(*uva), torus_point(*uvb), K, init=init)
    _, ref = torus_chart_geodesic(uva, uvb, K)
    assert abs(T.energy(p) - ref) / ref < 1e-4


def test_pullback_identity_equals_euclidean_energy_and_gradient():
    rng = np.random.default_rng(0)
    P = torch.as_tensor(rng.normal(size=(6, 3))).requires_grad_(True)
    ident = torch.nn.Identity()
    e1 = ImplicitManifold(sphere_zeta, EuclideanMetric())._energy(P)
    e2 = ImplicitManifold(sphere_zeta, PullbackMetric(ident))._energy(P)
    (g1,) = torch.autograd.grad(e1, P)
    (g2,) = torch.autograd.grad(e2, P)
    assert torch.allclose(e1, e2) and torch.allclose(g1, g2)


def test_lagrangian_gradient_matches_finite_differences():
    rng = np.random.default_rng(1)
    M = ImplicitManifold(sphere_zeta, PullbackMetric(lambda z: torch.tanh(z * 1.3)))
    X = rng.normal(size=(5, 3))
    lam, mu = torch.as_tensor(rng.normal(size=(5, 1))), 7.0

    def L(t):
        c = M._zeta(t)
        return M._energy(t) - (lam * c).sum() + 0.5 * mu * (c**2).sum()

    t = torch.as_tensor(X).requires_grad_(True)
    (g,) = torch.autograd.grad(L(t), t)
    h = 1e-6
    fd = np.zeros_like(X)
    for i in np.ndindex(X.shape):
        e = np.zeros_like(X)
        e[i] = h
        fd[i] = (float(L(torch.as_tensor(X + e))) - float(L(torch.as_tensor(X - e)))) / (2 * h)
    assert np.abs(fd - g.numpy()).max() < 1e-5


@settings(max_examples=8, deadline=None)
@given(deg=st.floats(20, 140), seed=st.integers(0, 10_000), K=st.integers(3, 8))
def test_property_sphere_geodesic_is_great_circle(deg, seed, K):
    th = math.radians(deg)
    a, b, u = sphere_pair(th, np.random.default_rng(seed))
    p = S2.geodesic(a, b, K)
    assert dist_to_arc(p, a, u, th).max() < 1e-4
    assert abs(S2.length(p) - th) / th < th**2 / (24 * K * K) * 1.05 + 1e-6


def test_bad_inputs():
    a, b, _ = _pair(60)
    with pytest.raises(ValueError, match="n_steps"):
        S2.geodesic(a, b, 1)
    with pytest.raises(ValueError, match="n_steps"):
        S2.exp(b - a, a, 1)
    with pytest.raises(ValueError, match="off the manifold"):
        ImplicitManifold(sphere_zeta, off_manifold="raise").geodesic(1.5 * a, b, 4)
    with pytest.raises(ValueError, match="init"):
        S2.geodesic(a, b, 4, init="knn")
    with pytest.raises(ValueError, match="init"):
        S2.geodesic(a, b, 4, init=np.zeros((3, 3)))
    with pytest.raises(ValueError, match="off_manifold"):
        ImplicitManifold(sphere_zeta, off_manifold="clip")
    with pytest.raises(TypeError, match="zeta"):
        ImplicitManifold(3.0)
    with pytest.raises(ValueError, match="alpha"):
        S2.geodesic(a, b, 4, alpha=1.0)
    with pytest.raises(ValueError, match="multiplier"):
        S2.exp(b - a, a, 4, multiplier="x")
    with pytest.raises(ValueError, match="non_tangent"):
        S2.exp(b - a, a, 4, non_tangent="x")
    with pytest.raises(ValueError, match="initial_point"):
        S2.geodesic(np.zeros((2, 2, 3)), b, 4)
    with pytest.raises(ValueError, match="batches differ"):
        S2.geodesic(np.zeros((2, 3)), np.zeros((3, 3)), 4)
    with pytest.raises(ValueError, match="tangent_vec"):
        S2.exp(np.ones(2), a, 4)
    with pytest.raises(ValueError, match="spacing_tol"):
        S2.geodesic(a, b, 4, spacing_tol=0)
    with pytest.raises(ValueError, match="rank_tol"):
        ImplicitManifold(sphere_zeta, rank_tol=1.5)
    with pytest.raises(ValueError, match="dim must be <= the codes' latent dimension 3"):
        ImplicitManifold(sphere_zeta, codes=np.eye(3), dim=5)
    with pytest.raises(ValueError, match="max_outer"):
        S2.geodesic(a, b, 4, max_outer=0)
    with pytest.raises(ValueError, match="endpoint_tol"):
        ImplicitManifold(sphere_zeta, endpoint_tol=0)
    with pytest.raises(ValueError, match="endpoint_tol"):
        ImplicitManifold(sphere_zeta, endpoint_tol="huge")


def test_off_manifold_endpoint_is_projected():
    a, b, _ = _pair(60)
    with pytest.warns(RuntimeWarning, match="initial_point is off the manifold"):
        p = S2.geodesic(1.3 * a, b, 4)
    assert abs(np.linalg.norm(p[0]) - 1) < 1e-5 and np.abs(p[0] - a).max() < 1e-4
    assert S2.last_info_["projected_endpoints"] == ["initial_point"]
    assert abs(S2.last_info_["endpoint_shift"][0] - 0.3) < 1e-4


def test_endpoint_tol_auto_scales_with_the_codes():
    """v3b referee: an absolute endpoint_tol = 0.05 silently moved code endpoints whose |zeta| is about 0.1 (a learned
    zeta on codes of radius 5).  "auto" is the largest |zeta| over the codes: a code stays where it is, with no
    warning; a point farther off than every code is projected with a warning; an explicit 0.05 still moves it."""
    import warnings

    R = 3.0
    rng = np.random.default_rng(5)
    Z = rng.normal(size=(200, 3))
    Z = R * Z / np.linalg.norm(Z, axis=1, keepdims=True) * (1 + 0.01 * rng.normal(size=(200, 1)))
    zeta = lambda z: sphere_zeta(z, radius=R)  # noqa: E731  (|zeta| on the codes about 2 R^2 0.01 = 0.18)
    M = ImplicitManifold(zeta, codes=Z)
    assert M.endpoint_tolerance() == pytest.approx(M.violation(Z).max()) and M.endpoint_tolerance() > 0.05
    i, j = int(np.argmax(M.violation(Z))), 0
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no warning: the codes are kept
        p = M.geodesic(Z[i], Z[j], 4, init="linear")
    assert np.array_equal(p[0], Z[i]) and np.array_equal(p[-1], Z[j])
    assert "projected_endpoints" not in M.last_info_
    with pytest.warns(RuntimeWarning, match="endpoint_tol"):
        M.geodesic(1.2 * Z[i], Z[j], 4, init="linear")
    assert M.last_info_["projected_endpoints"] == ["initial_point"]
    with pytest.warns(RuntimeWarning, match="endpoint_tol = 0.05"):
        ImplicitManifold(zeta, codes=Z, endpoint_tol=0.05).geodesic(Z[i], Z[j], 4, init="linear")


def _plane_in_r8(scale_last: float):
    """A 2-d plane in R^8 as the zero set of an 8-output zeta whose normal singular values are 1 (x5) and
    ``scale_last``: the shape of the learned S^2-in-R^8 Jacobian (its sixth normal value was 0.45 x the largest)."""
    Q = np.linalg.qr(np.random.default_rng(3).normal(size=(8, 8)))[0]
    D = np.diag([1, 1, 1, 1, 1, scale_last, 0, 0]).astype(float)
    A = torch.as_tensor(Q @ D @ Q.T)
    return A, Q[:, 6:]


def test_normal_rank_from_the_known_dimension_in_codimension_six():
    cls = ImplicitManifold
    A, T = _plane_in_r8(0.45)
    zeta = lambda z: z @ A.T  # noqa: E731
    by_tol = cls(zeta)  # rank_tol 0.5 drops the 0.45 normal direction
    by_dim = cls(zeta, dim=2)
    p = np.zeros(8)
    assert by_tol.normal_rank(p) == 5 and by_dim.normal_rank(p) == 6
    v = T @ np.array([0.3, -0.2])
    assert np.abs(by_dim.exp(v, p, 8) - v).max() < 1e-8  # a flat manifold: exp is p + v
    with pytest.raises(ValueError, match="dim"):
        cls(zeta, dim=-1)
    with pytest.raises(ValueError, match="dim"):
        cls(zeta, dim=9).normal_basis(p)


def test_float32_zeta_gets_a_named_type_error():
    lin = torch.nn.Linear(3, 1)  # float32 parameters
    M = ImplicitManifold(lambda z: lin(z))
    with pytest.raises(TypeError, match="zeta must accept float64"):
        M.violation(np.ones(3))
    M2 = ImplicitManifold(lambda z: sphere_zeta(z).float())
    with pytest.raises(TypeError, match="zeta must return a float64"):
        M2.violation(np.ones(3))


def test_a_path_far_from_every_code_is_flagged_not_converged():
    """A learned zeta can have zeros away from the data; a path there is reported converged=False (off_codes)."""
    a, b, u = _pair(60, 5)
    th = math.radians(60)
    near = np.array([sphere_exp(a, t * u) for t in np.linspace(0, th, 200)])  # codes along the arc
    M = ImplicitManifold(sphere_zeta, codes=near)
    M.geodesic(a, b, 8, init="linear", tol=1e-5, tol_constraint=1e-6)
    assert M.last_info_["converged"] and not M.last_info_["off_codes"]
    far = near[:20]  # codes only near the start: the nodes of the true geodesic are far from every code
    M = ImplicitManifold(sphere_zeta, codes=far)
    with pytest.warns(RuntimeWarning, match="off_codes_tol"):
        M.geodesic(a, b, 8, init="linear", tol=1e-5, tol_constraint=1e-6)
    assert M.last_info_["off_codes"] and M.last_info_["converged"] is False
    assert ImplicitManifold(sphere_zeta, codes=far, off_codes_tol=None).geodesic(a, b, 8, init="linear") is not None
    with pytest.raises(ValueError, match="off_codes_tol"):
        ImplicitManifold(sphere_zeta, off_codes_tol=0)


def test_geodesic_as_a_callable_of_time():
    a, b, _ = _pair(70, 6)
    nodes = S2.geodesic(a, b, 8)
    f = S2.geodesic(a, b, 8, as_callable=True)
    assert np.abs(f(np.linspace(0, 1, 9)) - nodes).max() < 1e-9
    assert np.abs(f(0.5) - nodes[4]).max() < 1e-9 and f(0.0625).shape == (3,)
    assert np.abs(f(0.0625) - (nodes[0] + nodes[1]) / 2).max() < 1e-9
    fb = S2.geodesic(np.stack([a, b]), np.stack([b, a]), 8, as_callable=True)
    assert fb(np.array([0.0, 1.0])).shape == (2, 2, 3) and np.abs(fb(1.0)[0] - b).max() < 1e-9
    with pytest.raises(ValueError, match="t must be"):
        f(1.5)
    with pytest.raises(ValueError, match="as_callable"):
        S2.geodesic(a, b, 8, as_callable="yes")
