"""Oracles on realizable data, the bandit equivalence, the mirror step, caching, the env, bad inputs."""

import gymnasium as gym
import numpy as np
import pytest

from icml26.opo_cmdp import (
    OPOCMAB,
    OPOCMDP,
    ContextualLayeredMDP,
    FiniteDynamicsClass,
    FiniteFunctionClass,
    GreedyPlugIn,
    OptimalPolicy,
    evaluate_policy,
    least_squares_oracle,
    log_loss_oracle,
    make_classes,
    occupancy,
    run,
)
from icml26.opo_cmdp.experiment import QUICK, _cmab_check


@pytest.fixture
def small():
    env = ContextualLayeredMDP(n_layers=2, n_states=2, n_actions=2, context_dim=3, context_pool=8, seed=0)
    F, P, info = make_classes(env, n_decoys=5, seed=0)
    return env, F, P, info


def _covering_data(env):
    """Every (context, h, s, a) once with the noiseless mean loss and the most likely next state."""
    f, p = env.true_model(env.contexts)
    rows = {k: [] for k in ("context", "h", "s", "a", "loss", "next_state")}
    for i, c in enumerate(env.contexts):
        for h in range(env.n_layers):
            for s in range(env.n_states):
                for a in range(env.n_actions):
                    for k, v in zip(
                        rows,
                        (c, h, s, a, f[i, h, s, a], -1 if h + 1 == env.n_layers else int(np.argmax(p[i, h, s, a]))),
                    ):
                        rows[k].append(v)
    return {k: np.array(v) for k, v in rows.items()}


def test_oracles_recover_truth_on_realizable_covering_data(small):
    env, F, P, info = small
    data = _covering_data(env)
    assert least_squares_oracle(F, data) == info["truth_index"]
    # log loss on many sampled transitions: the truth maximises the likelihood
    rng = np.random.default_rng(0)
    _, p = env.true_model(env.contexts)
    n = 4000
    i, s, a = rng.integers(8, size=n), rng.integers(2, size=n), rng.integers(2, size=n)
    nxt = np.array([rng.choice(2, p=p[ii, 0, ss, aa]) for ii, ss, aa in zip(i, s, a)])
    tr = {"context": env.contexts[i], "h": np.zeros(n, int), "s": s, "a": a, "next_state": nxt}
    k = log_loss_oracle(P, tr)
    pred = P.predict(env.contexts)
    # the pick is the truth, or a decoy that copies the truth on every covered (h=0) triple (a true tie)
    np.testing.assert_array_equal(pred[k][:, 0], pred[info["truth_index"]][:, 0])
    assert all(k <= j for j in range(len(P)) if np.array_equal(pred[j][:, 0], pred[info["truth_index"]][:, 0]))


def test_oracle_ties_go_to_lowest_index(small):
    env, F, _, _ = small
    twin = FiniteFunctionClass([F.params[-1], F.params[-1]], F.fn, context_dim=3)
    data = _covering_data(env)
    assert least_squares_oracle(twin, data) == 0
    empty = {k: v[:0] for k, v in data.items()}
    assert least_squares_oracle(F, empty) == 0


def test_bandit_equivalence_check_is_exact():
    assert _cmab_check(QUICK, 0) <= 1e-12


def test_cmab_is_the_one_step_opocmdp(small):
    env = ContextualLayeredMDP(1, 1, 3, 3, 5, seed=1)
    F, _, _ = make_classes(env, n_decoys=3, seed=1)
    a1, a2 = OPOCMAB(F, 3, eta=0.2), OPOCMDP(F, None, 1, 1, 3, eta=0.2, epoch_schedule="every")
    rng = np.random.default_rng(0)
    for _ in range(30):
        c = env.contexts[rng.integers(5)]
        p = a1.policy(c)
        np.testing.assert_array_equal(p, a2.policy(c)[0, 0])
        a, loss = int(rng.integers(3)), float(rng.random() < 0.5)
        a1.observe(c, a, loss)
        a2.observe(c, [(0, 0, a, loss, -1)])


def test_mirror_step_lowers_the_larger_q_action_and_bonus_range():
    F = FiniteFunctionClass([0], lambda p, C: np.tile([[[[0.9, 0.1]]]], (len(C), 1, 1, 1)))
    ag = OPOCMAB(F, 2, eta=1.0, gamma=0.0)
    c = np.zeros(2)
    ag.observe(c, 0, 1.0)
    p = ag.policy(c)
    assert p[0] < 0.5 < p[1]
    ag2 = OPOCMAB(F, 2, eta=1.0, gamma=1.0)
    for _ in range(20):
        ag2.observe(c, 0, 1.0)
    assert all(0.0 <= b <= 1.0 for b in ag2.bonus_trace)


