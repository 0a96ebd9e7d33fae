"""The combination lock: gymnasium's checker on the Dict observation, the truth's optimum follows the key, the
decoys make leaving look best, run() on both envs, the new arms and their bad inputs."""

import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from icml26.opo_cmdp import (
    OPOCMDP,
    ContextualCombinationLock,
    ContextualLayeredMDP,
    GreedyPlugIn,
    LinearFloor,
    OptimalPolicy,
    OptimisticGreedy,
    UniformPolicy,
    make_classes,
    make_lock_classes,
    optimal_policy,
    run,
)
from icml26.opo_cmdp.experiment import FULL, Config, floor_level, late_share, rate_ratio, slope, window_ratio


@pytest.fixture
def lock():
    env = ContextualCombinationLock(n_layers=4, n_states=3, n_actions=3, context_dim=3, context_pool=10, seed=0)
    F, P, info = make_lock_classes(env, n_decoys=5, seed=0)
    return env, F, P, info


def test_check_env_passes_and_the_observation_carries_context_and_layer(lock):
    env = lock[0]
    check_env(env, skip_render_check=True)
    obs, info = env.reset(seed=1)
    assert set(obs) == {"state", "layer", "context"} and obs["layer"] == 0 and obs["state"] == 0
    assert env.observation_space.contains(obs)
    np.testing.assert_array_equal(obs["context"], info["context"])
    obs2, r, term, trunc, step_info = env.step(0)
    assert obs2["layer"] == 1 and r == -step_info["loss"] and not term and not trunc


def test_truth_follows_the_key_and_decoys_make_leaving_best(lock):
    env, F, P, info = lock
    f, p = env.true_model(env.contexts)
    pi, V, _ = optimal_policy(f, p)
    fd = F.predict(env.contexts)[0]  # decoy 0: the truth but for the prize
    pid, Vd, _ = optimal_policy(fd, p)
    H = env.n_layers
    np.testing.assert_allclose(V[:, 0, 0], 0.25 * (H - 1))  # key all the way: key_loss per step, prize 0
    assert np.all(pid[:, 0, 0, :].argmax(-1) != pi[:, 0, 0, :].argmax(-1))  # the decoy leaves at the first step
    np.testing.assert_allclose(Vd[:, 0, 0], 0.1 + 0.15 * (H - 2) + 1.0)
    assert len(F) == len(P) == 6 and info["truth_index"] == 5
    np.testing.assert_array_equal(F.predict(env.contexts)[-1], f)


def test_greedy_is_stuck_and_optimistic_learners_find_the_prize(lock):
    env, F, P, _ = lock
    g = run(env, GreedyPlugIn(F, P, 4, 3, 3), 300, seed=0)
    assert window_ratio(g.per_episode_gap) > 0.99 and slope(g.cum_regret, 0.25) > 0.95
    opo = run(env, OPOCMDP(F, P, 4, 3, 3, T=300, eta_scale=10), 300, seed=0)
    og = run(env, OptimisticGreedy(F, P, 4, 3, 3), 300, seed=0)
    assert opo.cum_regret[-1] < 0.6 * g.cum_regret[-1] and og.cum_regret[-1] < 0.6 * g.cum_regret[-1]


def test_run_accepts_both_observation_styles_and_is_deterministic(lock):
    env, F, P, _ = lock
    a = run(env, OPOCMDP(F, P, 4, 3, 3, eta=0.1), 30, seed=2)
    b = run(env, OPOCMDP(F, P, 4, 3, 3, eta=0.1), 30, seed=2)
    np.testing.assert_array_equal(a.cum_regret, b.cum_regret)
    assert np.max(np.abs(run(env, OptimalPolicy(env), 20, seed=0).per_episode_gap)) == 0.0
    old = ContextualLayeredMDP(2, 2, 2, 3, 5, seed=0)
    F2, P2, _ = make_classes(old, n_decoys=3, seed=0)
    assert np.all(run(old, GreedyPlugIn(F2, P2, 2, 2, 2), 20, seed=0).per_episode_gap >= -1e-12)
    with pytest.raises(TypeError, match="env must provide"):
        run(object(), UniformPolicy(2, 2, 2), 5, seed=0)
    with pytest.raises(TypeError, match="agent must provide"):
        run(env, object(), 5, seed=0)


