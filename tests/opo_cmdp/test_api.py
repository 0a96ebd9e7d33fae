"""The spec's known-model bound, standard gymnasium wrappers around the lock, and named errors for bad inputs
(referee items 5-7 of issue 52)."""

import numpy as np
import pytest
from gymnasium.wrappers import OrderEnforcing, RecordEpisodeStatistics

from icml26.opo_cmdp import (
    OPOCMAB,
    OPOCMDP,
    ContextualCombinationLock,
    ContextualLayeredMDP,
    FiniteDynamicsClass,
    FiniteFunctionClass,
    make_classes,
    run,
)
from icml26.opo_cmdp.env import dynamics_model, loss_model
from icml26.opo_cmdp.lock import lock_dynamics, lock_losses


def _known(env, kind):
    """|F| = |P| = 1: the true loss and dynamics functions only (the model is known)."""
    if kind == "lock":
        return (
            FiniteFunctionClass([env.true_params], lock_losses, context_dim=env.context_dim),
            FiniteDynamicsClass([env.true_params], lock_dynamics, context_dim=env.context_dim),
        )
    return (
        FiniteFunctionClass([env.true_params["f"]], loss_model, context_dim=env.context_dim),
        FiniteDynamicsClass([env.true_params["P"]], dynamics_model, context_dim=env.context_dim),
    )


@pytest.mark.parametrize(
    "kind, eta_scale",
    [("lock", 1.0), ("lock", 10.0), ("layered", 1.0), ("layered", 10.0)],
)
def test_known_model_regret_bound(kind, eta_scale):
    """Spec: with |F| = |P| = 1 and gamma = 0 OPO-CMDP is policy mirror descent on the true model, and
    R_T <= H (log|A| / eta + eta T H^2 / 2)."""
    env = (
        ContextualCombinationLock(5, 3, 3, 4, 20, seed=3)
        if kind == "lock"
        else ContextualLayeredMDP(3, 3, 3, 4, 20, seed=3)
    )
    F, P = _known(env, kind)
    H, A, T = env.n_layers, env.n_actions, 400
    agent = OPOCMDP(F, P, H, env.n_states, A, T=T, eta_scale=eta_scale, gamma=0.0)
    log = run(env, agent, T, 0)
    bound = H * (np.log(A) / agent.eta + agent.eta * T * H**2 / 2)
    assert 0 < log.cum_regret[-1] <= bound
    assert log.per_episode_gap[-1] < log.per_episode_gap[0]  # mirror descent on the true model improves


def _lock_and_agent():
    env = ContextualCombinationLock(4, 2, 3, 3, 10, seed=1)
    F, P = _known(env, "lock")
    return env, OPOCMDP(F, P, 4, 2, 3, T=50, eta_scale=3.0, gamma=0.3)


@pytest.mark.parametrize("wrapper", [RecordEpisodeStatistics, OrderEnforcing])
def test_run_reads_the_interface_through_standard_wrappers(wrapper):
    env, agent = _lock_and_agent()
    ref_env, ref_agent = _lock_and_agent()
    got = run(wrapper(env), agent, 30, 5)
    want = run(ref_env, ref_agent, 30, 5)
    np.testing.assert_array_equal(got.cum_regret, want.cum_regret)


def test_run_names_a_missing_interface_attribute():
    env, agent = _lock_and_agent()
    wrapped = RecordEpisodeStatistics(env)
    del env.contexts
    with pytest.raises(TypeError, match="contexts"):
        run(wrapped, agent, 3, 0)