def test_late_context_replay_equals_batched_tracking(small):
    env, F, P, _ = small
    tracked, lazy = OPOCMDP(F, P, 2, 2, 2, eta=0.3), OPOCMDP(F, P, 2, 2, 2, eta=0.3)
    tracked.track(env.contexts)
    rng = np.random.default_rng(0)
    for _ in range(15):
        c = env.contexts[rng.integers(4)]  # the lazy agent never sees contexts 4..7 before the end
        s1 = int(rng.integers(2))  # a continuous trajectory: layer 1 starts where layer 0 went
        traj = [
            (0, 0, int(rng.integers(2)), float(rng.random() < 0.3), s1),
            (1, s1, int(rng.integers(2)), 0.0, -1),
        ]
        tracked.observe(c, traj)
        lazy.observe(c, traj)
    for c in env.contexts:
        np.testing.assert_allclose(lazy.policy(c), tracked.policy(c), rtol=0, atol=1e-14)


def test_env_is_a_gymnasium_env_and_run_is_deterministic(small):
    env, F, P, _ = small
    assert isinstance(env, gym.Env)
    s, info = env.reset(seed=0)
    assert s == 0 and info["h"] == 0 and info["context"].shape == (3,)
    s2, r, term, trunc, inf = env.step(1)
    assert r == -inf["loss"] and not term and not trunc
    a = run(env, GreedyPlugIn(F, P, 2, 2, 2), 40, seed=3)
    b = run(env, GreedyPlugIn(F, P, 2, 2, 2), 40, seed=3)
    np.testing.assert_array_equal(a.cum_regret, b.cum_regret)
    opt = run(env, OptimalPolicy(env), 40, seed=3)
    assert np.max(np.abs(opt.per_episode_gap)) == 0.0
    assert np.all(a.per_episode_gap >= -1e-12)


def test_bad_inputs_name_the_argument(small):
    env, F, P, _ = small
    ag = OPOCMDP(F, P, 2, 2, 2, eta=0.1)
    with pytest.raises(ValueError, match="context_dim"):
        ag.policy(np.zeros(5))
    with pytest.raises(ValueError, match="context"):
        ag.policy(np.zeros((2, 3)))
    wrong = FiniteFunctionClass([0], lambda p, C: np.full((len(C), 2, 2, 3), 0.5), context_dim=3)
    with pytest.raises(ValueError, match=r"F predicts shape"):
        OPOCMDP(wrong, P, 2, 2, 2, eta=0.1).policy(env.contexts[0])
    bad_range = FiniteFunctionClass([0], lambda p, C: np.full((len(C), 2, 2, 2), 1.5))
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        bad_range.predict(env.contexts)
    not_dist = FiniteDynamicsClass([0], lambda p, C: np.full((len(C), 2, 2, 2, 2), 0.7))
    with pytest.raises(ValueError, match="probability"):
        not_dist.predict(env.contexts)
    with pytest.raises(ValueError, match="eta"):
        OPOCMDP(F, P, 2, 2, 2)
    with pytest.raises(ValueError, match="n_states"):
        OPOCMDP(F, P, 2, 0, 2, eta=0.1)
    with pytest.raises(ValueError, match="epoch_schedule"):
        OPOCMDP(F, P, 2, 2, 2, eta=0.1, epoch_schedule="weekly")
    with pytest.raises(TypeError, match="F must be"):
        OPOCMDP("F", P, 2, 2, 2, eta=0.1)
    with pytest.raises(ValueError, match="context_pool"):
        ContextualLayeredMDP(context_pool=0)
    with pytest.raises(ValueError, match="mislead"):
        make_classes(env, mislead="some")


def _random_episodes(agent, contexts, n_eps, seed, H, S, A):
    rng = np.random.default_rng(seed)
    for _ in range(n_eps):
        c = contexts[rng.integers(len(contexts))]
        pi, s, traj = agent.policy(c), 0, []
        for h in range(H):
            a = int(rng.choice(A, p=pi[h, s] / pi[h, s].sum()))
            s2 = int(rng.integers(S)) if h + 1 < H else -1
            traj.append((h, s, a, float(rng.random()), s2))
            s = s2
        agent.observe(c, traj)


