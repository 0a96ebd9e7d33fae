import hashlib

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from icml26.common.tinylm import TinyLM, TinyLMConfig
from icml26.t3_unlearning import T3Unlearner, TemperThenTiltLogitsProcessor
from icml26.t3_unlearning.data import make_fictitious_authors, split_forget
from icml26.t3_unlearning.unlearn import PlainLM, answer_logprobs, grad_diff, gradient_ascent, npo, npo_loss


@pytest.fixture(scope="module")
def world():
    torch.manual_seed(0)
    data = make_fictitious_authors(6, seed=0, n_countries=4)
    tok = data.tokenizer
    model = TinyLM(TinyLMConfig(vocab_size=len(tok), n_layer=2, n_head=2, n_embd=32, block_size=48)).eval()
    sp = split_forget(data, 20, seed=0)
    pair = lambda items: [(tok.encode(q.prompt), tok.encode(q.answer)) for q in items]  # noqa: E731
    return data, tok, model, pair(sp.retain), pair(sp.forget)


@pytest.fixture(scope="module")
def fitted(world):
    _, _, model, retain, forget = world
    return T3Unlearner(model, temperature=2.0, hidden=16, seed=0).fit(retain, forget, epochs=3)


def _checksum(model):
    return hashlib.sha256(b"".join(p.detach().numpy().tobytes() for p in model.parameters())).hexdigest()


def test_fit_never_changes_the_base_model_and_trains_a_small_classifier(world):
    _, _, model, retain, forget = world
    before = _checksum(model)
    u = T3Unlearner(model, hidden=16, seed=1).fit(retain, forget, epochs=2)
    assert _checksum(model) == before
    assert all(p.requires_grad for p in model.parameters())  # nothing was frozen behind the user's back
    assert (
        u.n_trainable_params_
        == sum(p.numel() for p in u.classifier_.parameters())
        < 0.1 * sum(p.numel() for p in model.parameters())
    )
    assert len(u.losses_) == 2 and u.fit_time_ >= 0 and u.feature_time_ >= 0


def test_T1_without_guidance_is_exactly_the_base_model(world, fitted):
    _, _, model, retain, _ = world
    fitted.temperature, fitted.guidance = 1.0, 0.0
    try:
        xs, ys = zip(*retain[:5], strict=True)
        t3 = fitted.token_logprobs(xs, ys)
        base = PlainLM(model).token_logprobs(xs, ys)
        for a, b in zip(t3, base, strict=True):
            assert torch.allclose(a, b, atol=1e-5)
    finally:
        fitted.temperature, fitted.guidance = 2.0, 1.0


def test_processor_rule_shapes_and_normalisation(world, fitted):
    _, tok, model, retain, _ = world
    ids = torch.tensor([retain[0][0] + retain[0][1][:2]])
    ids_before = ids.clone()
    scores = model(ids)[:, -1]
    proc = fitted.logits_processor()
    assert isinstance(proc, TemperThenTiltLogitsProcessor)
    out = proc(ids, scores)
    assert out.shape == scores.shape and torch.equal(ids, ids_before)
    # the rule: scores / T + lambda * log f_hat(h_bar, v) for every v
    from icml26.t3_unlearning.unlearner import BaseFeatures, prefix_means

    h_bar = prefix_means(BaseFeatures(model)(ids)[1])[:, -1]
    expected = scores / 2.0 + fitted.log_f_hat(h_bar)
    assert torch.allclose(out, expected, atol=1e-5)
    p = torch.softmax(out, -1)
    assert p.sum().item() == pytest.approx(1.0, abs=1e-5)
    # token_logprobs agrees with the processor at the same position
    lp = fitted.token_logprobs([retain[0][0]], [retain[0][1]])[0]
    assert lp[2].item() == pytest.approx(torch.log_softmax(out, -1)[0, retain[0][1][2]].item(), abs=1e-4)


