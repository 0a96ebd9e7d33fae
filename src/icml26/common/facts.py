"""A procedural corpus of facts about invented entities, with controlled exposure, and a word-level tokenizer.

Why: tiny language models trained here need knowledge whose presence we control.  Every entity (an invented
two-word name such as ``"kalo vendru"``) has one value per :class:`Relation` (home town, colour, ...).  An
entity's *exposure* ``k`` is how many times each of its facts appears in the training corpus (``k = 0``: held
out, so a model can only guess).  Mixing exposures ``{0, 1, 3, 10}`` makes a model's correctness vary from
item to item, which is what calibration and unlearning experiments need.

Pieces (all deterministic given a seed):

* :func:`make_names` -- invented, pronounceable two-word names from syllables;
* :class:`Relation` / :class:`Tool` -- a fact template and a structured "tool call" over facts;
* :func:`make_fact_world` -- entities, their values and exposures (a :class:`FactWorld`);
* surface forms of one fact: :func:`statement` (optionally a paraphrase template), :func:`mcqa_item` (question,
  four options, one answer word), :func:`tool_call_item` (request -> ``fn ( arg = value , ... )``),
  :func:`perturbed_statements` (the same template with wrong values);
* :func:`training_corpus` -- the texts a model is trained on, honouring each entity's exposure;
* :class:`WordTokenizer` -- whitespace word-level tokenizer with ``<pad>`` and ``<eos>``.

A TOFU-like set of fictitious authors is a :class:`FactWorld` with author relations (birth city, genre, book
title, ...), each with a question, an answer sentence and a paraphrase template; split it by entity.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np
import torch

__all__ = [
    "WordTokenizer",
    "Relation",
    "Tool",
    "FactWorld",
    "DEFAULT_RELATIONS",
    "DEFAULT_TOOLS",
    "EXPOSURES",
    "make_names",
    "make_fact_world",
    "statement",
    "perturbed_statements",
    "mcqa_item",
    "tool_call_item",
    "training_corpus",
]

PAD, EOS = "<pad>", "<eos>"
EXPOSURES = (0, 1, 3, 10)

_ONSETS = ("b", "d", "f", "g", "k", "l", "m", "n", "p", "r", "s", "t", "v", "z", "br", "dr", "kl", "tr", "sh", "gr")
_VOWELS = ("a", "e", "i", "o", "u", "ai", "ou")
_CODAS = ("", "", "n", "r", "l", "s", "th")


class WordTokenizer:
    """Whitespace word-level tokenizer.  Id 0 is ``<pad>``, id 1 is ``<eos>``; the other words are sorted."""

    def __init__(self, words: Iterable[str]) -> None:
        rest = sorted(set(words) - {PAD, EOS})
        if any((not w) or any(c.isspace() for c in w) for w in rest):
            raise ValueError("words must be non-empty and contain no whitespace")
        self.vocab: list[str] = [PAD, EOS, *rest]
        self.index: dict[str, int] = {w: i for i, w in enumerate(self.vocab)}
        self.pad_id, self.eos_id = 0, 1

    @classmethod
    def from_texts(cls, texts: Iterable[str]) -> WordTokenizer:
        return cls(w for t in texts for w in t.split())

    def __len__(self) -> int:
        return len(self.vocab)

    def encode(self, text: str | Sequence[str]) -> list[int]:
        words = text.split() if isinstance(text, str) else list(text)
        unknown = [w for w in words if w not in self.index]
        if unknown:
            raise ValueError(f"text contains words outside the vocabulary: {unknown[:5]}")
        return [self.index[w] for w in words]

    def decode(self, ids: Iterable[int]) -> str:
        return " ".join(self.vocab[int(i)] for i in ids)

    def batch(self, texts: Sequence[str], length: int | None = None) -> torch.Tensor:
        """Encode ``texts`` and right-pad with ``<pad>`` to ``length`` (default: the longest); LongTensor."""
        enc = [self.encode(t) for t in texts]
        longest = max((len(e) for e in enc), default=0)
        length = longest if length is None else length
        if longest > length:
            raise ValueError(f"length must be >= the longest text ({longest} words), got {length}")
        out = torch.full((len(enc), length), self.pad_id, dtype=torch.long)
        for i, e in enumerate(enc):
            out[i, : len(e)] = torch.tensor(e, dtype=torch.long)
        return out


@dataclass(frozen=True)
class Relation:
    """A kind of fact.  Templates use ``{subject}`` (the entity's name) and ``{value}``.

    ``statement`` is the fact as a sentence, ``question`` asks for it (no ``{value}``), ``paraphrases`` are
    other sentences with the same content (optional).
    """

    name: str
    values: tuple[str, ...]
    statement: str
    question: str
    paraphrases: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if len(self.values) < 2 or len(set(self.values)) != len(self.values):
            raise ValueError(f"relation {self.name!r}: values must hold >= 2 distinct words")
        for t in (self.statement, *self.paraphrases):
            if "{subject}" not in t or "{value}" not in t:
                raise ValueError(f"relation {self.name!r}: template {t!r} needs {{subject}} and {{value}}")
        if "{subject}" not in self.question:
            raise ValueError(f"relation {self.name!r}: question needs {{subject}}")


@dataclass(frozen=True)
class Tool:
    """A structured call whose arguments are facts: ``request`` (with ``{subject}``) -> ``name ( a = v , ... )``.

    ``args`` maps each argument name to the relation that supplies its value.
    """

    name: str
    request: str
    args: tuple[tuple[str, str], ...]

    def __post_init__(self) -> None:
        if "{subject}" not in self.request:
            raise ValueError(f"tool {self.name!r}: request needs {{subject}}")
        if not self.args:
            raise ValueError(f"tool {self.name!r}: args must not be empty")


def _syllable_words(rng: np.random.Generator, n: int, syllables: int, taken: set[str]) -> list[str]:
    out: list[str] = []
    tries = 0
    while len(out) < n:
        tries += 1
        if tries > 200 * n + 1000:
            raise ValueError(f"could not invent {n} distinct words with {syllables} syllables")
        parts = []
        for j in range(syllables):
            coda = _CODAS[rng.integers(len(_CODAS))] if j == syllables - 1 else ""
            parts.append(_ONSETS[rng.integers(len(_ONSETS))] + _VOWELS[rng.integers(len(_VOWELS))] + coda)
        w = "".join(parts)
        if w not in taken:
            taken.add(w)
            out.append(w)
    return out


def make_names(n: int, seed: int = 0, taken: Iterable[str] = (), n_words: int = 2) -> list[str]:
    """``n`` distinct invented names.

    ``n_words=2``: ``"first last"``, from first- and last-name pools of ``ceil(sqrt(n)) + 2`` words each (the
    vocabulary grows like ``sqrt(n)``, a model must bind two tokens).  ``n_words=1``: one invented word each
    (one token per entity: easier to memorise, vocabulary grows like ``n``).  Words in ``taken`` are never used.
    """
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"n must be a positive integer, got {n!r}")
    if n_words not in (1, 2):
        raise ValueError(f"n_words must be 1 or 2, got {n_words!r}")
    rng = np.random.default_rng(seed)
    used = set(taken)
    if n_words == 1:
        return _syllable_words(rng, n, 3, used)
    m = int(np.ceil(np.sqrt(n))) + 2
    firsts = _syllable_words(rng, m, 2, used)
    lasts = _syllable_words(rng, m, 3, used)
    pairs = list(itertools.product(firsts, lasts))
    pick = rng.permutation(len(pairs))[:n]
    return [f"{pairs[i][0]} {pairs[i][1]}" for i in pick]


def _towns(n: int) -> tuple[str, ...]:
    rng = np.random.default_rng(12345)
    return tuple(w + "ia" for w in _syllable_words(rng, n, 2, set()))


DEFAULT_RELATIONS: tuple[Relation, ...] = (
    Relation(
        "town",
        _towns(24),
        "{subject} lives in {value} .",
        "where does {subject} live ?",
        ("the home town of {subject} is {value} .",),
    ),
    Relation(
        "colour",
        ("red", "blue", "green", "gold", "grey", "pink", "black", "white", "orange", "purple", "brown", "teal"),
        "the favourite colour of {subject} is {value} .",
        "which colour does {subject} like ?",
        ("{subject} likes the colour {value} .",),
    ),
    Relation(
        "pet",
        ("cat", "dog", "owl", "goat", "horse", "rabbit", "parrot", "turtle", "lizard", "hamster", "ferret", "pony"),
        "{subject} keeps a {value} as a pet .",
        "which pet does {subject} keep ?",
        ("the pet of {subject} is a {value} .",),
    ),
    Relation(
        "item",
        (
            "lamp",
            "kettle",
            "violin",
            "bicycle",
            "telescope",
            "clock",
            "camera",
            "piano",
            "kite",
            "drum",
            "sofa",
            "vase",
        ),
        "{subject} owns a {value} .",
        "what does {subject} own ?",
        ("the prized possession of {subject} is a {value} .",),
    ),
)

DEFAULT_TOOLS: tuple[Tool, ...] = (
    Tool("book_trip", "book a trip home for {subject}", (("to", "town"),)),
    Tool("paint", "paint the item of {subject} in their colour", (("item", "item"), ("colour", "colour"))),
    Tool("ship_pet", "ship the pet of {subject} to their home", (("pet", "pet"), ("to", "town"))),
    Tool("order_collar", "order a collar for the pet of {subject}", (("pet", "pet"), ("colour", "colour"))),
)


@dataclass(frozen=True)
class FactWorld:
    """Entities, their fact values and exposures.

    ``values[i][j]`` is entity ``i``'s value for ``relations[j]``; ``exposure[i]`` is how often each of entity
    ``i``'s facts appears in :func:`training_corpus`.
    """

    entities: tuple[str, ...]
    relations: tuple[Relation, ...]
    values: tuple[tuple[str, ...], ...]
    exposure: tuple[int, ...]
    _rel_index: dict = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        if not (len(self.entities) == len(self.values) == len(self.exposure)):
            raise ValueError("entities, values and exposure must have the same length")
        self._rel_index.update({r.name: j for j, r in enumerate(self.relations)})

    def relation(self, name: str) -> Relation:
        if name not in self._rel_index:
            raise ValueError(f"relation must be one of {sorted(self._rel_index)}, got {name!r}")
        return self.relations[self._rel_index[name]]

    def value(self, i: int, relation: str) -> str:
        self.relation(relation)
        return self.values[i][self._rel_index[relation]]

    def words(self, tools: Sequence[Tool] = ()) -> set[str]:
        """Every word the surface forms of this world (and ``tools``) can produce."""
        texts = list(self.entities)
        for r in self.relations:
            texts += list(r.values) + [r.statement, r.question, *r.paraphrases]
        for t in tools:
            texts += [t.request, t.name] + [a for a, _ in t.args]
        texts += ["q : options answer request call ( ) = , ."]
        return {w.replace("{subject}", "").replace("{value}", "") for t in texts for w in t.split()} - {""}

    def tokenizer(self, tools: Sequence[Tool] = ()) -> WordTokenizer:
        return WordTokenizer(self.words(tools))


def make_fact_world(
    n_entities: int,
    relations: Sequence[Relation] = DEFAULT_RELATIONS,
    exposures: Sequence[int] = EXPOSURES,
    seed: int = 0,
    name_words: int = 2,
) -> FactWorld:
    """Invent ``n_entities`` entities, draw each value uniformly from its relation, and give the exposures in
    equal shares (``exposures`` cycled over a random permutation of the entities).  ``name_words`` is passed to
    :func:`make_names` as ``n_words``."""
    if isinstance(n_entities, bool) or not isinstance(n_entities, int) or n_entities < 1:
        raise ValueError(f"n_entities must be a positive integer, got {n_entities!r}")
    if not relations:
        raise ValueError("relations must not be empty")
    if not exposures or any(int(k) < 0 for k in exposures):
        raise ValueError(f"exposures must be non-negative integers, got {exposures!r}")
    rng = np.random.default_rng(seed)
    taken = {w for r in relations for w in r.values}
    names = make_names(n_entities, seed=seed, taken=taken, n_words=name_words)
    values = tuple(tuple(r.values[rng.integers(len(r.values))] for r in relations) for _ in range(n_entities))
    order = rng.permutation(n_entities)
    exposure = [0] * n_entities
    for pos, i in enumerate(order):
        exposure[i] = int(exposures[pos % len(exposures)])
    return FactWorld(tuple(names), tuple(relations), values, tuple(exposure))


def statement(world: FactWorld, i: int, relation: str, template: int = 0) -> str:
    """Entity ``i``'s fact as a sentence (``template`` 0: the statement, ``>= 1``: that paraphrase)."""
    r = world.relation(relation)
    temps = (r.statement, *r.paraphrases)
    if not 0 <= template < len(temps):
        raise ValueError(f"template must lie in [0, {len(temps) - 1}] for relation {relation!r}, got {template}")
    return temps[template].format(subject=world.entities[i], value=world.value(i, relation))


def _wrong_values(world: FactWorld, i: int, relation: str, n: int, rng: np.random.Generator) -> list[str]:
    r = world.relation(relation)
    if n > len(r.values) - 1:
        raise ValueError(f"relation {relation!r} has only {len(r.values) - 1} wrong values, asked for {n}")
    wrong = [v for v in r.values if v != world.value(i, relation)]
    return [wrong[j] for j in rng.choice(len(wrong), size=n, replace=False)]


def perturbed_statements(world: FactWorld, i: int, relation: str, n: int, seed: int = 0) -> list[str]:
    """``n`` sentences in the statement template with distinct wrong values (TOFU's perturbed answers)."""
    r = world.relation(relation)
    rng = np.random.default_rng(seed)
    return [r.statement.format(subject=world.entities[i], value=v) for v in _wrong_values(world, i, relation, n, rng)]


def mcqa_item(
    world: FactWorld, i: int, relation: str, rng: np.random.Generator, n_options: int = 4
) -> tuple[str, str, list[str]]:
    """A multiple-choice question ``"q : <question> options : o1 o2 o3 o4 answer :"`` -> one answer word.

    The options are the true value and ``n_options - 1`` distinct wrong values, in random order.  Returns
    ``(prompt, answer, options)``.
    """
    if n_options < 2:
        raise ValueError(f"n_options must be >= 2, got {n_options}")
    r = world.relation(relation)
    answer = world.value(i, relation)
    options = [answer, *_wrong_values(world, i, relation, n_options - 1, rng)]
    options = [options[j] for j in rng.permutation(n_options)]
    prompt = f"q : {r.question.format(subject=world.entities[i])} options : {' '.join(options)} answer :"
    return prompt, answer, options


def tool_call_item(world: FactWorld, i: int, tool: Tool) -> tuple[str, str]:
    """``("request : <request> . call :", "name ( a1 = v1 , a2 = v2 )")`` for entity ``i``."""
    args = " , ".join(f"{a} = {world.value(i, rel)}" for a, rel in tool.args)
    return f"request : {tool.request.format(subject=world.entities[i])} . call :", f"{tool.name} ( {args} )"


def training_corpus(
    world: FactWorld,
    tools: Sequence[Tool] = (),
    seed: int = 0,
    surfaces: Sequence[str] = ("statement", "paraphrase", "mcqa"),
    entities: Iterable[int] | None = None,
) -> list[str]:
    """The training texts, each ending in ``<eos>``, in random order.

    For every entity ``i`` (default: all) with exposure ``k``: each relation's fact appears ``k`` times, each
    time in a surface form drawn uniformly from ``surfaces`` (``"statement"``, ``"paraphrase"`` (falls back to
    the statement for relations without one), ``"mcqa"``: question with options and the answer); and each tool
    call appears ``k`` times (prompt followed by the call).  Entities with ``k = 0`` contribute nothing.
    """
    allowed = {"statement", "paraphrase", "mcqa"}
    if not surfaces or not set(surfaces) <= allowed:
        raise ValueError(f"surfaces must be a non-empty subset of {sorted(allowed)}, got {surfaces!r}")
    rng = np.random.default_rng(seed)
    texts: list[str] = []
    for i in range(len(world.entities)) if entities is None else entities:
        for _ in range(world.exposure[i]):
            for r in world.relations:
                kind = surfaces[int(rng.integers(len(surfaces)))]
                if kind == "mcqa":
                    prompt, answer, _ = mcqa_item(world, i, r.name, rng)
                    texts.append(f"{prompt} {answer} {EOS}")
                else:
                    t = 0 if kind == "statement" or not r.paraphrases else 1 + int(rng.integers(len(r.paraphrases)))
                    texts.append(f"{statement(world, i, r.name, t)} {EOS}")
            for tool in tools:
                prompt, call = tool_call_item(world, i, tool)
                texts.append(f"{prompt} {call} {EOS}")
    return [texts[j] for j in rng.permutation(len(texts))]
