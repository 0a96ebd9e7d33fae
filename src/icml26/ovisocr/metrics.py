"""OmniDocBench end-to-end metrics (v1.0/v1.5 definitions) for any parser's Markdown output.

Pipeline (OmniDocBench ``end2end`` protocol, spec section 2.2):

1. :func:`split_markdown` extracts the prediction's elements (text blocks, display formulas ``$$..$$`` /
   ``\\[..\\]``, tables as HTML ``<table>`` or Markdown pipe tables converted to HTML).
2. Text is normalised by :func:`normalize_text` (OmniDocBench ``clean_string``), formulas by
   :func:`normalize_formula`.
3. :func:`match_elements` pairs GT and predicted elements of one category: Hungarian assignment on the cost
   ``C_ij = Lev(gt_i, pred_j) / max(|gt_i|, |pred_j|)``, then a GT element absorbs adjacent unmatched predicted
   fragments when the concatenation lowers its cost (our stand-in for OmniDocBench's fuzzy ``quick_match``).
   Unmatched GT gets an empty prediction; unmatched predictions get an empty GT.
4. Text Edit of a page ``= sum_i d_i / sum_i u_i`` with ``d`` the character Levenshtein distance and
   ``u = max(|pred|, |gt|)`` (pooled over the page's pairs, not a mean of ratios); the report averages pages
   (``ALL_page_avg``).  Formula Edit: the same on normalised formulas (OmniDocBench v1.0's formula metric; v1.5's
   CDM needs a LaTeX toolchain, so we report *formula edit distance* and name it so).
5. :func:`teds`: ``TEDS = 1 - APTED(T_pred, T_gt) / max(n_pred, n_gt)`` with ``n`` the number of element nodes
   strictly below ``<table>``; rename cost 1 if tag/colspan/rowspan differ, else for ``td`` the normalised
   Levenshtein distance of the cells' token lists; TEDS-S ignores cell content.
6. :func:`reading_order_ned`: the GT indices of matched text blocks listed in prediction order, compared with the
   GT order by normalised edit distance.
7. ``Overall = ((1 - TextEdit) * 100 + TEDS * 100 + FormulaScore) / 3``; OmniDocBench v1.5 uses CDM as the
   formula score, we use ``(1 - FormulaEdit) * 100`` (:func:`overall`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

import numpy as np
from rapidfuzz.distance import Levenshtein
from scipy.optimize import linear_sum_assignment

__all__ = [
    "normalize_text",
    "normalize_formula",
    "ned",
    "teds",
    "reading_order_ned",
    "split_markdown",
    "match_elements",
    "evaluate_page",
    "evaluate",
    "overall",
    "REPORT_KEYS",
    "CATEGORIES",
]

REPORT_KEYS = ("TextEdit", "FormulaEdit", "TEDS", "TEDS-S", "ReadingOrder", "Overall")
CATEGORIES = ("text", "formula", "table")

_INLINE = re.compile(r"\$(.+?)\$|\\\((.+?)\\\)", re.S)


def _check_str(s, name: str) -> str:
    if not isinstance(s, str):
        raise TypeError(f"{name} must be a str, got {type(s).__name__}")
    return s


def normalize_text(s: str) -> str:
    """OmniDocBench ``clean_string``: inline ``$..$`` / ``\\(..\\)`` LaTeX containing ``\\``, ``^`` or ``_`` is first
    turned into unicode text (pylatexenc ``LatexNodes2Text``), then literal ``\\t``/``\\n`` sequences, tabs and
    newlines are removed and every character not in ``[\\w\\u4e00-\\u9fff]`` is deleted (whitespace, punctuation).
    """
    _check_str(s, "s")

    def _uni(m: re.Match) -> str:
        body = m.group(1) if m.group(1) is not None else m.group(2)
        if any(c in body for c in ("\\", "^", "_")):
            from pylatexenc.latex2text import LatexNodes2Text

            try:
                return LatexNodes2Text().latex_to_text(body)
            except Exception:  # pragma: no cover - pylatexenc is lenient
                return body
        return m.group(0)

    s = _INLINE.sub(_uni, s)
    for t in ("\\t", "\\n", "\t", "\n", "/t", "/n"):
        s = s.replace(t, "")
    return re.sub(r"[^\w\u4e00-\u9fff]", "", s)


_STYLE = (
    "mathbf",
    "mathrm",
    "mathit",
    "mathbb",
    "mathcal",
    "mathsf",
    "mathtt",
    "text",
    "textbf",
    "textit",
    "boldsymbol",
    "operatorname",
)
_DROP = ("left", "right", "displaystyle", "quad", "qquad", "textstyle", "scriptstyle", ",", ";", "!")


def normalize_formula(s: str) -> str:
    """OmniDocBench ``normalized_formula``: strip ``$``/``$$`` and ``\\[ \\]`` delimiters, remove ``\\tag{..}``,
    ``\\hspace{..}``, ``\\begin{..}``/``\\end{..}``, unwrap style commands (``\\mathbf{x} -> x``, ``\\mathrm``,
    ``\\text``, ``\\boldsymbol``, ``\\operatorname`` ...), drop ``\\left \\right \\displaystyle \\quad \\qquad``
    and spacing commands, remove whitespace and lowercase."""
    _check_str(s, "s")
    s = s.strip()
    s = re.sub(r"^\\\[|\\\]$", "", s.strip())
    s = s.replace("$", "")
    s = re.sub(r"\\(tag|hspace|vspace|begin|end)\*?\{[^{}]*\}", "", s)
    for cmd in _STYLE:
        s = re.sub(r"\\" + cmd + r"\s*\{([^{}]*)\}", r"\1", s)
    for cmd in _DROP:
        s = re.sub(r"\\" + re.escape(cmd) + (r"(?![a-zA-Z])" if cmd[0].isalpha() else ""), "", s)
    return re.sub(r"\s+", "", s).lower()


def ned(a: str | Sequence, b: str | Sequence) -> float:
    """Normalised edit distance ``Lev(a, b) / max(|a|, |b|)`` in ``[0, 1]`` (``0`` when both are empty).  Works on
    strings and on sequences of hashable items (e.g. lists of indices)."""
    for x, name in ((a, "a"), (b, "b")):
        if not isinstance(x, (str, list, tuple)):
            raise TypeError(f"{name} must be a str, list or tuple, got {type(x).__name__}")
    n = max(len(a), len(b))
    return 0.0 if n == 0 else Levenshtein.distance(a, b) / n


# -- TEDS --------------------------------------------------------------------------------------------------------
def _table_root(s: str):
    from lxml import html

    if not s.strip():
        return None
    if "<html" not in s.lower():
        s = f"<html><body>{s}</body></html>"
    try:
        doc = html.fromstring(s.encode("utf-8"), parser=html.HTMLParser(remove_comments=True, encoding="utf-8"))
    except Exception:
        return None
    found = doc.xpath("body/table") or doc.xpath("//table")
    return found[0] if found else None


def _tokens(node) -> list[str]:
    out = [f"<{node.tag}>"]
    if node.text:
        out += list(node.text)
    for ch in node:
        out += _tokens(ch)
    out.append(f"</{node.tag}>")
    if node.tag != "td" and node.tail:
        out += list(node.tail)
    return out


def teds(pred_html: str, gt_html: str, structure_only: bool = False) -> float:
    """Tree-Edit-Distance-based Similarity (PubTabNet/OmniDocBench): ``1 - APTED(T_pred, T_gt) / max(n_pred, n_gt)``,
    ``n`` = element nodes strictly below ``<table>`` (``len(table.xpath('.//*'))``).  Costs: insert/delete 1;
    rename 1 if tag, colspan or rowspan differ, else for ``td`` the normalised Levenshtein distance of the cells'
    token lists (characters and inner tags), else 0.  ``structure_only=True`` (TEDS-S) ignores cell content.
    An empty or unparsable table on either side scores 0."""
    from apted import APTED, Config

    _check_str(pred_html, "pred_html")
    _check_str(gt_html, "gt_html")
    tp, tg = _table_root(pred_html), _table_root(gt_html)
    if tp is None or tg is None:
        return 0.0

    class Node:
        __slots__ = ("tag", "colspan", "rowspan", "content", "children")

        def __init__(self, tag, colspan=None, rowspan=None, content=None):
            self.tag, self.colspan, self.rowspan, self.content, self.children = tag, colspan, rowspan, content, []

    def _int(x) -> int:
        try:
            return int(x)
        except (TypeError, ValueError):
            return 1

    def build(el) -> Node:
        tag = "td" if el.tag == "th" else str(el.tag)  # unify header cells (normalized_table)
        if tag == "td":
            cell = [] if structure_only else _tokens(el)[1:-1]
            return Node("td", _int(el.get("colspan", "1")), _int(el.get("rowspan", "1")), cell)
        node = Node(tag)
        node.children = [build(c) for c in el if isinstance(c.tag, str)]
        return node

    class Cfg(Config):
        def rename(self, a, b):
            if a.tag != b.tag or a.colspan != b.colspan or a.rowspan != b.rowspan:
                return 1.0
            if a.tag == "td" and (a.content or b.content):
                return Levenshtein.normalized_distance(a.content, b.content)
            return 0.0

        def children(self, node):
            return node.children

    n = max(len(tp.xpath(".//*")), len(tg.xpath(".//*")))
    if n == 0:
        return 0.0
    dist = APTED(build(tp), build(tg), Cfg()).compute_edit_distance()
    return float(max(0.0, 1.0 - dist / n))


def reading_order_ned(gt_idx: Sequence[int], pred_idx: Sequence[int]) -> float:
    """Reading-order edit distance of one page: ``gt_idx`` = the GT indices of the matched elements in GT order,
    ``pred_idx`` = the same indices ordered by the matched predictions' positions; ``Lev / max(len)``."""
    return ned(list(gt_idx), list(pred_idx))


