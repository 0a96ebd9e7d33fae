"""Spec section 7: the pure FOCUS functions against hand-written references."""

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from icml26.focus import apply_rules, focus_budget, focus_importance, focus_select, mark_cached, threshold_count


def _importance_loop(q, k, masked, H, Hkv, scale, pool=3):
    M = len(masked)
    total = [0.0] * M
    for h in range(H):
        kv = h // (H // Hkv)
        S = [[scale * float(q[masked[i], h] @ k[masked[j], kv]) for j in range(M)] for i in range(M)]
        for i in range(M):
            pooled = []
            for j in range(M):
                window = [S[i][jj] for jj in range(j - pool // 2, j + pool // 2 + 1) if 0 <= jj < M]
                pooled.append(max(window))
            z = sum(math.exp(x) for x in pooled)
            for j in range(M):
                total[j] += math.exp(pooled[j]) / z
    return total


def test_importance_matches_hand_loop_gqa_and_edges():
    g = torch.Generator().manual_seed(0)
    q, k = torch.randn(5, 2, 4, generator=g), torch.randn(5, 1, 4, generator=g)
    masked = [0, 2, 4]  # only these three enter the scores
    got = focus_importance(q, k, torch.tensor(masked), num_heads=2, num_kv_heads=1, scale=0.5)
    want = _importance_loop(q, k, masked, 2, 1, 0.5)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-5)
    # unmasked tokens do not influence the result
    q2, k2 = q.clone(), k.clone()
    q2[1] += 100.0
    k2[3] -= 50.0
    torch.testing.assert_close(focus_importance(q2, k2, torch.tensor(masked), 2, 1, 0.5), got)
    # each head's softmax rows sum to one: total mass = heads * |M|
    assert float(got.sum()) == pytest.approx(2 * 3, rel=1e-5)


def test_importance_gqa_head_mapping_4_heads_2_kv():
    g = torch.Generator().manual_seed(1)
    q, k = torch.randn(4, 4, 3, generator=g), torch.randn(4, 2, 3, generator=g)
    got = focus_importance(q, k, torch.arange(4), 4, 2, 1.0, pool=1)
    want = _importance_loop(q, k, [0, 1, 2, 3], 4, 2, 1.0, pool=1)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-5)


@pytest.mark.parametrize(
    "m,avg,alpha,want", [(10, 1.0, 1.5, 2), (10, 0.2, 1.5, 2), (10, 3.0, 1.5, 5), (3, 4.0, 2.0, 3), (0, 1, 1.5, 0)]
)
def test_budget_formula(m, avg, alpha, want):
    assert focus_budget(m, avg, alpha) == want


@given(st.integers(0, 64), st.floats(0, 20), st.floats(0.1, 5))
@settings(max_examples=60, deadline=None)
def test_budget_property(m, avg, alpha):
    k = focus_budget(m, avg, alpha)
    assert k == (0 if m == 0 else min(m, max(1, math.ceil(alpha * max(avg, 1.0)))))
    assert focus_budget(m, avg, math.inf) == m


def test_threshold_set_overrides_top_k_only_when_large_enough():
    delta = np.array([0.0, 0.0, 0.0, 0.0, 10.0, 10.0, 10.0])  # mean+std threshold keeps the three 10s
    assert threshold_count(delta, 2) == 3
    assert threshold_count(delta, 4) == 4
    # ties broken toward the left
    delta = torch.tensor([0.0, 1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0])  # 3 above mean+std, below a budget of 4
    sel = focus_select(delta, torch.arange(10, 18), 4, block_progress=20)
    assert sel.tolist() == [10, 11, 12, 13]  # the three 1s, then the leftmost 0


def test_rules_predecessor_keep_all_and_placeholder():
    pos = np.array([0, 1, 2, 5, 6])
    # predecessor: 2 kept -> 1 kept (one pass, not 0); progress beyond so placeholder does nothing
    assert apply_rules(np.array([0, 0, 1, 0, 0], bool), pos, 10).tolist() == [False, True, True, False, False]
    # not adjacent (5 after 2): keeping 5 does not pull 2
    assert apply_rules(np.array([0, 0, 0, 1, 0], bool), pos, 10).tolist() == [False, False, False, True, False]
    # nothing kept -> keep all
    assert apply_rules(np.zeros(5, bool), pos, 10).all()
    # placeholder: positions left of the rightmost kept (6) and past progress (1) are filled
    assert apply_rules(np.array([0, 0, 0, 0, 1], bool), pos, 1).tolist() == [False, False, True, True, True]


