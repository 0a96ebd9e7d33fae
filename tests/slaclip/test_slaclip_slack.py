"""Closed forms of the slack encoding, the slack indicator and the slot-count rule (spec section 7)."""

import math

import pytest

pytest.importorskip("opacus")  # the [dp] extra

import torch  # noqa: E402
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from icml26.slaclip import TABLE3_NUM_SLOTS, encode_slack, recommended_num_slots, slack_indicator  # noqa: E402


def _prefix_encoding(norm: float, clip: float, k: int) -> list[float]:
    """The paper's construction (Eq. 6-8), written out step by step."""
    width = clip / math.sqrt(k)
    slack = max(clip - norm, 0.0)
    length = math.sqrt(k) * slack
    m = min(math.floor(length / width + 1e-12), k)
    v = [0.0] * k
    for j in range(m):
        v[j] = width
    if m < k:
        v[m] = length - m * width
    return v


@settings(max_examples=60, deadline=None)
@given(
    norms=st.lists(st.floats(0.0, 50.0), min_size=1, max_size=20),
    clip=st.floats(0.05, 20.0),
    k=st.integers(1, 40),
)
def test_closed_form_equals_prefix_construction_and_lemma_bound(norms, clip, k):
    n = torch.tensor(norms, dtype=torch.float64)
    v = encode_slack(n, clip, k)
    assert v.shape == (len(norms), k)
    expected = torch.tensor([_prefix_encoding(x, clip, k) for x in norms], dtype=torch.float64)
    torch.testing.assert_close(v, expected, atol=1e-9, rtol=0)
    # Lemma 3.2: the extended vector [clipped gradient; slots] has norm <= C.
    clipped = torch.clamp(n, max=clip)
    extended = torch.sqrt(clipped**2 + (v**2).sum(1))
    assert bool((extended <= clip * (1 + 1e-9)).all())


@pytest.mark.parametrize("k", [1, 3, 8, 25])
def test_extended_norm_at_the_named_points(k):
    clip = 2.0
    n = torch.tensor([0.0, 0.5 * clip, clip, 3 * clip], dtype=torch.float64)
    v = encode_slack(n, clip, k)
    extended = torch.sqrt(torch.clamp(n, max=clip) ** 2 + (v**2).sum(1))
    assert bool((extended <= clip + 1e-6).all())
    assert extended[0].item() == pytest.approx(clip)  # equality at n = 0: all slots full
    assert extended[2].item() == pytest.approx(clip)  # n = C: no slack, clipped norm = C
    assert torch.count_nonzero(v[2:]) == 0  # clipped samples carry no slack


def test_rebuttal_toy_example():
    # C = 5, K = 5, norms 0..14, no noise -> s_hat = (5, 4, 3, 2, 1) / 15.
    norms = torch.arange(15, dtype=torch.float64)
    total = encode_slack(norms, 5.0, 5).sum(0)
    s_hat = slack_indicator(total, 5.0, 5, 15)
    torch.testing.assert_close(s_hat, torch.tensor([5, 4, 3, 2, 1], dtype=torch.float64) / 15)


def test_indicator_without_noise_is_the_mean_soft_count():
    norms = torch.tensor([0.0, 0.1, 0.9, 1.7, 3.0])
    clip, k = 2.0, 4
    s_hat = slack_indicator(encode_slack(norms, clip, k).sum(0), clip, k, len(norms))
    expected = torch.stack([(k * (1 - norms / clip) - j).clamp(0, 1) for j in range(k)], 1).mean(0)
    torch.testing.assert_close(s_hat, expected)
    assert s_hat[0].item() == pytest.approx(3 / 5 + (4 * (1 - 1.7 / 2)) / 5)  # unclipped share, soft band


def test_encode_keeps_dtype_and_handles_empty_batch():
    v = encode_slack(torch.zeros(0, dtype=torch.float32), 1.0, 3)
    assert v.shape == (0, 3) and v.dtype == torch.float32


def test_recommended_num_slots_formula_and_table():
    assert recommended_num_slots(128, 1.0) == 8
    assert recommended_num_slots(256, 1.0) == 13
    for b, k in TABLE3_NUM_SLOTS.items():
        assert recommended_num_slots(b, 1.0, mode="table") == k
        formula = recommended_num_slots(b, 1.0)
        assert formula == math.floor((b / (2 * 2.576)) ** (2 / 3))
    # The rule's meaning: the 99% noise half-width of a slot is at most half the slot resolution.
    b, sigma = 1000, 1.3
    k = recommended_num_slots(b, sigma)
    assert 2.576 * sigma * math.sqrt(k) / b <= 1 / (2 * k)
    assert 2.576 * sigma * math.sqrt(k + 1) / b > 1 / (2 * (k + 1))


def test_recommended_num_slots_no_solution():
    assert recommended_num_slots(4, 2.0) == 1
    with pytest.raises(ValueError, match="no K >= 1"):
        recommended_num_slots(4, 2.0, strict=True)
    with pytest.raises(ValueError, match="mode='table'"):
        recommended_num_slots(100, 1.0, mode="table")


@pytest.mark.parametrize(
    "call, exc, word",
    [
        (lambda: encode_slack([1.0], 1.0, 2), TypeError, "norms"),
        (lambda: encode_slack(torch.ones(2, 2), 1.0, 2), ValueError, "norms"),
        (lambda: encode_slack(torch.tensor([-1.0]), 1.0, 2), ValueError, "norms"),
        (lambda: encode_slack(torch.tensor([1, 2]), 1.0, 2), TypeError, "norms"),
        (lambda: encode_slack(torch.ones(2), 0.0, 2), ValueError, "clip"),
        (lambda: encode_slack(torch.ones(2), float("nan"), 2), ValueError, "clip"),
        (lambda: encode_slack(torch.ones(2), 1.0, 0), ValueError, "num_slots"),
        (lambda: encode_slack(torch.ones(2), 1.0, 2.5), TypeError, "num_slots"),
        (lambda: slack_indicator(torch.ones(3), 1.0, 2, 10), ValueError, "noisy_slack_sum"),
        (lambda: slack_indicator(torch.ones(2), 1.0, 2, 0), ValueError, "batch_size"),
        (lambda: slack_indicator(torch.ones(2), -1.0, 2, 5), ValueError, "clip"),
        (lambda: recommended_num_slots(0, 1.0), ValueError, "batch_size"),
        (lambda: recommended_num_slots(128, 0.0), ValueError, "noise_multiplier"),
        (lambda: recommended_num_slots(128, -1.0), ValueError, "noise_multiplier"),
        (lambda: recommended_num_slots(128, 1.0, mode="x"), ValueError, "mode"),
    ],
)
def test_bad_inputs_name_the_argument(call, exc, word):
    with pytest.raises(exc, match=word):
        call()