# -- Markdown splitting -------------------------------------------------------------------------------------------
_BLOCK = re.compile(
    r"(?P<html><table\b.*?</table\s*>)|(?P<dd>\$\$(?P<ddb>.*?)\$\$)|(?P<br>\\\[(?P<brb>.*?)\\\])",
    re.S | re.I,
)


def _pipe_to_html(lines: list[str]) -> tuple[str, int]:
    """Markdown pipe table -> HTML; returns ``(html, n_malformed_rows)`` (rows whose cell count differs from the
    header are kept as parsed and counted)."""
    rows, bad = [], 0
    for ln in lines:
        cells = [c.strip() for c in ln.strip().strip("|").split("|")]
        if all(re.fullmatch(r":?-{2,}:?", c) for c in cells if c) and any(cells):
            continue
        rows.append(cells)
    if not rows:
        return "", 1
    width = len(rows[0])
    bad = sum(len(r) != width for r in rows)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in r) + "</tr>" for r in rows)
    return f"<table>{body}</table>", bad


def split_markdown(md: str) -> dict[str, list]:
    """Split a Markdown page into ``{"text": [...], "formula": [...], "table": [...], "order": [(cat, i), ...],
    "errors": int}``: HTML tables and display formulas are cut out first, the rest is split at blank lines; blocks
    of ``|``-lines are pipe tables (converted to HTML); headings lose their ``#``.  ``order`` lists the elements in
    document order; ``errors`` counts malformed table pieces (unclosed ``<table>``, ragged pipe rows)."""
    _check_str(md, "md")
    out: dict[str, list] = {"text": [], "formula": [], "table": [], "order": [], "errors": 0}
    pieces: list[tuple[int, str, str]] = []
    pos, rest = 0, []
    for m in _BLOCK.finditer(md):
        rest.append((pos, md[pos : m.start()]))
        if m.group("html"):
            pieces.append((m.start(), "table", m.group("html")))
        else:
            body = m.group("ddb") if m.group("dd") else m.group("brb")
            pieces.append((m.start(), "formula", body.strip()))
        pos = m.end()
    rest.append((pos, md[pos:]))
    for start, chunk in rest:
        if re.search(r"<table\b", chunk, re.I):  # an unclosed table: parse what we can, count an error
            out["errors"] += 1
            i = re.search(r"<table\b", chunk, re.I).start()
            pieces.append((start + i, "table", chunk[i:] + "</table>"))
            chunk = chunk[:i]
        off = 0
        for block in re.split(r"\n\s*\n", chunk):
            b = block.strip()
            j = chunk.find(block, off)
            off = j + len(block) if j >= 0 else off
            if not b:
                continue
            lines = b.splitlines()
            if all(ln.strip().startswith("|") for ln in lines):
                html_t, bad = _pipe_to_html(lines)
                out["errors"] += bad
                if html_t:
                    pieces.append((start + max(j, 0), "table", html_t))
                continue
            text = " ".join(re.sub(r"^\s*#+\s*", "", ln) for ln in lines).strip()
            if text:
                pieces.append((start + max(j, 0), "text", text))
    for _, cat, content in sorted(pieces, key=lambda p: p[0]):
        out["order"].append((cat, len(out[cat])))
        out[cat].append(content)
    return out


