"""Renderer determinism, cascade and bootstrap behaviour, bad inputs."""

import io

import numpy as np
import pytest

from icml26.ovisocr.data import PageSpec, SyntheticPages, render_page
from icml26.ovisocr.metrics import evaluate
from icml26.ovisocr.ocr import CascadeParser, OCREngine, TesseractEngine, bootstrap_labels, ocr_to_latex, snap_words


class OracleEngine(OCREngine):
    """Returns queued strings: lets the cascade/bootstrap logic be tested without an OCR model."""

    def __init__(self, answers):
        self.answers = list(answers)

    def recognize(self, crops):
        return [self.answers.pop(0) if self.answers else "" for _ in crops]


def _png(img):
    b = io.BytesIO()
    img.save(b, format="PNG")
    return b.getvalue()


@pytest.mark.parametrize("layout", ["1col", "2col"])
def test_render_deterministic(layout):
    a = render_page(np.random.default_rng(3), layout)
    b = render_page(np.random.default_rng(3), layout)
    assert _png(a[0]) == _png(b[0]) and a[1] == b[1]
    assert a[0].size == (128, 128)
    if layout == "2col":
        assert {e["column"] for e in a[2]} == {0, 1}
        assert [e["column"] for e in a[2]] == sorted(e["column"] for e in a[2])  # left column first


def test_truth_scores_perfectly():
    ds = SyntheticPages(6, 0, PageSpec(table_rule_prob=0.5))
    r = evaluate([ds[i]["elements"] for i in range(6)], [ds[i]["markdown"] for i in range(6)])
    assert r["TextEdit"] == 0.0 and r["ReadingOrder"] == 0.0
    assert np.isnan(r["TEDS"]) or r["TEDS"] == 1.0


def test_bad_inputs():
    with pytest.raises(ValueError, match="layout"):
        render_page(np.random.default_rng(0), "3col")
    with pytest.raises(TypeError, match="rng"):
        render_page(0, "1col")
    with pytest.raises(ValueError, match="table_rule_prob"):
        PageSpec(table_rule_prob=2.0)
    with pytest.raises(ValueError, match="n must"):
        SyntheticPages(0, 0)
    cp = CascadeParser(OracleEngine([]))
    with pytest.raises(ValueError, match="non-empty"):
        cp.parse(np.zeros((0, 0), dtype=np.uint8))
    with pytest.raises(TypeError, match="PIL.Image or numpy"):
        cp.parse("page.png")
    with pytest.raises(ValueError, match="engines"):
        bootstrap_labels([], [], [])


def test_cascade_orders_top_to_bottom_and_finds_ruled_tables():
    spec = PageSpec(table_rule_prob=1.0)
    rng = np.random.default_rng(1)
    img, md, els = render_page(rng, "1col", spec)
    blocks = CascadeParser(OracleEngine([])).layout(img)
    tops = [b["bbox"][1] for b in blocks]
    assert tops == sorted(tops)
    n_tables = sum(e["type"] == "table" for e in els)
    assert sum(b["kind"] == "table" for b in blocks) == n_tables


def test_helpers():
    assert snap_words("Cat d0g", ["cat", "dog"]) == (["cat", "dog"], 0)
    assert ocr_to_latex("x2 + y = 3") == (["x", "^{2}", "+", "y", "=", "3"], True)
    assert ocr_to_latex("x % y")[1] is False


def test_bootstrap_keeps_layout_with_oracle_text():
    ds = SyntheticPages(4, 2)
    answers = []
    for i in range(4):
        for e in ds[i]["elements"]:
            if e["type"] == "text":
                answers += [" ".join(ln) for ln in e["lines"]]
            elif e["type"] == "table":
                answers += [c for row in e["cells"] for c in row]
            else:
                answers += [e["content"].replace("^{2}", "2").replace("_{1}", "1")]
    labels, keep = bootstrap_labels(
        [ds.pil(i) for i in range(4)], [ds[i]["elements"] for i in range(4)], [OracleEngine(answers)]
    )
    assert keep.all()
    from icml26.ovisocr.data import elements_to_markdown

    r = evaluate([ds[i]["elements"] for i in range(4)], [elements_to_markdown(lab) for lab in labels])
    assert r["TextEdit"] == 0.0 and r["FormulaEdit"] == 0.0


@pytest.mark.skipif(not TesseractEngine.available(), reason="tesseract-ocr not installed")
def test_tesseract_cascade_on_clean_text_page():
    spec = PageSpec(type_probs=(1.0, 0.0, 0.0))
    img, md, els = render_page(np.random.default_rng(0), "1col", spec)
    pred = CascadeParser(TesseractEngine()).parse(img)
    assert evaluate([els], [pred])["TextEdit"] < 0.34


def test_rapidocr_cascade_on_clean_text_page():
    pytest.importorskip("rapidocr_onnxruntime")
    from icml26.ovisocr.ocr import RapidOCREngine

    spec = PageSpec(type_probs=(1.0, 0.0, 0.0))
    img, md, els = render_page(np.random.default_rng(0), "1col", spec)
    pred = CascadeParser(RapidOCREngine()).parse(img)
    assert evaluate([els], [pred])["TextEdit"] < 0.2