def test_top_k_candidates_with_k_equal_vocab_matches_all(world, fitted):
    _, tok, model, retain, forget = world
    ids = torch.tensor([forget[0][0]])
    scores = model(ids)[:, -1]
    full = fitted.logits_processor()(ids, scores)
    fitted.candidates = len(tok)
    try:
        assert torch.allclose(fitted.logits_processor()(ids, scores), full, atol=1e-5)
        fitted.candidates = 3
        out = fitted.logits_processor()(ids, scores)
        top = scores.topk(3).indices[0]
        assert torch.allclose(out[0, top], full[0, top], atol=1e-5)  # the top-k get their own score
    finally:
        fitted.candidates = "all"


@settings(max_examples=30, deadline=None)
@given(st.floats(1.0, 10.0), st.integers(0, 10_000))
def test_greedy_invariance(T, seed):
    g = torch.Generator().manual_seed(seed)
    logits = torch.randn(20, generator=g) * 3
    log_f = torch.log(torch.rand(20, generator=g).clamp_min(1e-6))
    assert int(torch.argmax(logits / T + log_f)) == int(torch.argmax(logits + T * log_f))


def test_generate_matches_processor_greedy_loop(world, fitted):
    _, tok, model, retain, _ = world
    x = retain[0][0]
    gen = fitted.generate([x], max_new_tokens=5)[0]
    ids = torch.tensor([x])
    for _ in range(5):
        scores = model(ids)[:, -1]
        ids = torch.cat([ids, fitted.logits_processor()(ids, scores).argmax(-1, keepdim=True)], 1)
    assert gen == ids[0, len(x) :].tolist()


def test_errors(world, fitted):
    _, tok, model, retain, forget = world
    with pytest.raises(ValueError, match="temperature must be a finite number > 0"):
        T3Unlearner(model, temperature=0.0)
    with pytest.raises(ValueError, match="temperature"):
        fitted.temperature = -1.0
    with pytest.raises(ValueError, match="guidance must be"):
        T3Unlearner(model, guidance=-1.0)
    with pytest.raises(ValueError, match="forget must be a non-empty"):
        T3Unlearner(model).fit(retain, [])
    with pytest.raises(ValueError, match="tokenizer does not match"):
        T3Unlearner(model).fit(retain, [([1, 2], [len(tok) + 5])])
    with pytest.raises(ValueError, match="tokenizer does not match"):
        fitted.logits_processor()(torch.tensor([[1, 2]]), torch.zeros(1, len(tok) + 1))
    with pytest.raises(RuntimeError, match="not fitted"):
        T3Unlearner(model).logits_processor()
    with pytest.raises(ValueError, match="candidates must be"):
        T3Unlearner(model, candidates=0)
    with pytest.raises(ValueError, match="feature_layer must be"):
        T3Unlearner(model, feature_layer=7)


# -- fine-tuning baselines ---------------------------------------------------------------------------------
def test_npo_at_the_reference_is_two_over_beta_log_two():
    lp = torch.tensor([-3.0, -7.5])
    for beta in (0.1, 1.0):
        assert npo_loss(lp, lp, beta).item() == pytest.approx(2 / beta * np.log(2))


def test_npo_gradient_tends_to_gradient_ascent_as_beta_vanishes():
    ref = torch.tensor([-2.0, -5.0, -1.0])
    theta = torch.tensor([-1.0, -6.0, -0.5], dtype=torch.float64)
    # finite differences of the NPO loss in log pi_theta
    for beta in (1e-1, 1e-3):
        eps = 1e-6
        fd = []
        for i in range(3):
            e = torch.zeros(3, dtype=torch.float64)
            e[i] = eps
            fd.append((npo_loss(theta + e, ref.double(), beta) - npo_loss(theta - e, ref.double(), beta)) / (2 * eps))
        fd = torch.stack(fd)
        th = theta.clone().requires_grad_(True)
        npo_loss(th, ref.double(), beta).backward()
        assert torch.allclose(th.grad, fd, atol=1e-6)
    # GA minimises -NLL = mean log pi: gradient 1/n per sequence; NPO's -> 2 sigmoid(0)/n = 1/n as beta -> 0
    assert torch.allclose(th.grad, torch.full((3,), 1 / 3, dtype=torch.float64), atol=1e-3)


