"""OvisOCR (reconstructed at toy scale): end-to-end page-to-Markdown parsing, OmniDocBench metrics, an OCR cascade.

Document parsers usually crop a page into regions, OCR each crop and merge the pieces, so layout and ordering
errors of one stage propagate to the next.  OvisOCR maps the whole page to Markdown in one model, trained first on
labels bootstrapped from a specialised OCR perceiver (cleaned by a general model) and then with rewards specific
to each element type (edit distance for text, TEDS for tables, a formula score for formulas).  We ship the
OmniDocBench end-to-end metrics as a library, a crop-OCR-merge cascade on RapidOCR / Tesseract, OCR-bootstrapped
labels with deterministic validators, a tiny image-to-token parser and GRPO with per-category rewards.

Notation to names:

==========================================  =====================================================================
paper / OmniDocBench                        here
==========================================  =====================================================================
Text Edit, Formula Edit (v1.0), TEDS(-S)    :func:`metrics.evaluate` keys ``TextEdit``, ``FormulaEdit``, ``TEDS``,
                                            ``TEDS-S``, ``ReadingOrder``, ``Overall``
``clean_string`` / ``normalized_formula``   :func:`normalize_text` / :func:`normalize_formula`
quick_match / simple_match                  :func:`match_elements` (``method="quick"`` / ``"simple"``)
OmniDocBench annotation JSON                :func:`load_omnidocbench` -> :class:`Page`
specialized perceiver + general reasoner    :func:`bootstrap_labels` (OCR on known-layout crops + validators)
pipeline tools (crop-OCR-merge)             :class:`CascadeParser` on :class:`RapidOCREngine` / :class:`TesseractEngine`
end-to-end model                            :class:`TinyPageParser` (+ :class:`PageTokenizer`)
element-aware optimisation                  :class:`CategoryReward`, :func:`grpo_step`
CDM (formula)                               not reproduced (needs LaTeX): formula edit distance instead
==========================================  =====================================================================

Example::

    from icml26.ovisocr import evaluate, load_omnidocbench
    pages = load_omnidocbench("OmniDocBench.json")            # or [[{"type": "text", "content": "Hello"}, ...]]
    scores = evaluate(pages, {"page_001.jpg": my_markdown})   # image name -> Markdown (or a list, one per page)
    scores["TextEdit"], scores["TEDS"], scores["Overall"]
"""

from .data import FORMULA_TOKENS, WORDS, PageSpec, SyntheticPages, elements_to_markdown, render_page, table_html
from .metrics import (
    REPORT_KEYS,
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
from .model import PageTokenizer, TinyPageParser
from .ocr import (
    CascadeParser,
    OCREngine,
    RapidOCREngine,
    TesseractEngine,
    available_engines,
    bootstrap_labels,
    ocr_to_latex,
    snap_words,
)
from .rl import CategoryReward, group_advantages, grpo_step, page_reward

__all__ = [
    "FORMULA_TOKENS",
    "WORDS",
    "PageSpec",
    "SyntheticPages",
    "elements_to_markdown",
    "render_page",
    "table_html",
    "REPORT_KEYS",
    "Page",
    "evaluate",
    "evaluate_page",
    "load_omnidocbench",
    "match_elements",
    "ned",
    "normalize_formula",
    "normalize_table",
    "normalize_text",
    "overall",
    "reading_order_ned",
    "split_markdown",
    "teds",
    "PageTokenizer",
    "TinyPageParser",
    "CascadeParser",
    "OCREngine",
    "RapidOCREngine",
    "TesseractEngine",
    "available_engines",
    "bootstrap_labels",
    "ocr_to_latex",
    "snap_words",
    "CategoryReward",
    "grpo_step",
    "group_advantages",
    "page_reward",
]
