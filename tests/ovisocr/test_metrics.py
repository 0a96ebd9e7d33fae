"""OmniDocBench metrics against hand-computed values (spec section 7) and input validation."""

import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rapidfuzz.distance import Levenshtein

from icml26.ovisocr.metrics import (
    Page,
    evaluate,
    evaluate_page,
    load_omnidocbench,
    match_elements,
    ned,
    normalize_formula,
    normalize_table,
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
    # escapes \_ \& \% alone do not make the body LaTeX: the text is kept and only cleaned
    assert normalize_text(r"$a\_b$") == "a_b"


def test_normalize_formula_follows_the_official_substring_deletions():
    # \mathbf is deleted as a substring (its braces stay), \left \right \tag and spaces go, then lowercase
    assert normalize_formula(r"\[ \mathbf{x}^{2} + \left( Y \right) \tag{1} \]") == "{x}^{2}+(y)"
    assert normalize_formula("$$ a \\quad b $$") == "ab"
    assert normalize_formula(r"a \, b") == r"a\,b"  # \, is not in the official list
    assert normalize_formula(r"\begin{aligned} x \end{aligned}") == "x"


def test_normalize_table_unwraps_header_and_body():
    t = "<table><thead><tr><th>a</th></tr></thead><tbody><tr><td style='x'>b</td></tr></tbody></table>"
    assert (
        normalize_table(t)
        == '<html><body><table border="1" ><tr><td>a</td></tr><tr><td>b</td></tr></table></body></html>'
    )
    assert normalize_table("no table") == ""


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
    assert teds("<table></table>", "<table></table>") == 0.0  # no cell on either side: 0 as in the official run
    assert teds(G.upper(), G) == 0.0  # the official normalisation only sees lower-case '<table'
    assert teds(G.upper(), G, structure_only=True, normalize=False) == 1.0  # tags are case-free to lxml


def test_teds_normalize_flag():
    head = "<table><thead><tr><td>ab</td><td>cd</td></tr></thead><tr><td>ef</td><td>gh</td></tr></table>"
    assert teds(head, G) == 1.0
    assert teds(head, G, normalize=False) < 1.0  # the raw tree has a thead node


def test_reading_order():
    assert reading_order_ned([0, 1, 2], [0, 1, 2]) == 0.0
    assert reading_order_ned([0, 1], [1, 0]) == 1.0
    assert reading_order_ned([1, 2, 3, 4], [3, 1]) == 0.75  # unmatched GT blocks count as missing
    assert reading_order_ned((1.0, 2.0), iter([1, 2])) == 0.0


def test_page_score_is_pooled_not_mean_of_ratios():
    # pairs (d=1, u=2) and (d=0, u=8): pooled 0.1, mean of ratios 0.25
    gt = [{"type": "text", "content": "ab"}, {"type": "text", "content": "cdefghij"}]
    r = evaluate_page("a\n\ncdefghij", gt)
    assert r["text_edit"] == pytest.approx(0.1)
    assert (r["text_edit_d"], r["text_edit_u"]) == (1, 10)


def test_shuffled_blocks_exact_text_give_zero_edit_but_order_error():
    gt = [{"type": "text", "content": w} for w in ("alpha one", "beta two", "gamma three")]
    r = evaluate_page("gamma three\n\nalpha one\n\nbeta two", gt)
    assert r["text_edit"] == 0.0
    assert r["reading_order"] == pytest.approx(ned([1, 2, 3], [3, 1, 2]))


def test_fragments_are_merged():
    assert match_elements(["helloworld"], ["hello", "world"]) == [([0], [0, 1])]
    # simple: one Hungarian assignment, the left-over prediction as a prediction-only group
    assert match_elements(["helloworld"], ["hello", "world"], method="simple") == [([0], [0]), ([], [1])]


def test_many_to_one_and_ignore_categories_in_match_elements():
    gt = ["alphabetagamma", "deltaepsilon"]
    assert match_elements(gt, ["alphabetagammadeltaepsilon"]) == [([0, 1], [0])]
    # a prediction close to a header (an ignore category) leaves the matching
    groups = match_elements(
        ["runninghead", "bodytext"], ["runninghead", "bodytext"], gt_categories=["header", "text_block"]
    )
    assert groups == [([1], [1])]


def test_overall_formula():
    assert overall(0.1, 80, 90) == pytest.approx(86.6666667)


def test_split_markdown():
    md = (
        "# Title\n\nhello $x^2$\n\n$$\nx^{2}\n$$\n\n<table><tr><td>1</td></tr></table>\n\n"
        "| a | b |\n|---|---|\n| 1 | 2 |\n\n\\begin{tabular}{c} 1 \\end{tabular}"
    )
    sp = split_markdown(md)
    assert sp["text"] == ["# Title", "hello $x^2$"]
    assert sp["formula"] == ["\\[ x^{2} \\]"] and sp["inline_formula"] == ["\\[x^2\\]"]
    assert len(sp["table"]) == 2 and len(sp["latex_table"]) == 1
    assert sp["errors"] == 0
    bad = split_markdown("<table><tr><td>1</td>")
    assert bad["errors"] == 1 and bad["table"] == [] and len(bad["text"]) == 1  # an unclosed table stays text
    assert split_markdown("one\ntwo")["text"] == ["one", "two"]  # single-newline fallback


def test_evaluate_report_keys_and_call_forms():
    gt = [[{"type": "text", "content": "a b"}, {"type": "table", "content": G}]]
    r = evaluate(gt, ["a b\n\n" + G])
    assert r["TextEdit"] == 0.0 and r["TEDS"] == 1.0 and r["TEDS-S"] == 1.0 and r["ReadingOrder"] == 0.0
    for k in ("TextEdit", "FormulaEdit", "TEDS", "TEDS-S", "ReadingOrder", "Overall"):
        assert k in r
    assert math.isnan(r["FormulaEdit"])
    assert r["Overall"] == pytest.approx(200 / 3)  # no formula anywhere counts 0, as in the official table generator
    page = Page.from_elements(gt[0], name="x.jpg")
    assert evaluate([page], {"x.jpg": "a b\n\n" + G})["TEDS"] == 1.0
    r2 = evaluate([page, Page.from_elements(gt[0], name="y.jpg")], {"x.jpg": "a b"})
    assert r2["missing"] == ["y.jpg"] and len(r2["pages"]) == 1


def test_bad_inputs_name_the_argument():
    gt = [[{"type": "text", "content": "a"}]]
    with pytest.raises(ValueError, match="same length"):
        evaluate(gt, [])
    with pytest.raises(ValueError, match="must not be empty"):
        evaluate([], [])
    with pytest.raises(TypeError, match="GT first"):
        evaluate(["a"], gt)
    with pytest.raises(ValueError, match="no entry"):
        evaluate([Page.from_elements(gt[0], name="a.jpg")], {"b.jpg": "a"})
    with pytest.raises(TypeError, match="pred_md"):
        evaluate_page(None, [])
    with pytest.raises(TypeError, match=r"predictions\['a.jpg'\]"):
        evaluate([Page.from_elements(gt[0], name="a.jpg")], {"a.jpg": None})
    with pytest.raises(ValueError, match="type"):
        evaluate_page("x", [{"type": "figure", "content": "x"}])
    with pytest.raises(ValueError, match="method"):
        match_elements([], [], method="fuzzy")
    with pytest.raises(TypeError, match="pred"):
        match_elements(["a"], [""])
    with pytest.raises(ValueError, match="gt_categories"):
        match_elements(["a"], ["a"], gt_categories=[])
    with pytest.raises(TypeError, match="pred_html"):
        teds(None, G)
    with pytest.raises(TypeError, match="pred_idx"):
        reading_order_ned([1], None)
    with pytest.raises(ValueError, match="layout_dets"):
        Page("p.jpg", ({"text": "no category"},))


def test_loader_rejects_malformed_files(tmp_path):
    with pytest.raises(TypeError, match="path"):
        load_omnidocbench(None)
    f = tmp_path / "a.json"
    f.write_text(json.dumps({"not": "a list"}))
    with pytest.raises(ValueError, match="JSON list"):
        load_omnidocbench(f)
    f.write_text(json.dumps([{"layout_dets": []}]))
    with pytest.raises(ValueError, match="image_path"):
        load_omnidocbench(f)
    page = {"layout_dets": [], "page_info": {"image_path": "x/p.jpg"}}
    f.write_text(json.dumps([page, page]))
    with pytest.raises(ValueError, match="occurs twice"):
        load_omnidocbench(f)
    rel = {"source_anno_id": 0, "target_anno_id": 9, "relation_type": "truncated"}
    f.write_text(json.dumps([{**page, "layout_dets": [{"category_type": "text_block", "text": "a", "order": 1,
                                                       "anno_id": 0}], "extra": {"relation": [rel]}}]))  # fmt: skip
    (p,) = load_omnidocbench(f)
    assert p.name == "p.jpg"
    with pytest.raises(ValueError, match="anno_id 9"):
        evaluate([p], {"p.jpg": "a"})
