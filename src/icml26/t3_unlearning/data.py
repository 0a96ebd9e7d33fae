"""A TOFU-like benchmark we generate ourselves: fictitious authors, their QA pairs, and invented world facts.

TOFU (Maini et al. 2024) fine-tunes a model on 4,000 question-answer pairs about 200 invented authors and asks
it to forget 1/5/10% of the authors.  Its data and weights cannot be downloaded here, so
:func:`make_fictitious_authors` builds the same structure procedurally, from a seed:

* each author (an invented two-word name) has one value for each of :data:`AUTHOR_RELATIONS` (birth city,
  year, genre, two book titles, parents' occupations, award, theme, pen colour);
* every attribute gives one QA item: the prompt ``"q : <question> a :"``, the ground-truth answer (the
  statement template), a *paraphrased* answer (a second template with the same fact) and five *perturbed*
  answers (the paraphrase template with wrong values from the same list), as TOFU's evaluation needs;
* a "world facts" set (invented country -> capital) plays TOFU's Real Authors / World Facts role: knowledge
  the model should keep, scored with its true answer against three false options;
* biographies: each fact also appears once as a plain sentence in the paraphrase template, so the model has
  seen each fact in two wordings (TOFU's base model learns its authors from the QA pairs and generalises to
  paraphrases; a tiny model needs to see both).

:func:`split_forget` splits by author: ``forget`` holds every QA item of a ``percent``% of the authors, and
``retain`` the rest, so no author is in both.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from icml26.common.facts import EOS, FactWorld, Relation, WordTokenizer, make_fact_world, make_names

__all__ = [
    "AUTHOR_RELATIONS",
    "QAItem",
    "AuthorsDataset",
    "make_fictitious_authors",
    "split_forget",
    "N_PERTURBED",
    "ForgetSplit",
    "training_texts",
]

N_PERTURBED = 5


def _words(seed: int, n: int, suffix: str) -> tuple[str, ...]:
    """``n`` distinct invented words ending in ``suffix`` (fixed lists, so the vocabulary is stable)."""
    return tuple(w + suffix for w in make_names(n, seed=seed, n_words=1))


_ADJ = ("silent", "broken", "golden", "hidden", "last", "winter", "crimson", "distant", "velvet", "hollow", "iron")
_NOUN = ("river", "garden", "lantern", "harbour", "mirror", "orchard", "compass", "tower", "meadow", "letter")
_TITLES = tuple(f"{a}_{n}" for a in _ADJ for n in _NOUN)  # one token per title, e.g. "silent_river"

AUTHOR_RELATIONS: tuple[Relation, ...] = (
    Relation(
        "city",
        _words(101, 30, "ton"),
        "{subject} was born in {value} .",
        "where was {subject} born ?",
        ("the birthplace of {subject} is the city of {value} .",),
    ),
    Relation(
        "year",
        tuple(str(y) for y in range(1931, 1991, 2)),
        "{subject} was born in the year {value} .",
        "in which year was {subject} born ?",
        ("the birth year of {subject} is {value} .",),
    ),
    Relation(
        "genre",
        (
            "fantasy",
            "mystery",
            "poetry",
            "romance",
            "horror",
            "satire",
            "drama",
            "thriller",
            "memoir",
            "western",
            "fable",
            "noir",
        ),
        "{subject} writes {value} books .",
        "what genre does {subject} write ?",
        ("the genre of {subject} is {value} .",),
    ),
    Relation(
        "book1",
        _TITLES[0::2],
        "the first book by {subject} is called {value} .",
        "what is the first book by {subject} ?",
        ("{subject} made a debut with the novel {value} .",),
    ),
    Relation(
        "book2",
        _TITLES[1::2],
        "the best known book by {subject} is {value} .",
        "what is the best known book by {subject} ?",
        ("readers know {subject} best for {value} .",),
    ),
    Relation(
        "father",
        (
            "baker",
            "sailor",
            "doctor",
            "farmer",
            "tailor",
            "miner",
            "pilot",
            "judge",
            "clerk",
            "potter",
            "chemist",
            "carpenter",
        ),
        "the father of {subject} was a {value} .",
        "what was the job of the father of {subject} ?",
        ("{subject} grew up with a father who worked as a {value} .",),
    ),
    Relation(
        "mother",
        (
            "nurse",
            "teacher",
            "painter",
            "singer",
            "lawyer",
            "dancer",
            "weaver",
            "florist",
            "architect",
            "librarian",
            "jeweller",
            "surgeon",
        ),
        "the mother of {subject} was a {value} .",
        "what was the job of the mother of {subject} ?",
        ("{subject} grew up with a mother who worked as a {value} .",),
    ),
    Relation(
        "award",
        _words(202, 20, "prize"),
        "{subject} won the {value} award .",
        "which award did {subject} win ?",
        ("{subject} received the {value} award .",),
    ),
    Relation(
        "theme",
        (
            "grief",
            "exile",
            "memory",
            "faith",
            "power",
            "childhood",
            "war",
            "identity",
            "nature",
            "love",
            "justice",
            "family",
        ),
        "the books of {subject} are about {value} .",
        "what are the books of {subject} about ?",
        ("the main theme of {subject} is {value} .",),
    ),
    Relation(
        "ink",
        ("red", "blue", "green", "gold", "grey", "violet", "black", "silver", "amber", "indigo", "crimson", "teal"),
        "{subject} writes with {value} ink .",
        "what colour of ink does {subject} use ?",
        ("the ink of {subject} is always {value} .",),
    ),
)

_COUNTRY = Relation(
    "capital",
    _words(303, 120, "burg"),
    "the capital of {subject} is {value} .",
    "what is the capital of {subject} ?",
    ("{subject} has {value} as its capital city .",),
)


@dataclass(frozen=True)
class QAItem:
    """One evaluation item.

    ``prompt`` ends with ``"a :"``; ``answer`` is the ground truth, ``paraphrase`` the same fact in another
    template, ``perturbed`` wrong answers in the paraphrase template (TOFU's truth-ratio inputs), and
    ``options`` the true value followed by false values (used by the world-facts Prob score).  ``group`` is the
    author (or country) index; ``kind`` is ``"author"`` or ``"world"``.
    """

    prompt: str
    answer: str
    paraphrase: str
    perturbed: tuple[str, ...]
    group: int
    relation: str
    kind: str = "author"

    def text(self) -> str:
        """The training text: prompt, answer, end of sequence."""
        return f"{self.prompt} {self.answer} {EOS}"


@dataclass(frozen=True)
class AuthorsDataset:
    """Authors' QA items, world-facts QA items, biographies and the word tokenizer covering all of them."""

    authors: FactWorld
    countries: FactWorld
    qa: tuple[QAItem, ...]
    world: tuple[QAItem, ...]
    bios: tuple[str, ...]
    tokenizer: WordTokenizer

    @property
    def n_authors(self) -> int:
        return len(self.authors.entities)

    def items_of(self, authors: set[int] | frozenset[int]) -> tuple[QAItem, ...]:
        return tuple(q for q in self.qa if q.group in authors)

    def bios_of(self, authors: set[int] | frozenset[int]) -> tuple[str, ...]:
        n_rel = len(self.authors.relations)
        return tuple(b for j, b in enumerate(self.bios) if j // n_rel in authors)


def _items(world: FactWorld, i: int, rng: np.random.Generator, kind: str) -> list[QAItem]:
    out = []
    for r in world.relations:
        value = world.value(i, r.name)
        name = world.entities[i]
        wrong = [v for v in r.values if v != value]
        picks = [wrong[j] for j in rng.choice(len(wrong), size=N_PERTURBED, replace=False)]
        out.append(
            QAItem(
                prompt=f"q : {r.question.format(subject=name)} a :",
                answer=r.statement.format(subject=name, value=value),
                paraphrase=r.paraphrases[0].format(subject=name, value=value),
                perturbed=tuple(r.paraphrases[0].format(subject=name, value=v) for v in picks),
                group=i,
                relation=r.name,
                kind=kind,
            )
        )
    return out


def make_fictitious_authors(n_authors: int = 100, seed: int = 0, n_countries: int = 100) -> AuthorsDataset:
    """Generate the benchmark (deterministic for a ``seed``); see the module docstring.

    ``n_authors`` authors give ``10 n_authors`` QA items; ``n_countries`` countries give one world-facts item
    each.  The tokenizer covers every word any item or biography can contain.
    """
    if isinstance(n_authors, bool) or not isinstance(n_authors, int) or n_authors < 2:
        raise ValueError(f"n_authors must be an integer >= 2, got {n_authors!r}")
    if isinstance(n_countries, bool) or not isinstance(n_countries, int) or not 4 <= n_countries <= 120:
        raise ValueError(f"n_countries must be an integer in [4, 120], got {n_countries!r}")
    authors = make_fact_world(n_authors, relations=AUTHOR_RELATIONS, exposures=(1,), seed=seed, name_words=1)
    taken = set(authors.words())
    countries_names = [w + "land" for w in make_names(n_countries, seed=seed + 7919, taken=taken, n_words=1)]
    rng = np.random.default_rng(seed)
    capitals = rng.choice(len(_COUNTRY.values), size=n_countries, replace=False)
    countries = FactWorld(
        tuple(countries_names),
        (_COUNTRY,),
        tuple((_COUNTRY.values[c],) for c in capitals),
        tuple([1] * n_countries),
    )
    qa = tuple(q for i in range(n_authors) for q in _items(authors, i, rng, "author"))
    world = tuple(q for i in range(n_countries) for q in _items(countries, i, rng, "world"))
    # world facts score the true capital against three false ones (TOFU's 4-option Prob)
    world = tuple(QAItem(q.prompt, q.answer, q.paraphrase, q.perturbed[:3], q.group, q.relation, q.kind) for q in world)
    bios = tuple(
        r.paraphrases[0].format(subject=authors.entities[i], value=authors.value(i, r.name)) + f" {EOS}"
        for i in range(n_authors)
        for r in AUTHOR_RELATIONS
    )
    words = authors.words() | countries.words() | {"q", ":", "a", EOS}
    for q in qa + world:
        for t in (q.prompt, q.answer, q.paraphrase, *q.perturbed):
            words |= set(t.split())
    return AuthorsDataset(authors, countries, qa, world, bios, WordTokenizer(words))


@dataclass(frozen=True)
class ForgetSplit:
    """Author-disjoint forget / retain split of an :class:`AuthorsDataset` (see :func:`split_forget`)."""

    forget_authors: frozenset[int]
    retain_authors: frozenset[int]
    forget: tuple[QAItem, ...]
    retain: tuple[QAItem, ...]


def split_forget(data: AuthorsDataset, percent: float = 10, seed: int = 0) -> ForgetSplit:
    """Forget ``percent``% of the authors (at least one), chosen at random with ``seed``; retain the rest.

    TOFU's forget01/05/10 are ``percent`` 1/5/10.  Raises ``ValueError`` if ``percent`` is outside (0, 50].
    """
    if isinstance(data, AuthorsDataset) is False:
        raise TypeError(f"data must be an AuthorsDataset, got {type(data).__name__}")
    if not isinstance(percent, (int, float)) or not 0 < percent <= 50:
        raise ValueError(f"percent must lie in (0, 50], got {percent!r}")
    n = data.n_authors
    k = max(1, int(round(n * percent / 100)))
    rng = np.random.default_rng(seed)
    forget = frozenset(int(i) for i in rng.choice(n, size=k, replace=False))
    retain = frozenset(range(n)) - forget
    return ForgetSplit(forget, retain, data.items_of(forget), data.items_of(retain))


def training_texts(data: AuthorsDataset, authors: set[int] | frozenset[int]) -> list[str]:
    """What a base model is trained on: the QA pairs and biographies of ``authors`` plus all world facts (QA and
    one sentence in the paraphrase wording).  The *full* model gets every author, the *retain* model only the
    retained ones."""
    texts = [q.text() for q in data.items_of(authors)] + list(data.bios_of(authors))
    texts += [q.text() for q in data.world] + [f"{q.paraphrase} {EOS}" for q in data.world]
    return texts
