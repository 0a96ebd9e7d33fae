"""Construct the OmniDocBench parity fixture pages: GT in the official annotation format and one Markdown prediction
per page, each page aimed at one rule of the official end-to-end evaluation (see tests/ovisocr/).

Usage: ``python tools/omnidocbench_fixture_pages.py tests/ovisocr/data`` writes ``omnidocbench_fixture_gt.json`` and
``omnidocbench_fixture_pred.json``; ``tools/omnidocbench_parity.py`` then records the official numbers on them.
"""

import json
import sys

OUT = sys.argv[1]

TXT_ATTR = {"text_language": "text_english", "text_background": "white", "text_rotate": "normal"}
ZH_ATTR = {"text_language": "text_simplified_chinese", "text_background": "white", "text_rotate": "normal"}
TAB_ATTR = {
    "language": "table_en",
    "line": "full_line",
    "with_span": False,
    "include_equation": False,
    "include_background": False,
    "table_layout": "vertical",
}
PAGE_ATTRS = [
    {"data_source": "academic_literature", "language": "english", "layout": "single_column"},
    {"data_source": "book", "language": "english", "layout": "double_column"},
    {"data_source": "exam_paper", "language": "simplified_chinese", "layout": "single_column"},
]

pages, preds = [], {}


def page(name, dets, pred, relations=(), attr=0):
    pa = dict(PAGE_ATTRS[attr % len(PAGE_ATTRS)])
    pa.update({"watermark": False, "fuzzy_scan": False, "colorful_backgroud": False})
    img = f"{name}.jpg"
    layout = []
    for i, d in enumerate(dets):
        d = dict(d)
        d.setdefault("order", i + 1)
        d.setdefault("anno_id", i)
        d.setdefault("ignore", False)
        d.setdefault("poly", [0, 0, 10, 0, 10, 10, 0, 10])
        layout.append(d)
    pages.append(
        {
            "layout_dets": layout,
            "page_info": {"page_no": len(pages), "height": 100, "width": 100, "image_path": img, "page_attribute": pa},
            "extra": {"relation": [dict(r) for r in relations]},
        }
    )
    preds[img] = pred


def T(text, cat="text_block", attr=TXT_ATTR, **kw):
    return {"category_type": cat, "text": text, "attribute": dict(attr), **kw}


def F(latex, **kw):
    return {"category_type": "equation_isolated", "latex": latex, **kw}


def TAB(html, latex="", attr=TAB_ATTR, **kw):
    return {"category_type": "table", "html": html, "latex": latex, "attribute": dict(attr), **kw}


G22 = "<table><tr><td>ab</td><td>cd</td></tr><tr><td>ef</td><td>gh</td></tr></table>"
G22_LATEX = "\\begin{tabular}{cc} ab & cd \\\\ ef & gh \\end{tabular}"
P1 = "The quick brown fox jumps over the lazy dog."
P2 = "A second paragraph follows with more words in it."
P3 = "Third block of text closes the page here."
P4 = "Fourth paragraph: results are summarised below."

