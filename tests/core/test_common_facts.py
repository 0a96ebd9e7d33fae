"""The synthetic facts corpus: determinism, exposure counts, surface forms and the tokenizer."""

import numpy as np
import pytest

from icml26.common.facts import (
    DEFAULT_TOOLS,
    EXPOSURES,
    Relation,
    WordTokenizer,
    make_fact_world,
    make_names,
    mcqa_item,
    perturbed_statements,
    statement,
    tool_call_item,
    training_corpus,
)


def test_world_is_deterministic_and_exposures_balanced():
    a, b = make_fact_world(40, seed=3), make_fact_world(40, seed=3)
    assert a == b
    assert make_fact_world(40, seed=4).entities != a.entities
    counts = {k: a.exposure.count(k) for k in EXPOSURES}
    assert counts == {0: 10, 1: 10, 3: 10, 10: 10}
    assert len(set(a.entities)) == 40


def test_names_are_distinct_and_avoid_taken_words():
    names = make_names(200, seed=0, taken={"red"})
    assert len(set(names)) == 200 and all(len(n.split()) == 2 for n in names)
    single = make_names(50, seed=0, n_words=1)
    assert len(set(single)) == 50 and all(len(n.split()) == 1 for n in single)


def test_corpus_mentions_each_fact_exactly_exposure_times():
    w = make_fact_world(12, seed=0, name_words=1)
    texts = training_corpus(w, DEFAULT_TOOLS, seed=0)
    for i, name in enumerate(w.entities):
        mentions = [t for t in texts if name in t.split()]
        assert len(mentions) == w.exposure[i] * (len(w.relations) + len(DEFAULT_TOOLS))
        for t in mentions:
            assert t.endswith("<eos>")


def test_surface_forms():
    w = make_fact_world(5, seed=1, name_words=1)
    rng = np.random.default_rng(0)
    prompt, answer, options = mcqa_item(w, 0, "colour", rng)
    assert answer == w.value(0, "colour") and answer in options and len(set(options)) == 4
    assert prompt.startswith("q : ") and prompt.endswith("answer :")
    p, call = tool_call_item(w, 2, DEFAULT_TOOLS[1])
    assert call == f"paint ( item = {w.value(2, 'item')} , colour = {w.value(2, 'colour')} )"
    assert p.endswith("call :")
    assert statement(w, 0, "town").split()[0] == w.entities[0]
    assert w.value(0, "town") in statement(w, 0, "town", template=1)
    wrong = perturbed_statements(w, 0, "pet", 5, seed=0)
    assert len(set(wrong)) == 5 and statement(w, 0, "pet") not in wrong


def test_tokenizer_round_trip_and_padding():
    w = make_fact_world(6, seed=0)
    tok = w.tokenizer(DEFAULT_TOOLS)
    texts = training_corpus(w, DEFAULT_TOOLS, seed=0)
    assert tok.decode(tok.encode(texts[0])) == texts[0]
    batch = tok.batch(texts[:3], length=40)
    assert batch.shape == (3, 40) and tok.vocab[tok.pad_id] == "<pad>"
    with pytest.raises(ValueError, match="outside the vocabulary"):
        tok.encode("zzzunknown")
    with pytest.raises(ValueError, match="no whitespace"):
        WordTokenizer(["a b"])


def test_custom_relations_for_a_tofu_like_author_set():
    genre = Relation(
        "genre",
        ("fantasy", "mystery", "poetry"),
        "{subject} writes {value} books .",
        "what does {subject} write ?",
        ("the genre of {subject} is {value} .",),
    )
    w = make_fact_world(10, relations=(genre,), exposures=(1,), seed=0)
    assert statement(w, 0, "genre", 1).startswith("the genre of")
    assert len(training_corpus(w, seed=0, surfaces=("statement", "paraphrase"))) == 10


def test_errors():
    with pytest.raises(ValueError, match="n_entities must be a positive integer"):
        make_fact_world(0)
    with pytest.raises(ValueError, match="exposures must be non-negative"):
        make_fact_world(3, exposures=(-1,))
    with pytest.raises(ValueError, match="needs {subject} and {value}"):
        Relation("x", ("a", "b"), "no placeholders", "q {subject}")
    w = make_fact_world(3, seed=0)
    with pytest.raises(ValueError, match="relation must be one of"):
        w.value(0, "age")
    with pytest.raises(ValueError, match="surfaces must be"):
        training_corpus(w, surfaces=("poem",))