# -- matching --------------------------------------------------------------------------------------------------
def match_elements(gt: Sequence[str], pred: Sequence[str], method: str = "hungarian") -> list[tuple[list, list]]:
    """Match GT and predicted strings (already normalised) of one category.

    Returns pairs ``(gt_indices, pred_indices)``: Hungarian assignment on ``C_ij = NED(gt_i, pred_j)``; with
    ``method="hungarian"`` a GT element then absorbs adjacent unmatched predicted fragments while the cost drops
    (``"simple"``: the assignment only).  Every GT index appears once (``([i], [])`` when unmatched) and every
    unmatched prediction as ``([], [j])``."""
    if method not in ("hungarian", "simple"):
        raise ValueError(f"method must be 'hungarian' or 'simple', got {method!r}")
    gt, pred = list(gt), list(pred)
    pairs: dict[int, list[int]] = {i: [] for i in range(len(gt))}
    used: set[int] = set()
    if gt and pred:
        C = np.array([[ned(g, p) for p in pred] for g in gt])
        for i, j in zip(*linear_sum_assignment(C)):
            if C[i, j] < 1.0:
                pairs[int(i)] = [int(j)]
                used.add(int(j))
        if method == "hungarian":
            for i, js in pairs.items():
                if not js:
                    continue
                changed = True
                while changed:
                    changed = False
                    for cand in (min(js) - 1, max(js) + 1):
                        if 0 <= cand < len(pred) and cand not in used:
                            new = sorted(js + [cand])
                            if ned(gt[i], "".join(pred[k] for k in new)) < ned(gt[i], "".join(pred[k] for k in js)):
                                js[:] = new
                                used.add(cand)
                                changed = True
    res = [([i], js) for i, js in pairs.items()]
    res += [([], [j]) for j in range(len(pred)) if j not in used]
    return res


