"""Issue 36: the verdicts docs/SLUG.md quotes are the verdicts of the shipped reference run results/SLUG/.

A paper page states each statement's verdict in a table row that starts with the statement id in backticks
(``| `id` | claim | **holds** | ...``; ``{a,b}`` in an id stands for several ids) or in a bullet
(``- `id` holds (...)``).  Every such verdict must be the one results/SLUG/result.json records, and every statement
of the reference run must have one, so the page and the numbers behind it cannot drift apart."""

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = sorted(p for p in (ROOT / "docs").glob("*.md") if (ROOT / "results" / p.stem / "result.json").exists())
VERDICT = re.compile(
    r"^(?:(?:claim|check|precondition),? )?(does not hold|inconclusive|holds|passes|pass|fails)\b(?! if)"
)
SYNONYM = {"passes": "holds", "pass": "holds", "fails": "does not hold"}
# statements a page quotes in another shape, with where to find them
QUOTED_ELSEWHERE = {
    "ski_rental": (
        re.compile(r"^(clamp|range_argmin)_beats_(psk_det|clamp)_(bimodal|geometric|gaussian)_lam"),
        "the per-family table (one row per family and lambda, one column per comparison)",
    ),
}


def _expand(token: str) -> list[str]:
    m = re.match(r"^(.*?)\{([^}]*)\}(.*)$", token)
    if not m:
        return [token]
    return [x for alt in m.group(2).split(",") for x in _expand(m.group(1) + alt + m.group(3))]


def quoted_verdicts(text: str, ids: set[str]) -> list[tuple[int, str, str]]:
    """(line number, statement id, verdict) for every verdict the page states."""
    out = []
    for n, line in enumerate(text.splitlines(), 1):
        if line.startswith("|"):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            head, rest = cells[0], cells[1:]
        elif line.startswith("- `"):
            head, rest = line[2:], [line[2:].split("`", 2)[-1].lstrip(": ")]
        else:
            continue
        if not head.startswith("`"):
            continue
        tokens = re.findall(r"`([^`]+)`", head) if line.startswith("|") else [head.split("`")[1]]
        found = [i for t in tokens for i in _expand(t) if i in ids]
        if not found:
            continue
        for cell in rest:
            v = VERDICT.match(cell.replace("**", "").strip())
            if v:
                out += [(n, i, SYNONYM.get(v.group(1), v.group(1))) for i in found]
                break
    return out


@pytest.mark.parametrize("doc", DOCS, ids=[p.stem for p in DOCS])
def test_docs_quote_the_reference_verdicts(doc):
    claims = {
        c["id"]: c["verdict"] for c in json.loads((ROOT / "results" / doc.stem / "result.json").read_text())["claims"]
    }
    quoted = quoted_verdicts(doc.read_text(), set(claims))
    wrong = [f"line {n}: {i} says {v!r}, results/ says {claims[i]!r}" for n, i, v in quoted if claims[i] != v]
    assert not wrong, f"docs/{doc.name} disagrees with results/{doc.stem}/result.json:\n" + "\n".join(wrong)
    missing = sorted(set(claims) - {i for _, i, _ in quoted})
    if doc.stem in QUOTED_ELSEWHERE:
        pattern, _where = QUOTED_ELSEWHERE[doc.stem]
        missing = [i for i in missing if not pattern.match(i)]
    assert not missing, f"docs/{doc.name} states no verdict for {missing} (results/{doc.stem}/result.json has them)"


def test_the_parser_reads_both_forms_and_catches_a_wrong_verdict():
    text = "| `a{1,2}` | claim | **holds** | x |\n| `b` | check | rule: holds if x |\n- `c` does not hold (0.3)\n"
    assert quoted_verdicts(text, {"a1", "a2", "b", "c"}) == [
        (1, "a1", "holds"),
        (1, "a2", "holds"),
        (3, "c", "does not hold"),
    ]


COUNTS = re.compile(r"\b(claims|checks|preconditions):? \**(\d+)/(\d+)\**\s*(?:hold|pass)", re.I)


@pytest.mark.parametrize("doc", DOCS, ids=[p.stem for p in DOCS])
def test_docs_quote_the_reference_counts(doc):
    """Every "Claims: a/b hold" (checks a/b pass, preconditions a/b hold) on the page is the reference run's count."""
    counts = json.loads((ROOT / "results" / doc.stem / "result.json").read_text())["counts"]
    for kind, got, total in COUNTS.findall(doc.read_text()):
        k = counts[kind.lower().rstrip("s")]
        assert (int(got), int(total)) == (k["holds"], sum(k.values())), (
            f"docs/{doc.name} says {kind} {got}/{total}; "
            f"results/{doc.stem}/result.json has {k['holds']}/{sum(k.values())}"
        )