def test_baselines_move_forget_likelihood_in_the_right_direction(world):
    _, _, model, retain, forget = world
    before = answer_logprobs(model, forget).sum().item()
    seen = []
    ga = gradient_ascent(model, forget, lr=1e-2, epochs=2, seed=0, callback=lambda e, m, t: seen.append(e))
    assert seen == [1, 2] and ga.train_time_ >= 0
    others = [npo(model, forget, retain, lr=1e-2, epochs=2), grad_diff(model, forget, retain, lr=1e-2, epochs=2)]
    with torch.no_grad():
        for m in [ga, *others]:
            assert answer_logprobs(m, forget).sum().item() < before
    assert answer_logprobs(model, forget).sum().item() == pytest.approx(before)  # the input model is untouched
    with pytest.raises(ValueError, match="retain must be a non-empty"):
        grad_diff(model, forget, [])
    with pytest.raises(ValueError, match="lr must be > 0"):
        gradient_ascent(model, forget, lr=0.0)


def test_rescore_scorer_runs_the_base_on_each_candidate(world):
    from icml26.t3_unlearning.unlearner import BaseFeatures, prefix_means

    _, tok, model, retain, forget = world
    u = T3Unlearner(model, temperature=1.5, guidance=2.0, hidden=8, candidates=4, scorer="rescore", seed=0)
    u.fit(retain, forget, epochs=2)
    x, y = retain[1]
    prefix = torch.tensor(x + y[:1])
    feats = BaseFeatures(model)
    logits, hidden = feats(prefix[None])
    scores = logits[:, -1]
    out = u.logits_processor()(prefix[None], scores)
    # by hand: each top-4 candidate v gets log f_hat(mean hidden of prefix + v, e(v)); the rest their mean
    top = scores.topk(4).indices[0]
    direct = []
    for v in top.tolist():
        _, h = feats(torch.tensor([x + y[:1] + [v]]))
        direct.append(torch.nn.functional.logsigmoid(u.classifier_(prefix_means(h)[:, -1], feats.embedding[[v]])))
    direct = torch.cat(direct)
    assert torch.allclose(out[0, top], scores[0, top] / 1.5 + 2.0 * direct, atol=1e-4)
    rest = torch.ones(len(tok), dtype=torch.bool)
    rest[top] = False
    assert torch.allclose(out[0, rest], scores[0, rest] / 1.5 + 2.0 * direct.mean(), atol=1e-4)
    # token_logprobs uses the same rule at every answer position
    lp = u.token_logprobs([x], [y])[0]
    assert lp[1].item() == pytest.approx(torch.log_softmax(out, -1)[0, y[1]].item(), abs=1e-4)
    with pytest.raises(ValueError, match="scorer must be"):
        T3Unlearner(model, scorer="exact")


# -- cached decoding, padding, memo, input errors ----------------------------------------------------------
def test_cached_incremental_forward_equals_the_full_forward(world):
    from icml26.t3_unlearning.unlearner import BaseFeatures, _Decoder, prefix_means

    _, _, model, retain, _ = world
    feats = BaseFeatures(model)
    ids = torch.tensor([retain[0][0] + retain[0][1][:3]])
    dec = _Decoder(feats, ids[:, :-3])
    for t in range(3):
        dec.advance(ids[:, -3 + t])
    logits, hidden = feats(ids)
    assert torch.allclose(dec.logits, logits[:, -1], atol=1e-4)
    assert torch.allclose(dec.h_bar, prefix_means(hidden)[:, -1], atol=1e-5)