def _edit_pairs(gt: list[str], pred: list[str]) -> tuple[list[tuple[int, int]], list]:
    """(d, u) per matched pair (pairs with both sides empty are skipped), and the matches."""
    m = match_elements(gt, pred)
    du = []
    for gi, pj in m:
        g = "".join(gt[i] for i in gi)
        p = "".join(pred[j] for j in pj)
        u = max(len(g), len(p))
        if u:
            du.append((Levenshtein.distance(g, p), u))
    return du, m


def _check_gt(gt_elements) -> list[dict]:
    if not isinstance(gt_elements, (list, tuple)):
        raise TypeError(f"gt_elements must be a list of dicts with 'type' and 'content', got {type(gt_elements)}")
    for e in gt_elements:
        if not isinstance(e, Mapping) or e.get("type") not in CATEGORIES or not isinstance(e.get("content"), str):
            raise ValueError(f"each GT element needs 'type' in {CATEGORIES} and a str 'content', got {e!r}")
    return list(gt_elements)


def evaluate_page(pred_md: str, gt_elements: Sequence[Mapping]) -> dict:
    """Score one page.  ``gt_elements``: dicts ``{"type": "text"|"formula"|"table", "content": str}`` in GT reading
    order (formulas as LaTeX, tables as HTML).  Returns per-category ``(d, u)`` sums and page scores:
    ``text_edit``/``formula_edit`` (``sum d / sum u``, ``None`` if the page has no such pairs), ``teds``/``teds_s``
    (one value per GT table, unmatched -> 0), ``reading_order`` (NED over matched text blocks, ``None`` if none) and
    ``errors`` (malformed table pieces in the prediction)."""
    _check_str(pred_md, "pred_md")
    gt = _check_gt(gt_elements)
    sp = split_markdown(pred_md)
    res: dict = {"errors": sp["errors"]}
    for cat, norm, key in (("text", normalize_text, "text_edit"), ("formula", normalize_formula, "formula_edit")):
        g = [
            normalize_text(e["content"]) if cat == "text" else normalize_formula(e["content"])
            for e in gt
            if e["type"] == cat
        ]
        p = [norm(x) for x in sp[cat]]
        du, m = _edit_pairs(g, p)
        res[key + "_d"], res[key + "_u"] = sum(d for d, _ in du), sum(u for _, u in du)
        res[key] = res[key + "_d"] / res[key + "_u"] if res[key + "_u"] else None
        if cat == "text":  # reading order over matched text blocks (OmniDocBench: text category)
            matched = sorted((min(pj), gi[0]) for gi, pj in m if gi and pj)
            gt_order = sorted(i for _, i in matched)
            pred_order = [i for _, i in matched]
            res["reading_order"] = reading_order_ned(gt_order, pred_order) if matched else None
    g_tab = [e["content"] for e in gt if e["type"] == "table"]
    p_tab = sp["table"]
    t_full, t_struct = [], []
    if g_tab:
        if p_tab:
            S = np.array([[teds(p, g, structure_only=True) for p in p_tab] for g in g_tab])
            rows, cols = linear_sum_assignment(-S)
            assign = dict(zip(rows.tolist(), cols.tolist()))
        else:
            assign = {}
        for i, g in enumerate(g_tab):
            j = assign.get(i)
            t_full.append(teds(p_tab[j], g) if j is not None else 0.0)
            t_struct.append(teds(p_tab[j], g, structure_only=True) if j is not None else 0.0)
    res["teds"], res["teds_s"] = t_full, t_struct
    return res