# 1 everything exact
page(
    "p01_exact",
    [T(P1), F("E = m c^{2}"), TAB(G22, G22_LATEX), T(P2)],
    f"{P1}\n\n$$\nE = m c^{{2}}\n$$\n\n{G22}\n\n{P2}",
)
# 2 a hallucinated block (difference 1)
page("p02_hallucinated", [T(P1), T(P2)], f"{P1}\n\nLorem ipsum dolor sit amet, consectetur.\n\n{P2}")
# 3 three GT blocks merged into one prediction paragraph (difference 2, quick_match many-to-one)
page(
    "p03_many_to_one",
    [T("Alpha beta gamma."), T("Delta epsilon zeta."), T("Eta theta iota.")],
    "Alpha beta gamma. Delta epsilon zeta. Eta theta iota.",
)
# 4 single-newline separated output (difference 2, fallback split)
page("p04_single_newline", [T(P1), T(P2), T(P3)], f"{P1}\n{P2}\n{P3}")
# 5 reading order over all GT text blocks: two of four predicted, swapped (difference 3)
page("p05_partial_order", [T(P1), T(P2), T(P3), T(P4)], f"{P3}\n\n{P1}", attr=1)
# 6 empty prediction (difference 3: official ReadingOrder 1.0)
page("p06_empty_pred", [T(P1), F("a+b=c"), TAB(G22, G22_LATEX)], "")
# 7 thead / tbody / th table (difference 4)
page(
    "p07_thead",
    [TAB(G22, G22_LATEX)],
    "<table><thead><tr><th>ab</th><th>cd</th></tr></thead><tbody><tr><td>ef</td><td>gh</td></tr></tbody></table>",
)
# 8 two same-shaped GT tables, predicted in the other order (difference 4, content-aware matching)
TA = "<table><tr><td>apple</td><td>banana</td></tr><tr><td>cherry</td><td>damson</td></tr></table>"
TB = "<table><tr><td>11</td><td>22</td></tr><tr><td>33</td><td>44</td></tr></table>"
page("p08_two_tables", [TAB(TA), TAB(TB)], f"{TB.replace('44', '45')}\n\n{TA}")
# 9 formula normalisation keeps {x} and \, (difference 5)
page("p09_mathbf", [F("\\mathbf{x} + \\, y")], "$$\nx + y\n$$")
# 10 LaTeX tabular output (difference 6)
page(
    "p10_tabular",
    [T(P1), TAB(G22, G22_LATEX)],
    f"{P1}\n\n\\begin{{tabular}}{{cc}} ab & cd \\\\ ef & gh \\end{{tabular}}",
)
# 11 colspan="abc" in the prediction (difference 7)
page(
    "p11_colspan_abc",
    [TAB(G22)],
    '<table><tr><td colspan="abc">ab</td><td>cd</td></tr><tr><td>ef</td><td>gh</td></tr></table>',
)
# 12 unclosed table in the prediction (difference 7)
page("p12_unclosed_table", [T(P1), TAB(G22)], f"{P1}\n\n<table><tr><td>ab</td><td>cd</td></tr><tr><td>ef</td>")
# 13 ignore categories predicted (difference 8)
page(
    "p13_ignore_predicted",
    [
        T("Journal of Examples 2024", "header"),
        T(P1),
        T(P2),
        T("Page 7", "page_number"),
        T("Footer text here", "footer"),
    ],
    f"Journal of Examples 2024\n\n{P1}\n\n{P2}\n\nPage 7\n\nFooter text here",
    attr=1,
)
# 14 ignore categories not predicted (difference 8)
page(
    "p14_ignore_missing",
    [T("Running header line", "header"), T(P1), T("12", "page_number"), T("Figure 1: a caption", "figure_caption")],
    f"{P1}",
)
# 15 truncated relation merged in GT
page(
    "p15_truncated",
    [T("This sentence is split across "), T(P2), T("two columns of the page.")],
    f"This sentence is split across two columns of the page.\n\n{P2}",
    relations=[{"source_anno_id": 0, "target_anno_id": 2, "relation_type": "truncated"}],
    attr=1,
)
# 16 markdown pipe table against an HTML GT table
page("p16_pipe_table", [T(P1), TAB(G22)], f"{P1}\n\n| ab | cd |\n|----|----|\n| ef | gh |\n")
# 17 one GT block predicted as three fragments
page("p17_fragments", [T(P1 + " " + P2 + " " + P3)], f"{P1}\n\n{P2}\n\n{P3}")
# 18 inline formulas in text
page(
    "p18_inline_formula",
    [T("The energy $E=mc^2$ and $\\alpha_1$ are shown."), T(P2)],
    "The energy $E=mc^{2}$ and $\\alpha_{1}$ are shown.\n\n" + P2,
)
# 19 a display formula predicted as plain text (moved to the text category)
page("p19_formula_as_text", [T(P1), F("x + y = z")], f"{P1}\n\nx + y = z")
# 20 GT array formula split into lines, predicted as two formulas
page("p20_array_formula", [F("\\begin{array}{l} a=1 \\\\ b=2 \\end{array}")], "$$\na=1\n$$\n\n$$\nb=2\n$$")
# 21 Chinese text
page(
    "p21_chinese",
    [T("这是第一段中文文本。", attr=ZH_ATTR), T("第二段文字包含数字123。", attr=ZH_ATTR)],
    "这是第一段中文文字。\n\n第二段文字包含数字123。",
    attr=2,
)
# 22 an extra predicted table whose cells enter the text matching
page(
    "p22_extra_table", [T("apple banana"), TAB(G22)], f"{G22}\n\n<table><tr><td>apple</td><td>banana</td></tr></table>"
)
# 23 character edits pooled over a page
page("p23_char_edits", [T("abcdefghij"), T("klmnopqrst"), T("uvwxyz")], "abcdefghiX\n\nklmnopqrst\n\nuvwyz")
# 24 exact blocks shuffled
page("p24_shuffled", [T(P1), T(P2), T(P3), T(P4)], f"{P4}\n\n{P2}\n\n{P1}\n\n{P3}", attr=1)
# 25 heading, image link, fenced markdown wrapper
page(
    "p25_heading_image",
    [T("Introduction", "title"), T(P1)],
    f"```markdown\n# Introduction\n\n![figure](img.png)\n\n{P1}\n```",
)
# 26 table with spans
GSPAN = '<table><tr><td rowspan="2">a</td><td>b</td></tr><tr><td>c</td></tr><tr><td colspan="2">d</td></tr></table>'
page(
    "p26_span_table",
    [TAB(GSPAN, attr={**TAB_ATTR, "with_span": True})],
    '<table><tr><td rowspan="2">a</td><td>b</td></tr><tr><td>c</td></tr><tr><td>d</td><td></td></tr></table>',
)
# 27 formulas with delimiters, \tag, \left \right
page(
    "p27_formulas",
    [F("\\left( a+b \\right)^{2} \\tag{1}"), F("\\frac{1}{2} \\quad x")],
    "\\[\n(a+b)^{2}\n\\]\n\n$$\\frac{1}{3} x$$",
)
# 28 title, reference and captions (captions ignored)
page(
    "p28_categories",
    [
        T("Results", "title"),
        T(P1),
        T("Table 1: numbers", "table_caption"),
        T("[1] A. Author. A paper. 2020.", "reference"),
    ],
    f"# Results\n\n{P1}\n\nTable 1: numbers\n\n[1] A. Author. A paper, 2021.",
    attr=2,
)
# 29 latex table environment in the prediction
page(
    "p29_latex_table_env",
    [T(P1), TAB(G22, G22_LATEX)],
    f"{P1}\n\n\\begin{{table}}\n\\begin{{tabular}}{{cc}} ab & cd \\\\ ef & gh \\end{{tabular}}\n\\end{{table}}",
)
# 30 no GT text, hallucinated text in the prediction
page(
    "p30_no_gt_text",
    [F("a^{2}+b^{2}=c^{2}"), TAB(G22)],
    f"Some text nobody asked for.\n\n$$a^{{2}}+b^{{2}}=c^{{2}}$$\n\n{G22}",
)
# 31 predictions unrelated to the GT blocks
page("p31_unrelated", [T(P1), T(P2)], "Completely different words here.\n\nNothing alike at all, sorry.")
# 32 one GT block, one prediction block
page("p32_one_to_one", [T("Short block of text.")], "Short blok of txt.")
# 33 table cells with span / sup markup
page(
    "p33_table_markup",
    [TAB("<table><tr><td>x<sup>2</sup></td><td>y</td></tr></table>")],
    '<table><tr><td><span>x</span><sup>2</sup></td><td style="color:red">y</td></tr></table>',
)
# 34 repeated underscores and spaces, fill-in-the-blank
page("p34_blanks", [T("Name: ________ Date: ____")], "Name: ____________ Date: ______", attr=2)
# 35 mixed: 2 columns predicted in row order
page(
    "p35_two_columns",
    [T("Left column first."), T("Left column second."), T("Right column first."), T("Right column second.")],
    "Left column first.\n\nRight column first.\n\nLeft column second.\n\nRight column second.",
    attr=1,
)

