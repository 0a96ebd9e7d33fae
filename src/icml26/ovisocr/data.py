"""Synthetic mini pages: text blocks, tables and display formulas rendered with Pillow, with exact ground truth.

A page is ``size x size`` grayscale.  ``layout="1col"`` stacks ``n_elements`` blocks top to bottom;
``layout="2col"`` fills a left then a right column (reading order: the whole left column first) with a random
vertical offset per column, so block tops interleave across columns -- the case where a top-to-bottom cascade
merges blocks in the wrong order.  Text blocks are lines of words from :data:`WORDS`; tables are ``rows x cols``
grids of two-digit numbers, drawn with ruling lines only with probability ``table_rule_prob`` (the knob tuned for
the precondition: a cascade that finds tables by their lines misses unruled ones); formulas come from a small
grammar over :data:`FORMULA_TOKENS` and are drawn with Pillow (superscripts/subscripts as smaller raised/lowered
glyphs).  Ground truth per element: ``type``, ``content`` (text / LaTeX / HTML), ``bbox``, ``column`` and, for
tables, ``cells`` and ``cell_boxes``; the reference Markdown is the elements joined in reading order.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from PIL import Image, ImageDraw, ImageFont

__all__ = [
    "WORDS",
    "FORMULA_TOKENS",
    "PageSpec",
    "render_page",
    "elements_to_markdown",
    "table_html",
    "SyntheticPages",
]

WORDS = (
    "cat",
    "dog",
    "sun",
    "map",
    "red",
    "box",
    "cup",
    "pen",
    "owl",
    "car",
    "hat",
    "key",
    "egg",
    "ink",
    "jam",
    "leg",
    "net",
    "oak",
    "pig",
    "rug",
)
_VARS = ("x", "y", "a", "b", "n")
FORMULA_TOKENS = _VARS + ("+", "-", "=", "^{2}", "_{1}") + tuple("0123456789")


@dataclass(frozen=True)
class PageSpec:
    """Rendering parameters: page ``size`` (pixels), ``font_size``, elements per column (``min_elements`` ..
    ``max_elements``), words per text line, text lines per block, table rows/cols, probability that a table has
    ruling lines, element type probabilities (text, table, formula)."""

    size: int = 128
    font_size: int = 11
    min_elements: int = 2
    max_elements: int = 3
    words_per_line: tuple[int, int] = (1, 3)
    lines_per_block: tuple[int, int] = (1, 2)
    table_rows: tuple[int, int] = (2, 3)
    table_cols: tuple[int, int] = (2, 2)
    table_rule_prob: float = 0.0
    type_probs: tuple[float, float, float] = (0.5, 0.25, 0.25)
    col_offset: int = 18  # max random vertical offset of a column (2col)

    def __post_init__(self) -> None:
        if not 64 <= self.size <= 512:
            raise ValueError(f"size must be in [64, 512], got {self.size}")
        if not 0.0 <= self.table_rule_prob <= 1.0:
            raise ValueError(f"table_rule_prob must be in [0, 1], got {self.table_rule_prob}")
        if not 1 <= self.min_elements <= self.max_elements:
            raise ValueError("need 1 <= min_elements <= max_elements")


_FONTS: dict[int, ImageFont.FreeTypeFont] = {}


def _font(size: int):
    if size not in _FONTS:
        _FONTS[size] = ImageFont.load_default(size=size)
    return _FONTS[size]


def table_html(cells: list[list[str]]) -> str:
    """``[["12", "34"], ...]`` -> ``<table><tr><td>12</td>...</tr></table>``."""
    return "<table>" + "".join("<tr>" + "".join(f"<td>{c}</td>" for c in r) + "</tr>" for r in cells) + "</table>"


def elements_to_markdown(elements: list[dict]) -> str:
    """Reference Markdown: text as paragraphs, formulas as ``$$ .. $$``, tables as HTML, blank-line separated."""
    out = []
    for e in elements:
        if e["type"] == "formula":
            out.append(f"$$\n{e['content']}\n$$")
        else:
            out.append(e["content"])
    return "\n\n".join(out)


def _formula(rng: np.random.Generator) -> list[str]:
    toks = [str(rng.choice(_VARS))]
    if rng.random() < 0.5:
        toks.append(str(rng.choice(["^{2}", "_{1}"])))
    toks += [str(rng.choice(["+", "-"])), str(rng.choice(_VARS)), "="]
    toks += list(str(int(rng.integers(1, 100))))
    return toks


def _draw_formula(draw: ImageDraw.ImageDraw, x: int, y: int, toks: list[str], fs: int) -> tuple[int, int]:
    f, small = _font(fs), _font(max(6, fs - 4))
    cx = x
    for t in toks:
        if t in ("^{2}", "_{1}"):
            ch = t[2]
            dy = -3 if t[0] == "^" else 5
            draw.text((cx, y + dy), ch, font=small, fill=0)
            cx += int(small.getlength(ch)) + 1
        else:
            txt = f" {t} " if t in ("+", "-", "=") else t
            draw.text((cx, y), txt, font=f, fill=0)
            cx += int(f.getlength(txt))
    return cx, y + fs + 4


def _formula_width(toks: list[str], fs: int) -> int:
    f, small = _font(fs), _font(max(6, fs - 4))
    w = 0
    for t in toks:
        if t in ("^{2}", "_{1}"):
            w += int(small.getlength(t[2])) + 1
        else:
            w += int(f.getlength(f" {t} " if t in ("+", "-", "=") else t))
    return w


def _make_element(rng: np.random.Generator, spec: PageSpec, width: int) -> dict:
    kind = ["text", "table", "formula"][int(rng.choice(3, p=np.asarray(spec.type_probs) / sum(spec.type_probs)))]
    f = _font(spec.font_size)
    if kind == "text":
        lines = []
        for _ in range(int(rng.integers(spec.lines_per_block[0], spec.lines_per_block[1] + 1))):
            n = int(rng.integers(spec.words_per_line[0], spec.words_per_line[1] + 1))
            words = [str(w) for w in rng.choice(WORDS, size=n)]
            while len(words) > 1 and f.getlength(" ".join(words)) > width - 4:
                words.pop()
            lines.append(words)
        return {"type": "text", "lines": lines, "content": " ".join(w for ln in lines for w in ln)}
    if kind == "table":
        r = int(rng.integers(spec.table_rows[0], spec.table_rows[1] + 1))
        c = int(rng.integers(spec.table_cols[0], spec.table_cols[1] + 1))
        cells = [[str(int(rng.integers(10, 100))) for _ in range(c)] for _ in range(r)]
        ruled = bool(rng.random() < spec.table_rule_prob)
        return {"type": "table", "cells": cells, "ruled": ruled, "content": table_html(cells)}
    toks = _formula(rng)
    while _formula_width(toks, spec.font_size) > width - 4 and len(toks) > 5:
        toks.pop()
    return {"type": "formula", "tokens": toks, "content": "".join(toks)}


def _height(e: dict, fs: int) -> int:
    lh = fs + 3
    if e["type"] == "text":
        return lh * len(e["lines"])
    if e["type"] == "table":
        return (lh + 3) * len(e["cells"]) + 2
    return fs + 6


def _draw(draw: ImageDraw.ImageDraw, e: dict, x0: int, y0: int, width: int, fs: int) -> None:
    f, lh = _font(fs), fs + 3
    if e["type"] == "text":
        for i, ln in enumerate(e["lines"]):
            draw.text((x0, y0 + i * lh), " ".join(ln), font=f, fill=0)
        w = max(int(f.getlength(" ".join(ln))) for ln in e["lines"])
        e["bbox"] = (x0, y0, x0 + w, y0 + lh * len(e["lines"]))
        e["line_boxes"] = [(x0, y0 + i * lh, x0 + w + 2, y0 + (i + 1) * lh) for i in range(len(e["lines"]))]
    elif e["type"] == "table":
        rh, cw = lh + 3, int(f.getlength("00")) + 10
        boxes = []
        for i, row in enumerate(e["cells"]):
            brow = []
            for j, c in enumerate(row):
                bx, by = x0 + j * cw, y0 + i * rh
                draw.text((bx + 3, by + 2), c, font=f, fill=0)
                brow.append((bx, by, bx + cw, by + rh))
            boxes.append(brow)
        x1, y1 = x0 + cw * len(e["cells"][0]), y0 + rh * len(e["cells"])
        if e["ruled"]:
            for i in range(len(e["cells"]) + 1):
                draw.line([(x0, y0 + i * rh), (x1, y0 + i * rh)], fill=0)
            for j in range(len(e["cells"][0]) + 1):
                draw.line([(x0 + j * cw, y0), (x0 + j * cw, y1)], fill=0)
        e["bbox"], e["cell_boxes"] = (x0, y0, x1 + 1, y1 + 1), boxes
    else:
        w = _formula_width(e["tokens"], fs)
        xs = x0 + max(0, (width - w) // 2)
        x1, y1 = _draw_formula(draw, xs, y0 + 2, e["tokens"], fs)
        e["bbox"] = (xs, y0, x1, y0 + fs + 6)


def render_page(rng: np.random.Generator, layout: str = "1col", spec: PageSpec | None = None):
    """Draw one page.  Returns ``(image, markdown, elements)``: a grayscale ``PIL.Image`` of ``spec.size`` pixels,
    the reference Markdown and the GT elements in reading order (dicts with ``type``, ``content``, ``bbox``,
    ``column``; text adds ``lines``/``line_boxes``, tables ``cells``/``cell_boxes``/``ruled``, formulas ``tokens``).
    Deterministic given the state of ``rng``."""
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy Generator, got {type(rng).__name__}")
    if layout not in ("1col", "2col"):
        raise ValueError(f"layout must be '1col' or '2col', got {layout!r}")
    spec = spec or PageSpec()
    S, fs, gap, margin = spec.size, spec.font_size, 7, 4
    img = Image.new("L", (S, S), 255)
    draw = ImageDraw.Draw(img)
    ncol = 1 if layout == "1col" else 2
    colw = (S - 2 * margin - (ncol - 1) * 12) // ncol
    elements: list[dict] = []
    for c in range(ncol):
        x0 = margin + c * (colw + 12)
        y = margin + (int(rng.integers(0, spec.col_offset + 1)) if ncol == 2 else 0)
        n = int(rng.integers(spec.min_elements, spec.max_elements + 1))
        for k in range(n):
            e = _make_element(rng, spec, colw)
            if k == 0 and ncol == 2 and e["type"] != "text":  # every column holds text, so reading order is scored
                e = {"type": "text", "lines": [[str(rng.choice(WORDS))]]}
                e["content"] = e["lines"][0][0]
            h = _height(e, fs)
            if y + h > S - margin:
                break
            _draw(draw, e, x0, y, colw, fs)
            e["column"] = c
            elements.append(e)
            y += h + gap
    return img, elements_to_markdown(elements), elements


class SyntheticPages:
    """A seeded set of pages (``torch.utils.data.Dataset``-style: ``len`` and ``[i]``).  ``n`` pages, the fraction
    ``frac_2col`` of them 2-column; page ``i`` is drawn from ``np.random.default_rng([seed, i])``, so a page does not
    depend on the others.  ``[i]`` returns ``{"image": float32 array (size, size) in [0, 1] (ink = 1), "markdown",
    "elements", "layout"}``; ``pil(i)`` the PIL image."""

    def __init__(self, n: int, seed: int, spec: PageSpec | None = None, frac_2col: float = 0.5):
        if not isinstance(n, int) or n < 1:
            raise ValueError(f"n must be an integer >= 1, got {n!r}")
        if not 0.0 <= frac_2col <= 1.0:
            raise ValueError(f"frac_2col must be in [0, 1], got {frac_2col}")
        self.n, self.seed, self.spec = n, int(seed), spec or PageSpec()
        n2 = int(round(frac_2col * n))
        self.layouts = ["2col"] * n2 + ["1col"] * (n - n2)
        self._pages = []
        for i in range(n):
            img, md, els = render_page(np.random.default_rng([self.seed, i]), self.layouts[i], self.spec)
            self._pages.append((img, md, els))

    def __len__(self) -> int:
        return self.n

    def pil(self, i: int) -> Image.Image:
        return self._pages[i][0]

    def __getitem__(self, i: int) -> dict:
        img, md, els = self._pages[i]
        arr = 1.0 - np.asarray(img, dtype=np.float32) / 255.0
        return {"image": arr, "markdown": md, "elements": els, "layout": self.layouts[i]}

    def images(self) -> np.ndarray:
        """All pages as one ``(n, size, size)`` float32 array (ink = 1)."""
        return np.stack([self[i]["image"] for i in range(self.n)])
