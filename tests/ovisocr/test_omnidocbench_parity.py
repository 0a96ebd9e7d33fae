"""Parity with the official OmniDocBench evaluation on constructed fixture pages.

``data/omnidocbench_fixture_gt.json`` (OmniDocBench annotation format) and ``data/omnidocbench_fixture_pred.json``
(image name -> Markdown) are our constructed pages; ``data/omnidocbench_expected.json`` holds the numbers the official
code produced on them (``tools/omnidocbench_parity.py``; per page from a run on that page alone, overall and
per-attribute from one run on all pages).  Every number must agree to 1e-9.
"""

import json
import math
from pathlib import Path

import pytest

from icml26.ovisocr.metrics import OFFICIAL_COMMIT, evaluate, load_omnidocbench

DATA = Path(__file__).parent / "data"
EXPECTED = json.loads((DATA / "omnidocbench_expected.json").read_text("utf-8"))
PRED = json.loads((DATA / "omnidocbench_fixture_pred.json").read_text("utf-8"))
PAGES = {p.name: p for p in load_omnidocbench(DATA / "omnidocbench_fixture_gt.json")}
PAGE_KEYS = {
    "TextEdit": "text_edit",
    "FormulaEdit": "formula_edit",
    "TEDS": "teds_page",
    "TEDS-S": "teds_s_page",
    "ReadingOrder": "reading_order",
    "Overall": "overall",
}


def same(ours, theirs) -> bool:
    ours = None if isinstance(ours, float) and math.isnan(ours) else ours
    if ours is None or theirs is None:
        return ours is None and theirs is None
    return abs(ours - theirs) <= 1e-9


def test_fixture_provenance():
    assert EXPECTED["official"]["commit"] == OFFICIAL_COMMIT
    assert len(PAGES) == len(EXPECTED["pages"]) >= 30
    assert set(PAGES) == set(PRED) == set(EXPECTED["pages"])


@pytest.mark.parametrize("name", sorted(EXPECTED["pages"]))
def test_page_equals_official(name):
    r = evaluate([PAGES[name]], {name: PRED[name]})["pages"][0]
    want = EXPECTED["pages"][name]
    bad = {k: (r[ours], want[k]) for k, ours in PAGE_KEYS.items() if not same(r[ours], want[k])}
    assert not bad, bad
    assert len(r["teds"]) == len(want["tables"])
    for a, a_s, t in zip(r["teds"], r["teds_s"], want["tables"]):
        assert same(a, t["TEDS"]) and same(a_s, t["TEDS-S"])


@pytest.fixture(scope="module")
def full():
    return evaluate(list(PAGES.values()), PRED)


def test_overall_equals_official(full):
    want = EXPECTED["overall"]
    keys = [*PAGE_KEYS, "TEDS_all_tables", "TEDS-S_all_tables"]
    bad = {k: (full[k], want[k]) for k in keys if not same(full[k], want[k])}
    assert not bad, bad


@pytest.mark.parametrize("group", ["by_page_attribute", "by_element_attribute"])
def test_attribute_breakdowns_equal_official(full, group):
    want, ours = EXPECTED["overall"][group], full[group]
    assert set(ours) == set(want)
    for label, vals in want.items():
        assert set(ours[label]) == set(vals), label
        for k, v in vals.items():
            assert same(ours[label][k], v), (label, k, ours[label][k], v)


def test_pages_in_the_full_run_equal_official(full):
    """Per-page numbers of the all-pages run (the official run moves formulas read as text by a dataset-wide rule)."""
    by_name = {p["name"]: p for p in full["pages"]}
    for element, key in (
        ("text_block", "text_edit"),
        ("display_formula", "formula_edit"),
        ("reading_order", "reading_order"),
    ):
        for name, v in EXPECTED["per_page_in_full_run"][element].items():
            assert same(by_name[name][key], v), (element, name)


def test_loader_reads_the_annotation_schema():
    p = PAGES["p15_truncated.jpg"]
    assert p.attributes["data_source"] == "book" and p.relations[0]["relation_type"] == "truncated"
    assert [d["category_type"] for d in PAGES["p13_ignore_predicted.jpg"].layout_dets][:2] == ["header", "text_block"]
    assert PAGES["p55_special_issue.jpg"].attributes["special_issue"] == ["fuzzy_scan", "table_watermark"]