def test_left_padded_rows_get_the_scores_of_the_unpadded_prompt(world, fitted):
    _, tok, model, retain, forget = world
    a, b = retain[0][0], forget[0][0] + forget[0][1][:4]
    assert len(a) < len(b)
    L = len(b)
    ids = torch.tensor([[tok.pad_id] * (L - len(a)) + a, b])
    mask = torch.tensor([[0] * (L - len(a)) + [1] * len(a), [1] * L])
    scores = torch.stack([model(torch.tensor([a]))[0, -1], model(torch.tensor([b]))[0, -1]])
    out = fitted.logits_processor(attention_mask=mask)(ids, scores)
    one = fitted.logits_processor()(torch.tensor([a]), scores[:1])
    assert torch.allclose(out[0], one[0], atol=1e-4)
    # without the mask the padding is pooled in and the scores move (the bug the mask fixes)
    wrong = fitted.logits_processor()(ids, scores)
    assert (wrong[0] - one[0]).abs().max() > 1e-3


def test_processor_runs_one_cached_forward_per_generated_token(world, fitted):
    _, _, model, retain, _ = world
    x = retain[0][0]
    proc = fitted.logits_processor()
    ids = torch.tensor([x])
    for _ in range(5):
        ids = torch.cat([ids, proc(ids, model(ids)[:, -1]).argmax(-1, keepdim=True)], 1)
    assert proc.n_forwards_ == 5  # one prefill + four single-token steps, not five full re-forwards
    assert ids[0, len(x) :].tolist() == fitted.generate([x], max_new_tokens=5)[0]


def test_grid_memo_gives_the_same_logprobs_as_a_fresh_unlearner(world):
    _, _, model, retain, forget = world
    u = T3Unlearner(model, hidden=8, seed=3).fit(retain, forget, epochs=2)
    v = T3Unlearner(model, hidden=8, seed=3).fit(retain, forget, epochs=2)
    xs, ys = zip(*forget, strict=True)
    u.token_logprobs(xs, ys)  # fills the memo at (T, lambda) = (2, 1)
    for T, lam in ((1.0, 0.0), (3.0, 5.0)):
        u.temperature, u.guidance = T, lam
        w = T3Unlearner(model, temperature=T, guidance=lam, hidden=8, seed=3).fit(retain, forget, epochs=2)
        for p, q in zip(u.token_logprobs(xs, ys), w.token_logprobs(xs, ys), strict=True):
            assert torch.allclose(p, q, atol=1e-5)
    assert v.classifier_ is not None


def test_non_id_and_over_long_input_raise_errors_naming_the_argument(world, fitted):
    _, tok, model, retain, forget = world
    scores = torch.zeros(1, len(tok))
    with pytest.raises(TypeError, match="input_ids must be a torch.Tensor"):
        fitted.logits_processor()([[1, 2]], scores)
    with pytest.raises(TypeError, match="input_ids must hold integer"):
        fitted.logits_processor()(torch.tensor([[1.0, 2.0]]), scores)
    with pytest.raises(ValueError, match="input_ids has 49 positions but the base model's context is 48"):
        fitted.logits_processor()(torch.ones(1, 49, dtype=torch.long), scores)
    with pytest.raises(TypeError, match="scores must be"):
        fitted.logits_processor()(torch.tensor([[1, 2]]), torch.zeros(1, len(tok), dtype=torch.long))
    with pytest.raises(TypeError, match=r"x_ids\[0\] is a string"):
        fitted.generate(["who wrote"], max_new_tokens=2)
    with pytest.raises(TypeError, match="x_ids must be a sequence"):
        fitted.generate("who wrote", max_new_tokens=2)
    with pytest.raises(ValueError, match=r"x_ids\[0\] has 40 tokens; with max_new_tokens=10"):
        fitted.generate([[1] * 40], max_new_tokens=10)
    with pytest.raises(TypeError, match=r"retain\[0\] holds a string"):
        T3Unlearner(model).fit([("who", "me")], forget)
    with pytest.raises(ValueError, match=r"x_ids/y_ids\[0\] has 50 tokens, more than the base model's context"):
        fitted.token_logprobs([[1] * 30], [[2] * 20])
    with pytest.raises(ValueError, match="attention_mask"):
        fitted.logits_processor(attention_mask=torch.tensor([[0, 0]]))
    with pytest.raises(ValueError, match="attention_mask has shape"):
        fitted.logits_processor(attention_mask=torch.ones(2, 2))(torch.tensor([[1, 2]]), scores)