# 36 fuzzy many-to-one with typos and an unmatched GT block
page(
    "p36_fuzzy_merge",
    [
        T("Methods were applied."),
        T("Data was collected daily."),
        T("Results follow later."),
        T("A completely separate closing remark."),
    ],
    "Methods were aplied. Data was colected daily. Results follow later.\n\nA completely separate closing remark.",
)
# 37 a near-miss prediction of a header is removed (ignore category), the text block is kept
page(
    "p37_ignore_near_miss",
    [T("Chapter three methods", "header"), T("Chapter three methods overview and aims")],
    "Chapter three method\n\nChapter three methods overview and aims",
)
# 38 three-block truncated chain (the official join repeats the middle block)
page(
    "p38_truncated_chain",
    [T("First part "), T("middle part "), T("last part.")],
    "First part middle part last part.",
    relations=[
        {"source_anno_id": 0, "target_anno_id": 1, "relation_type": "truncated"},
        {"source_anno_id": 1, "target_anno_id": 2, "relation_type": "truncated"},
    ],
)
# 39 GT and prediction blocks that normalise to nothing
page("p39_empty_after_norm", [T("* * *"), T(P1, attr=ZH_ATTR), T(P2)], f"---\n\n{P2}\n\n{P1}")
# 40 overlapping fragment runs for two GT blocks
page(
    "p40_overlapping_runs",
    [T("alpha beta gamma delta"), T("gamma delta epsilon zeta")],
    "alpha beta\n\ngamma delta\n\nepsilon zeta",
)
# 41 pipe table with alignment row and a cell containing ':'
page(
    "p41_pipe_colon",
    [
        TAB(
            "<table><tr><td>key</td><td>value</td></tr><tr><td>a</td><td>1:2</td></tr>"
            "<tr><td>b</td><td>3</td></tr></table>"
        )
    ],
    "\n| key | value |\n|:----|----:|\n| a | 1:2 |\n| b | 3 |\n",
)
# 42 LaTeX predicted table against a GT table without LaTeX
page(
    "p42_latex_vs_no_gt_latex",
    [T(P1), TAB(G22)],
    f"{P1}\n\n\\begin{{tabular}}{{cc}} ab & cd \\\\ ef & gh \\end{{tabular}}",
)
# 43 two predicted tables for one GT table; the spare one's cells become text
page(
    "p43_spare_table_cells",
    [TAB(G22), T("total 42")],
    f"{G22}\n\n<table><tr><td>total</td><td><b>42</b></td><td> $\\cdot$ </td></tr></table>",
)
# 44 a paragraph that is only an inline formula, against a display formula
page("p44_inline_only", [T(P1), F("x^{2}")], f"{P1}\n\n$x^{{2}}$")
# 45 display formula predicted inline inside a text block
page("p45_formula_inline_in_text", [T("The value is"), F("y=a x+b")], "The value is $y=a x+b$")
# 46 fenced code with a language tag and LaTeX sectioning commands
page(
    "p46_code_and_section",
    [T("Intro", "title"), T("print(1)", "code_txt")],
    "\\section{Intro}\n\n```python\nprint(1)\n```\n",
)
# 47 predicted one-column array split into lines; two-column GT array kept whole
page(
    "p47_pred_array",
    [F("a=1"), F("b=2"), F("\\begin{array}{cc} 1 & 2 \\\\ 3 & 4 \\end{array}")],
    "$$\\begin{array}{l} a=1 \\\\ b=2 \\end{array}$$\n\n$$\\begin{array}{cc} 1 & 2 \\\\ 3 & 5 \\end{array}$$",
)
# 48 a formula predicted as text that needs LaTeX-to-unicode conversion
page("p48_formula_text_unicode", [T(P1), F("\\frac{a}{b} + \\alpha")], f"{P1}\n\na/b + α")
# 49 money amounts read as inline formulas
page("p49_dollars", [T("It costs $5 and $6 today.")], "It costs $5 and $6 today.")
# 50 table markup: math alttext, nbsp, br, tbody, colgroup and style
page(
    "p50_table_markup2",
    [
        TAB(
            '<table><colgroup><col></colgroup><tbody><tr><td style="x">a&nbsp;b</td>'
            "<td>c<br>d</td></tr></tbody></table>"
        )
    ],
    '<table><tr><td>a b</td><td>c<br/>d <math alttext="x"></math></td></tr></table>',
)
# 51 captions and footnotes around a table, all ignored
page(
    "p51_captions",
    [T("Table 2: scores", "table_caption"), TAB(G22), T("Note: values are means.", "table_footnote"), T(P1)],
    f"Table 2: scores\n\n{G22}\n\nNote: values are means.\n\n{P1}",
)
# 52 Chinese with inline formula and full-width punctuation
page("p52_chinese_inline", [T("设函数$f(x)=x^2$，求导数。", attr=ZH_ATTR)], "设函数$f(x)=x^{2}$，求导数。", attr=2)
# 53 GT title and text predicted as one paragraph
page(
    "p53_title_merged",
    [T("Summary", "title"), T("We show three things about tables.")],
    "Summary We show three things about tables.",
)
# 54 prediction in reverse order with single newlines and a hallucinated line
page("p54_reverse_single_newline", [T(P1), T(P2), T(P3)], f"{P3}\nNoise line that is not in the page\n{P2}\n{P1}")
# 55 page with a list-valued page attribute
page("p55_special_issue", [T(P1)], f"{P1}", attr=0)
pages[-1]["page_info"]["page_attribute"]["special_issue"] = ["fuzzy_scan", "table_watermark"]

json.dump(pages, open(f"{OUT}/omnidocbench_fixture_gt.json", "w", encoding="utf-8"), indent=1, ensure_ascii=False)
json.dump(preds, open(f"{OUT}/omnidocbench_fixture_pred.json", "w", encoding="utf-8"), indent=1, ensure_ascii=False)
print(len(pages), "pages")