def test_focus_select_top_then_rules():
    delta = torch.tensor([0.1, 0.9, 0.2, 0.8, 0.0])
    pos = torch.tensor([0, 1, 2, 3, 4])
    # top-2 = {1, 3}; predecessor adds 0 and 2; progress 4 so no placeholder
    assert focus_select(delta, pos, 2, block_progress=4).tolist() == [0, 1, 2, 3]
    # with progress -1 the placeholder rule changes nothing more here (all left of 3 already kept)
    assert focus_select(delta, pos, 2, block_progress=-1).tolist() == [0, 1, 2, 3]


@given(st.lists(st.floats(-5, 5), min_size=1, max_size=16), st.integers(1, 16), st.integers(-1, 20))
@settings(max_examples=80, deadline=None)
def test_focus_select_properties(vals, target, progress):
    delta = torch.tensor(vals)
    pos = torch.arange(len(vals)) * 2 + 1
    kept = focus_select(delta, pos, target, progress)
    assert len(kept) >= min(target, len(vals))  # at least the budget
    assert set(kept.tolist()) <= set(pos.tolist())
    assert kept.tolist() == sorted(kept.tolist())
    rightmost = int(kept.max())
    missing = [p for p in pos.tolist() if p < rightmost and p > progress and p not in kept.tolist()]
    assert missing == []  # placeholder rule


def test_mark_cached_neighbour_aware():
    M = 9
    toks = torch.tensor([5, M, 5, 5, M, 5])
    unc = torch.ones(6, dtype=torch.bool)
    # 0: right neighbour masked -> stays; 2: right decoded -> cached; 3: right masked -> stays; 5: last -> cached
    assert mark_cached(unc, toks, M).tolist() == [True, True, False, True, True, False]
    # already-cached positions stay cached; masked positions are never cached
    assert not mark_cached(torch.zeros(6, dtype=torch.bool), toks, M).any()


@pytest.mark.parametrize("alpha", [0, -1.0, float("nan"), "1.5", True])
def test_bad_alpha(alpha):
    with pytest.raises(ValueError, match="alpha"):
        focus_budget(4, 1.0, alpha)


def test_bad_inputs_name_argument():
    with pytest.raises(ValueError, match="pool"):
        focus_importance(torch.zeros(2, 2, 2), torch.zeros(2, 1, 2), torch.tensor([0]), 2, 1, 1.0, pool=2)
    with pytest.raises(ValueError, match="num_heads"):
        focus_importance(torch.zeros(2, 3, 2), torch.zeros(2, 2, 2), torch.tensor([0]), 3, 2, 1.0)
    with pytest.raises(ValueError, match="target"):
        focus_select(torch.zeros(3), torch.arange(3), 0, 0)
    with pytest.raises(ValueError, match="strictly increasing"):
        focus_select(torch.zeros(3), torch.tensor([0, 2, 1]), 1, 0)
    with pytest.raises(ValueError, match="num_masked"):
        focus_budget(-1, 1.0, 1.5)


def test_nearest_decoded_distance_hand_made():
    from icml26.focus import nearest_decoded_distance

    # block of 8, decoded positions 2 and 6 (and the prefix at -1): masked 0 1 3 4 5 7
    assert nearest_decoded_distance([0, 1, 3, 4, 5, 7], 8).tolist() == [1, 1, 1, 2, 1, 1]
    # nothing decoded yet: only the prefix counts
    assert nearest_decoded_distance([0, 1, 2, 3], 4).tolist() == [1, 2, 3, 4]
    assert nearest_decoded_distance([], 4).tolist() == []
    with pytest.raises(ValueError, match="masked_positions"):
        nearest_decoded_distance([4], 4)
    with pytest.raises(ValueError, match="block_size"):
        nearest_decoded_distance([0], 0)