def overall(text_edit: float, teds_pct: float, formula_pct: float) -> float:
    """OmniDocBench v1.5 ``Overall = ((1 - TextEdit) * 100 + TEDS + Formula) / 3`` with TEDS and the formula score in
    percent (CDM in v1.5; ``(1 - FormulaEdit) * 100`` here)."""
    return ((1.0 - text_edit) * 100.0 + teds_pct + formula_pct) / 3.0


def evaluate(preds: Sequence[str], gts: Sequence[Sequence[Mapping]]) -> dict:
    """Score a set of pages with OmniDocBench's report keys: ``TextEdit`` and ``FormulaEdit`` (mean of page scores,
    ``ALL_page_avg``), ``TEDS`` and ``TEDS-S`` (mean over all GT tables), ``ReadingOrder`` (mean of page NEDs),
    ``Overall`` (:func:`overall` with formula score ``(1 - FormulaEdit) * 100``), plus ``pages`` (per-page results)
    and ``errors``.  A category absent from every page is reported as ``nan``."""
    if not isinstance(preds, (list, tuple)) or not isinstance(gts, (list, tuple)):
        raise TypeError("preds and gts must be lists (one Markdown string / one GT element list per page)")
    if len(preds) != len(gts):
        raise ValueError(f"preds and gts must have the same length, got {len(preds)} and {len(gts)}")
    if not preds:
        raise ValueError("preds must not be empty")
    pages = [evaluate_page(p, g) for p, g in zip(preds, gts)]

    def _mean(vals):
        vals = [v for v in vals if v is not None]
        return float(np.mean(vals)) if vals else float("nan")

    out = {
        "TextEdit": _mean(p["text_edit"] for p in pages),
        "FormulaEdit": _mean(p["formula_edit"] for p in pages),
        "TEDS": _mean(t for p in pages for t in p["teds"]),
        "TEDS-S": _mean(t for p in pages for t in p["teds_s"]),
        "ReadingOrder": _mean(p["reading_order"] for p in pages),
    }
    parts = [(1 - out["TextEdit"]) * 100, out["TEDS"] * 100, (1 - out["FormulaEdit"]) * 100]
    parts = [x for x in parts if np.isfinite(x)]
    out["Overall"] = float(np.mean(parts)) if parts else float("nan")
    out["errors"] = int(sum(p["errors"] for p in pages))
    out["pages"] = pages
    return out