def test_linear_floor_keeps_a_share_of_uniform_play_and_window_ratio(lock):
    env, F, P, _ = lock
    ag = LinearFloor(OptimalPolicy(env), floor=0.3)
    pi = ag.policy(env.contexts[0])
    assert np.all(pi >= 0.1 - 1e-12) and np.allclose(pi.sum(-1), 1.0)
    log = run(env, LinearFloor(OptimalPolicy(env), floor=0.3), 200, seed=0)
    assert 0.8 < window_ratio(log.per_episode_gap) < 1.25  # a constant floor: per-episode regret does not fall
    assert window_ratio(1.0 / np.sqrt(np.arange(1, 10_001))) == pytest.approx(2**-0.5, rel=0.02)


def test_linear_floor_fails_the_sublinearity_bars_by_construction(lock):
    """The floor's late per-episode regret is at least ``floor_level`` (the optimal policy mixed with uniform play)
    whatever its own policy learned: its late level exceeds the level claim's bar and, once its own policy has
    converged, its rate ratio is 1 (above the rate claim's bar)."""
    env, F, P, _ = lock
    c = floor_level(env, 0.05)
    g = run(env, LinearFloor(OptimalPolicy(env), floor=0.05), 400, seed=0).per_episode_gap
    assert c > 0 and np.allclose(g, c)  # the lock's structure is the same in every context: a constant per episode
    assert late_share(g) == pytest.approx(1.0) and rate_ratio(g) == pytest.approx(1.0)
    assert FULL.rate_threshold < 1.0
    full = _full_lock()  # both floors' late levels sit above the level bar (0.143 and 0.117 on the full lock)
    assert FULL.late_level < floor_level(full, FULL.etc_floor) < floor_level(full, FULL.floor)
    assert _uniform_level(full) > floor_level(full, FULL.floor)


def _full_lock():
    return ContextualCombinationLock(FULL.n_layers, FULL.n_states, FULL.n_actions, FULL.context_dim, 20, seed=0)


def _uniform_level(env) -> float:
    from icml26.opo_cmdp.tabular import evaluate_policy, optimal_policy

    f, P = env.true_model(env.contexts)
    _, V, _ = optimal_policy(f, P)
    Vu, _ = evaluate_policy(np.full(f.shape, 1.0 / f.shape[-1]), f, P)
    return float(np.mean(Vu[:, 0, 0] - V[:, 0, 0]))


def test_flipped_bonus_is_pessimistic_and_bad_inputs_name_the_argument(lock):
    env, F, P, _ = lock
    up, down = OPOCMDP(F, P, 4, 3, 3, eta=1.0), OPOCMDP(F, P, 4, 3, 3, eta=1.0, bonus_sign=-1)
    for ag in (up, down):
        ag.track(env.contexts)
    c = env.contexts[0]
    traj = [(0, 0, 0, 0.0, 1), (1, 1, 0, 0.0, 1), (2, 1, 0, 0.0, 1), (3, 1, 0, 1.0, -1)]
    for _ in range(30):
        up.observe(c, traj)
        down.observe(c, traj)
    assert not np.allclose(up.policy(c), down.policy(c))
    with pytest.raises(ValueError, match="bonus_sign"):
        OPOCMDP(F, P, 4, 3, 3, eta=0.1, bonus_sign=0.5)
    with pytest.raises(ValueError, match="floor"):
        LinearFloor(UniformPolicy(4, 3, 3), floor=0.0)
    with pytest.raises(ValueError, match="n_layers"):
        ContextualCombinationLock(n_layers=1)
    with pytest.raises(ValueError, match="key_loss"):
        ContextualCombinationLock(key_loss=1.5)
    with pytest.raises(ValueError, match="n_decoys"):
        make_lock_classes(env, n_decoys=0)
    with pytest.raises(ValueError, match="floor"):
        Config(floor=2.0)
    with pytest.raises(ValueError, match="opo_grid"):
        Config(opo_grid=((1.0,),))
    with pytest.raises(ValueError, match="T must be"):
        Config(T=4)
    with pytest.raises(ValueError, match="first_frac"):
        Config(first_frac=0.0)
    with pytest.raises(ValueError, match="rate_threshold"):
        Config(rate_threshold=1.0)
    with pytest.raises(ValueError, match="late_level"):
        Config(late_level=0.0)