@pytest.mark.parametrize(
    "traj, match",
    [
        ([(0, 0, 0, 0.0, 9)], "next_state"),
        ([(0.5, 0, 0, 0.0, 1)], "h must be an integer"),
        ([(0, 0, 1.7, 0.0, 1)], "a must be an integer"),
        ([(0, 0, True, 0.0, 1)], "a must be an integer"),
        ([(0, 0, 0, 0.0, 1), (0, 1, 0, 0.0, 1)], "layer h must be 1"),
        ([(0, 0, 0, 0.0, 1), (2, 1, 0, 0.0, 1)], "layer h must be 1"),
        ([(i % 4 if i < 4 else 0, 0, 0, 0.0, 1) for i in range(7)], "more than n_layers"),
        ([(0, 0, 0, True, 1)], "loss must be a number"),
        ([(0, 0, 0, 0.0)], r"\(h, s, a, loss, next_state\)"),
        ([], "trajectory is empty"),
        ([(0, 0, 0, 0.0, -1)], "-1 exactly at the last layer h=3, got -1 at h=0"),
        ([(0, 0, 0, 0.0, 1), (1, 1, 0, 0.0, 0), (2, 0, 0, 0.0, 1), (3, 1, 0, 0.0, 0)], "exactly at the last layer"),
        ([(0, 1, 0, 0.0, 1)], "s0=0 at h=0, got 1"),
        ([(0, 0, 0, 0.0, 1), (1, 0, 0, 0.0, 1)], "previous step's next_state 1, got 0"),
    ],
)
def test_observe_rejects_bad_trajectories(traj, match):
    _, agent = _lock_and_agent()
    with pytest.raises(ValueError, match=match):
        agent.observe(np.zeros(3), traj)


def test_a_continuous_trajectory_is_accepted():
    _, agent = _lock_and_agent()
    agent.observe(np.zeros(3), [(0, 0, 0, 0.0, 1), (1, 1, 0, 0.0, 0), (2, 0, 2, 0.5, 1), (3, 1, 1, 1.0, -1)])
    assert agent.t == 1


def test_a_flattened_observation_gets_a_named_error():
    from gymnasium.wrappers import FlattenObservation

    env, agent = _lock_and_agent()
    with pytest.raises(TypeError, match="obs must be a mapping .* FlattenObservation"):
        run(FlattenObservation(env), agent, 3, 0)


def test_named_errors_for_bad_arguments():
    env, agent = _lock_and_agent()
    F, P = _known(env, "lock")
    with pytest.raises(ValueError, match="s0"):
        OPOCMDP(F, P, 4, 2, 3, T=50, s0=1.5)
    with pytest.raises(ValueError, match="s0"):
        OPOCMDP(F, P, 4, 2, 3, T=50, s0=True)
    with pytest.raises(ValueError, match="gamma"):
        OPOCMDP(F, P, 4, 2, 3, T=50, gamma="1")
    with pytest.raises(ValueError, match="eta_scale"):
        OPOCMDP(F, P, 4, 2, 3, T=50, eta_scale="3")
    with pytest.raises(ValueError, match="finite"):
        agent.policy(np.full(3, np.nan))
    with pytest.raises(ValueError, match="key_loss"):
        ContextualCombinationLock(key_loss=True)
    env.reset(seed=0)
    for bad in (1.7, True, "1"):
        with pytest.raises(ValueError, match="action must be an integer"):
            env.step(bad)
    env.step(np.int64(1))  # numpy integers are integers
    small = ContextualLayeredMDP(1, 1, 3, 3, 5, seed=0)
    Fb, _, _ = make_classes(small, n_decoys=2, seed=0)
    bandit = OPOCMAB(Fb, 3)
    with pytest.raises(ValueError, match="action must be an integer"):
        bandit.observe(np.zeros(3), 1.5, 0.0)


class _Alternating:
    """Plays the optimal policy in odd episodes (1, 3, ...) and uniform play in even ones: its policy changes with
    every ``observe``, so charging an episode the regret of any policy but the one it was played with shows."""

    oracle_calls = 0

    def __init__(self, env):
        self.env, self.t = env, 0
        self.shape = (env.n_layers, env.n_states, env.n_actions)

    def policy(self, context):
        if self.t % 2:
            return np.full(self.shape, 1.0 / self.shape[-1])
        from icml26.opo_cmdp import optimal_policy

        f, P = self.env.true_model(np.asarray(context)[None])
        return optimal_policy(f, P)[0][0]

    def observe(self, context, trajectory):
        self.t += 1


