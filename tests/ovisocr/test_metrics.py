"""OmniDocBench metrics against hand-computed values (spec section 7)."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rapidfuzz.distance import Levenshtein

from icml26.ovisocr.metrics import (
    evaluate,
    evaluate_page,
    match_elements,
    ned,
    normalize_formula,
    normalize_text,
    overall,
    reading_order_ned,
    split_markdown,
    teds,
)

G = "<table><tr><td>ab</td><td>cd</td></tr><tr><td>ef</td><td>gh</td></tr></table>"


def test_ned_basics():
    assert ned("abc", "abc") == 0.0
    assert ned("abc", "xyz") == 1.0
    assert ned("abc", "") == 1.0
    assert ned("", "") == 0.0


@given(st.text(max_size=20), st.text(max_size=20))
@settings(max_examples=60, deadline=None)
def test_ned_symmetric_and_matches_rapidfuzz(a, b):
    assert ned(a, b) == pytest.approx(ned(b, a))
    assert 0.0 <= ned(a, b) <= 1.0
    assert ned(a, b) == pytest.approx(Levenshtein.normalized_distance(a, b))


def test_clean_string():
    assert normalize_text("Hello, World!\n") == "HelloWorld"
    assert normalize_text("中文 text") == "中文text"
    # inline LaTeX with ^ _ \ goes through pylatexenc first (which keeps x^2 as text), then is cleaned
    assert normalize_text(r"$\alpha_1$ ok") == "α_1ok"
    assert normalize_text("$x^2$") == "x2"


def test_normalize_formula():
    assert normalize_formula(r"\[ \mathbf{x}^{2} + \left( Y \right) \tag{1} \]") == "x^{2}+(y)"
    assert normalize_formula("$$ a \\quad b $$") == "ab"


def test_teds_worked_example_with_node_count():
    # n = element nodes below <table> = 2 tr + 4 td = 6
    assert teds(G, G) == 1.0
    changed = G.replace(">ab<", ">ac<")  # rename cost NED(['a','b'], ['a','c']) = 0.5
    assert teds(changed, G) == pytest.approx(1 - 0.5 / 6)
    assert teds(changed, G, structure_only=True) == 1.0
    merged = "<table><tr><td>ab</td><td>cd</td></tr><tr><td colspan='2'>efgh</td></tr></table>"
    assert teds(merged, G, structure_only=True) == pytest.approx(1 - 2 / 6)  # rename 1 (colspan) + 1 deletion
    extra = G.replace("</table>", "<tr><td>ij</td><td>kl</td></tr></table>")
    assert teds(extra, G) < 1.0
    assert teds("", G) == 0.0 and teds(G, "") == 0.0
    assert teds("no table here", G) == 0.0


def test_reading_order():
    assert reading_order_ned([0, 1, 2], [0, 1, 2]) == 0.0
    assert reading_order_ned([0, 1], [1, 0]) == 1.0


def test_page_score_is_pooled_not_mean_of_ratios():
    # pairs (d=1, u=2) and (d=0, u=8): pooled 0.1, mean of ratios 0.25
    gt = [{"type": "text", "content": "ab"}, {"type": "text", "content": "cdefghij"}]
    r = evaluate_page("a\n\ncdefghij", gt)
    assert r["text_edit"] == pytest.approx(0.1)


def test_shuffled_blocks_exact_text_give_zero_edit_but_order_error():
    gt = [{"type": "text", "content": w} for w in ("alpha one", "beta two", "gamma three")]
    r = evaluate_page("gamma three\n\nalpha one\n\nbeta two", gt)
    assert r["text_edit"] == 0.0
    assert r["reading_order"] == pytest.approx(ned([0, 1, 2], [2, 0, 1]))


def test_fragments_are_merged():
    m = match_elements(["helloworld"], ["hello", "world"])
    assert m == [([0], [0, 1])]


def test_overall_formula():
    assert overall(0.1, 80, 90) == pytest.approx(86.6666667)


def test_split_markdown_and_malformed_tables():
    md = "# Title\n\nhello\n\n$$\nx^{2}\n$$\n\n<table><tr><td>1</td></tr></table>\n\n| a | b |\n|---|---|\n| 1 |"
    sp = split_markdown(md)
    assert sp["text"] == ["Title", "hello"] and sp["formula"] == ["x^{2}"] and len(sp["table"]) == 2
    assert sp["errors"] == 1  # the ragged pipe row
    assert [c for c, _ in sp["order"]] == ["text", "text", "formula", "table", "table"]
    bad = split_markdown("<table><tr><td>1</td>")
    assert bad["errors"] == 1 and len(bad["table"]) == 1


def test_evaluate_report_keys_and_errors():
    gt = [[{"type": "text", "content": "a b"}, {"type": "table", "content": G}]]
    r = evaluate(["a b\n\n" + G], gt)
    assert r["TextEdit"] == 0.0 and r["TEDS"] == 1.0 and r["TEDS-S"] == 1.0
    for k in ("TextEdit", "FormulaEdit", "TEDS", "TEDS-S", "ReadingOrder", "Overall"):
        assert k in r
    with pytest.raises(ValueError, match="same length"):
        evaluate(["a"], [])
    with pytest.raises(ValueError, match="must not be empty"):
        evaluate([], [])
    with pytest.raises(TypeError, match="pred_md"):
        evaluate_page(None, [])
    with pytest.raises(ValueError, match="type"):
        evaluate_page("x", [{"type": "figure", "content": "x"}])
    with pytest.raises(ValueError, match="method"):
        match_elements([], [], method="fuzzy")