@pytest.mark.parametrize("gamma, sign", [(0.3, 1.0), (1.0, -1.0), (0.0, 1.0)])
def test_fast_replay_equals_the_step_by_step_rule(gamma, sign):
    """The replay for contexts first seen late (issue 52 item 5) is the rule of ``_step``, episode by episode: on
    the full lock, 150 episodes (8 epochs), bonus on, flipped and off."""
    from icml26.opo_cmdp.experiment import FULL, _make

    env, F, P, _ = _make(FULL, 0)
    H, S, A = env.n_layers, env.n_states, env.n_actions
    ag = OPOCMDP(F, P, H, S, A, T=300, eta_scale=1000.0, gamma=gamma, bonus_sign=sign)
    _random_episodes(ag, env.contexts[:5], 150, 1, H, S, A)
    rows = np.arange(8)
    ag.track(env.contexts[:8])  # contexts 5..7 first seen now: replayed
    lp, n = np.full((8, H, S, A), -np.log(A)), np.zeros((8, H, S, A))
    for j, (kf, kp) in enumerate(ag.history, start=1):
        lp, n, _ = ag._step(lp, n, rows, j, kf, kp)
    fast_lp, fast_n = ag._replay(np.full((8, H, S, A), -np.log(A)), np.zeros((8, H, S, A)), rows)
    np.testing.assert_allclose(np.exp(fast_lp), np.exp(lp), rtol=0, atol=1e-10)
    np.testing.assert_allclose(fast_n, n, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(ag.policy(env.contexts[6]), np.exp(lp[6]), rtol=0, atol=1e-10)


def _own_episodes(agent, env, contexts, n_eps, seed):
    """The agent playing its own policy on the true lock (losses and moves drawn from the true model)."""
    rng = np.random.default_rng(seed)
    f, P = env.true_model(contexts)
    H, S, A = env.n_layers, env.n_states, env.n_actions
    for _ in range(n_eps):
        i = int(rng.integers(len(contexts)))
        pi, s, traj = agent.policy(contexts[i]), 0, []
        for h in range(H):
            a = int(rng.choice(A, p=pi[h, s] / pi[h, s].sum()))
            s2 = int(rng.choice(S, p=P[i, h, s, a] / P[i, h, s, a].sum())) if h + 1 < H else -1
            traj.append((h, s, a, float(rng.random() < f[i, h, s, a]), s2))
            s = s2
        agent.observe(contexts[i], traj)


@pytest.mark.parametrize("seed", [3, 11])
def test_replay_equals_the_step_by_step_rule_on_the_whole_grid(seed):
    """Referee pass 3: v3d's reorganised kernel moved policies by up to 1.0 at eta_scale >= 3e4 and by 1e-5 at
    (1e4, 0.3) with T = 1000.  On every point of the full preset's grid plus 3e4 and 1e5, the agent's own play for
    T = 2000 episodes, contexts first seen at the end are replayed to the step-by-step rule's policies (run on a
    larger batch) to 1e-10 (the measured difference is exactly 0: the replay is ``_step``'s own arithmetic)."""
    from icml26.opo_cmdp.experiment import FULL, _make

    env, F, P, _ = _make(FULL, seed)
    H, S, A = env.n_layers, env.n_states, env.n_actions
    T, ctx = 2000, env.contexts[:8]
    for eta_scale, gamma in FULL.opo_grid + ((3e4, 0.3), (1e5, 1.0)):
        ag = OPOCMDP(F, P, H, S, A, T=T, eta_scale=eta_scale, gamma=gamma)
        _own_episodes(ag, env, ctx[:5], T, seed)
        rows = ag.track(ctx)  # contexts 5..7 first seen now: replayed on a batch of 3
        lp, n = np.full((8, H, S, A), -np.log(A)), np.zeros((8, H, S, A))
        for j, (kf, kp) in enumerate(ag.history, start=1):  # the rule from scratch, on a batch of 8
            lp, n, _ = ag._step(lp, n, rows, j, kf, kp)
        for i in range(8):
            np.testing.assert_allclose(ag.policy(ctx[i]), np.exp(lp[i]), rtol=0, atol=1e-10, err_msg=f"{eta_scale}")


def test_contexts_the_models_cannot_tell_apart_share_one_state(monkeypatch):
    """The per-context cache: a context first seen late whose predicted losses and dynamics equal a tracked
    context's under every oracle pick so far takes that context's state; with the cache off (every key unique)
    the replay gives the same policies."""
    from icml26.opo_cmdp.experiment import FULL, _make

    env, F, P, _ = _make(FULL, 0)
    H, S, A = env.n_layers, env.n_states, env.n_actions
    fresh = np.random.default_rng(5).normal(size=(60, env.context_dim))

    def play(agent):
        _random_episodes(agent, env.contexts[:3], 40, 2, H, S, A)
        return np.array([agent.policy(c) for c in fresh])

    cached = OPOCMDP(F, P, H, S, A, T=100, eta_scale=300.0, gamma=0.3)
    replays = []
    orig = OPOCMDP._replay
    monkeypatch.setattr(
        OPOCMDP, "_replay", lambda self, lp, n, rows: replays.append(len(rows)) or orig(self, lp, n, rows)
    )
    got = play(cached)
    assert sum(replays) < len(fresh)  # some fresh contexts were served by the cache
    monkeypatch.setattr(OPOCMDP, "_model_key", lambda self, row, pairs: str(row).encode())
    plain = OPOCMDP(F, P, H, S, A, T=100, eta_scale=300.0, gamma=0.3)
    np.testing.assert_allclose(got, play(plain), rtol=0, atol=1e-10)


@pytest.mark.parametrize("learner", ["opo", "opo_flipped", "opt_greedy", "cmab"])
def test_a_context_first_seen_late_equals_tracking_it_from_the_start(learner):
    """Every per-context learner (state per context updated counterfactually every episode): a context first seen
    after 300 episodes gets exactly the state it would have had if it had been tracked from episode 1 (referee pass
    4: OptimisticGreedy replayed late contexts with OPO-CMDP's mirror step; counts differed by up to 33.7)."""
    from icml26.opo_cmdp import ContextualCombinationLock, OptimisticGreedy, make_lock_classes

    if learner == "cmab":
        env = ContextualLayeredMDP(1, 1, 3, 2, 30, seed=4)
        F, P, _ = make_classes(env, n_decoys=5, seed=4)
        P, dims = None, (1, 1, 3)
    else:
        env = ContextualCombinationLock(4, 3, 3, 2, 30, seed=4)
        F, P, _ = make_lock_classes(env, n_decoys=5, seed=4)
        dims = (4, 3, 3)

    def make():
        if learner == "opt_greedy":
            return OptimisticGreedy(F, P, *dims, gamma=0.5)
        if learner == "cmab":
            return OPOCMAB(F, 3, eta=0.5, gamma=1.0)
        return OPOCMDP(F, P, *dims, eta=2.0, gamma=0.5, bonus_sign=-1.0 if learner == "opo_flipped" else 1.0)

    tracked, lazy = make(), make()
    tracked.track(env.contexts)
    early = env.contexts[:10]  # the lazy learner sees only these before the end
    rng = np.random.default_rng(1)
    H, S, A = dims
    for _ in range(300):
        c = early[int(rng.integers(len(early)))]
        s, traj = 0, []
        for h in range(H):
            s2 = int(rng.integers(S)) if h + 1 < H else -1
            traj.append((h, s, int(rng.integers(A)), float(rng.random() < 0.4), s2))
            s = s2
        for ag in (tracked, lazy):
            _observe(ag, c, traj)
    for c in env.contexts[10:]:
        lp, tp = lazy.policy(c), tracked.policy(c)
        np.testing.assert_array_equal(lp, tp)
        r_l, r_t = lazy.track(c)[0], tracked.track(c)[0]
        np.testing.assert_array_equal(lazy._n[r_l], tracked._n[r_t])


def _observe(agent, c, traj):  # the base class's observe (OPOCMAB's own takes (c, a, loss))
    OPOCMDP.observe(agent, c, traj) if isinstance(agent, OPOCMAB) else agent.observe(c, traj)


def test_update_reusing_its_scratch_arrays_equals_a_fresh_agent_bitwise(small):
    """`_update` keeps scratch arrays per batch shape (`_workspace`): after calls on other inputs and shapes, a
    call must give exactly what a fresh agent's first call gives (a stale entry read back would change the policy)."""
    _, F, P, _ = small
    rng = np.random.default_rng(1)
    H, S, A = 4, 3, 2  # H >= 3: the value recursion's constant row reaches Q

    def inputs(batch):
        logpi = np.log(rng.dirichlet(np.ones(A), size=batch + (H, S)))
        n = 3.0 * rng.random(batch + (H, S, A))
        f = rng.random(batch + (H, S, A))
        p = rng.dirichlet(np.ones(S), size=batch + (H, S, A))
        return logpi, n, f, p

    used = OPOCMDP(F, P, H, S, A, eta=5.0, gamma=0.7, s0=1)
    for batch in [(1,), (3,), (1,), ()]:
        for j in (1, 7):
            used._update(*inputs(batch), j)  # fills and reuses the scratch arrays
        x = inputs(batch)
        got = used._update(*x, 9)
        want = OPOCMDP(F, P, H, S, A, eta=5.0, gamma=0.7, s0=1)._update(*x, 9)
        for g, w in zip(got, want):
            assert np.array_equal(g, w)
        # and the returned occupancy is the textbook one (catches a scratch array both agents get wrong alike)
        np.testing.assert_allclose(got[2], occupancy(np.exp(x[0]), x[3], s0=1), rtol=0, atol=1e-12)
        _, Q = evaluate_policy(np.exp(x[0]), np.maximum(0.0, x[2] - got[3]), x[3])  # optimistic losses l~ = f - b
        z = x[0] - 5.0 * Q
        np.testing.assert_allclose(got[0], z - np.log(np.exp(z).sum(-1, keepdims=True)), rtol=0, atol=1e-9)