def test_each_episode_is_charged_the_policy_it_was_played_with():
    """Referee pass 4's mutant (episode t charged pi_{t+1}, the policy after observe) passed every test: an agent
    that alternates optimal and uniform play must be charged 0 exactly in episodes 1, 3, ... and > 0 in 2, 4, ..."""
    env = ContextualCombinationLock(4, 2, 3, 3, 10, seed=1)
    gaps = run(env, _Alternating(env), 20, 0).per_episode_gap
    assert np.all(np.abs(gaps[0::2]) < 1e-12)
    assert np.all(gaps[1::2] > 1e-3)


class _Float32Context:
    """The lock with its context observed the gymnasium way, a float32 Box over the float64 pool."""

    def __init__(self, env):
        self.env = env
        self.contexts, self.true_model, self.n_actions = env.contexts, env.true_model, env.n_actions

    def _cast(self, obs):
        return {**obs, "context": np.asarray(obs["context"], dtype=np.float32)}

    def reset(self, seed=None):
        obs, info = self.env.reset(seed=seed)
        return self._cast(obs), info

    def step(self, a):
        obs, r, term, trunc, info = self.env.step(a)
        return self._cast(obs), r, term, trunc, info


def test_run_matches_a_float32_context_to_the_float64_pool():
    """Referee pass 4: a float32 context Box over a float64 pool was rejected ("must be one of env.contexts"); it is
    matched after casting the pool to the observation's dtype, and the agent gets the pool's own vector."""
    env, agent = _lock_and_agent()
    ref_env, ref_agent = _lock_and_agent()
    got = run(_Float32Context(env), agent, 30, 5)
    np.testing.assert_array_equal(got.cum_regret, run(ref_env, ref_agent, 30, 5).cum_regret)
    bad_env, bad_agent = _lock_and_agent()
    bad_env.contexts = bad_env.contexts + 1e-12  # distinct in float64, equal to others after the float32 cast
    bad_env.contexts = np.vstack([bad_env.contexts, bad_env.contexts[:1] + 1e-12])
    with pytest.raises(ValueError, match="float32"):
        run(_Float32Context(bad_env), bad_agent, 5, 5)


def test_run_raises_on_a_truncated_episode():
    """Referee pass 4: ``TimeLimit(env, 2)`` on a horizon of 4 ran silently (``truncated`` ignored)."""
    from gymnasium.wrappers import TimeLimit

    env, agent = _lock_and_agent()
    with pytest.raises(ValueError, match="truncated"):
        run(TimeLimit(env, max_episode_steps=2), agent, 5, 0)


def test_floor_learners_and_statistics_name_their_bad_arguments_and_take_numpy_scalars():
    """The fifth referee's bad-input probes: each error names its argument; numpy scalars are numbers."""
    from icml26.opo_cmdp.baselines import ExploreFirstFloor, LinearFloor
    from icml26.opo_cmdp.experiment import QUICK, _make, floor_level, rate_ratio

    env = _make(QUICK, 0)[0]
    for bad in (1.5, -0.1, "0.1", True):
        with pytest.raises(ValueError, match="floor"):
            floor_level(env, bad)
    assert floor_level(env, np.float32(0.0)) == pytest.approx(0.0, abs=1e-12)
    for bad in ("0.1", 0.0, 1.5, None):
        with pytest.raises(ValueError, match="floor"):
            LinearFloor(object(), floor=bad)
    assert ExploreFirstFloor(env, 10, floor=np.float32(0.1)).floor == pytest.approx(0.1)
    g = np.r_[np.ones(8), 0.5 * np.ones(8)]
    assert rate_ratio(g, min_regret=np.float32(1e-3)) == pytest.approx(0.5)
    with pytest.raises(ValueError, match="min_regret"):
        rate_ratio(g, min_regret=True)
    with pytest.raises(ValueError, match="seed"):
        run(env, LinearFloor(object()), 5, seed=-1)
