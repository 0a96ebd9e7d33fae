"""OCR engines, the crop-OCR-merge cascade (the baseline pipeline) and OCR-bootstrapped labels.

* :class:`RapidOCREngine` -- PP-OCRv4 recogniser from ``rapidocr-onnxruntime`` (models ship in the wheel),
  onnxruntime pinned to one intra-op thread so results do not depend on the caller's threads.
* :class:`TesseractEngine` -- Debian's ``tesseract`` binary (``--psm 7``, one line per crop), when installed.
* :class:`CascadeParser` -- layout by connected components of the dilated ink mask, ruled-table detection by
  long ink rows/columns, line splitting by horizontal projection, OCR of each line / cell crop, and a merge of
  the blocks in top-to-bottom, left-to-right order (the error-propagation point on 2-column pages).
* :func:`bootstrap_labels` -- the "specialized perceiver" stage: known layout + OCR of each crop, snapped to the
  lexicon, then deterministic validators (rectangular tables, formulas that tokenize, optional two-engine
  agreement ``NED <= tau``) in place of the paper's general-model cleaning.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from PIL import Image
from scipy import ndimage

from .data import FORMULA_TOKENS, WORDS, table_html
from .metrics import ned

__all__ = [
    "OCREngine",
    "RapidOCREngine",
    "TesseractEngine",
    "available_engines",
    "CascadeParser",
    "bootstrap_labels",
    "ocr_to_latex",
    "snap_words",
]


def _as_gray(img) -> np.ndarray:
    """PIL image or array -> uint8 (H, W) with white background (value 255)."""
    if isinstance(img, Image.Image):
        a = np.asarray(img.convert("L"))
    elif isinstance(img, np.ndarray):
        a = img
        if a.ndim == 3:
            a = a.mean(axis=2)
        if a.ndim != 2:
            raise ValueError(f"image must be 2-D (H, W) or (H, W, C), got shape {img.shape}")
        if a.dtype != np.uint8:
            a = np.clip(a, 0, 255).astype(np.uint8) if a.max() > 1.0 else ((1.0 - a) * 255).astype(np.uint8)
    else:
        raise TypeError(f"image must be a PIL.Image or numpy array, got {type(img).__name__}")
    if a.size == 0 or min(a.shape) < 2:
        raise ValueError(f"image must be non-empty (at least 2x2 pixels), got shape {a.shape}")
    return np.ascontiguousarray(a)


class OCREngine:
    """Interface: ``recognize(crops) -> list[str]`` on uint8 grayscale line crops (white background)."""

    name = "engine"

    def recognize(self, crops: Sequence[np.ndarray]) -> list[str]:  # pragma: no cover - interface
        raise NotImplementedError

    @staticmethod
    def _pad(c: np.ndarray, pad: int = 6, scale: int = 2) -> np.ndarray:
        c = np.pad(_as_gray(c), pad, constant_values=255)
        return np.kron(c, np.ones((scale, scale), dtype=np.uint8)) if scale > 1 else c


class RapidOCREngine(OCREngine):
    """PP-OCRv4 text recogniser (``rapidocr_onnxruntime``), recognition only (crops are given), one thread."""

    name = "rapidocr"

    def __init__(self, threads: int = 1):
        if not isinstance(threads, int) or threads < 1:
            raise ValueError(f"threads must be an integer >= 1, got {threads!r}")
        from rapidocr_onnxruntime import RapidOCR

        self._ocr = RapidOCR(intra_op_num_threads=threads, inter_op_num_threads=1)

    def recognize(self, crops: Sequence[np.ndarray]) -> list[str]:
        if not crops:
            return []
        imgs = [np.repeat(self._pad(c, scale=1)[:, :, None], 3, axis=2) for c in crops]
        res, _ = self._ocr.text_rec(imgs)
        return [str(t) for t, _ in res]


class TesseractEngine(OCREngine):
    """Debian ``tesseract`` (``--psm 7``: one text line per crop), through its command line."""

    name = "tesseract"

    def __init__(self, binary: str | None = None, psm: int = 7):
        self.binary = binary or shutil.which("tesseract")
        if not self.binary:
            raise RuntimeError("tesseract is not installed (apt-get install tesseract-ocr tesseract-ocr-eng)")
        self.psm = int(psm)

    @staticmethod
    def available() -> bool:
        return shutil.which("tesseract") is not None

    def recognize(self, crops: Sequence[np.ndarray]) -> list[str]:
        out = []
        with tempfile.TemporaryDirectory() as d:
            for k, c in enumerate(crops):
                p = Path(d) / f"c{k}.png"
                Image.fromarray(self._pad(c, scale=3)).save(p)
                r = subprocess.run(
                    [self.binary, str(p), "stdout", "--psm", str(self.psm), "-l", "eng"],
                    capture_output=True,
                    text=True,
                    env={"OMP_THREAD_LIMIT": "1", "PATH": "/usr/bin:/bin"},
                    check=False,
                )
                out.append(r.stdout.strip())
        return out


def available_engines() -> list[str]:
    """Names of the engines usable here: ``"rapidocr"`` when its package imports, ``"tesseract"`` when installed."""
    names = []
    try:
        import rapidocr_onnxruntime  # noqa: F401

        names.append("rapidocr")
    except ImportError:  # pragma: no cover
        pass
    if TesseractEngine.available():
        names.append("tesseract")
    return names


# -- post-processing shared by the cascade and the bootstrap --------------------------------------------------------
def snap_words(s: str, lexicon: Sequence[str] | None = WORDS, max_ned: float = 0.5) -> tuple[list[str], int]:
    """Split OCR output into words (lowercased); with a ``lexicon`` each word is replaced by its nearest lexicon word
    when ``NED <= max_ned``.  Returns ``(words, n_unknown)``."""
    words, bad = [], 0
    for w in re.findall(r"[A-Za-z0-9]+", s):
        w = w.lower()
        if lexicon:
            best = min(lexicon, key=lambda v: (ned(w, v), v))
            if ned(w, best) <= max_ned:
                w = best
            else:
                bad += 1
        words.append(w)
    return words, bad


def ocr_to_latex(s: str) -> tuple[list[str], bool]:
    """OCR text of a display formula -> tokens of :data:`FORMULA_TOKENS` (a digit glued to a variable is read as a
    script: ``2 -> ^{2}``, ``1 -> _{1}``); returns ``(tokens, ok)`` with ``ok=False`` when a character is not in the
    grammar (the formula-syntax validator)."""
    s = s.replace(" ", "").replace("—", "-").replace("–", "-").replace("²", "2").replace("₁", "1").lower()
    toks, ok = [], True
    for i, ch in enumerate(s):
        if ch.isdigit() and i > 0 and s[i - 1] in "xyabn" and ch in "12":
            toks.append("^{2}" if ch == "2" else "_{1}")
        elif ch in FORMULA_TOKENS:
            toks.append(ch)
        else:
            ok = False
    return toks, ok and "=" in toks


def _segments(profile: np.ndarray, min_gap: int = 1) -> list[tuple[int, int]]:
    """Runs of nonzero entries of a 1-D profile (merging gaps shorter than ``min_gap``)."""
    on = np.flatnonzero(profile > 0)
    if on.size == 0:
        return []
    segs, start, prev = [], on[0], on[0]
    for k in on[1:]:
        if k - prev > min_gap:
            segs.append((int(start), int(prev) + 1))
            start = k
        prev = k
    segs.append((int(start), int(prev) + 1))
    return segs


class CascadeParser:
    """Crop-OCR-merge pipeline: ``parse(img) -> Markdown``.

    1. layout: connected components of the ink mask dilated by ``dilate = (rows, cols)`` pixels -> blocks;
    2. a block with >= 2 ink rows and >= 2 ink columns spanning ``>= 0.9`` of it is a ruled table (cells between
       the lines), anything else is split into lines by its horizontal projection;
    3. every line / cell crop goes to the OCR ``engine``; a line with ``=`` is a display formula
       (:func:`ocr_to_latex`), other lines are text (words snapped to ``lexicon`` when given);
    4. merge: blocks in top-to-bottom then left-to-right order of their top-left corners.
    """

    def __init__(
        self, engine: OCREngine | None = None, lexicon: Sequence[str] | None = WORDS, dilate: tuple[int, int] = (3, 5)
    ):
        self.engine = engine if engine is not None else RapidOCREngine()
        if not isinstance(self.engine, OCREngine):
            raise TypeError(f"engine must be an OCREngine, got {type(engine).__name__}")
        if len(dilate) != 2 or min(dilate) < 0:
            raise ValueError(f"dilate must be two non-negative ints (rows, cols), got {dilate!r}")
        self.lexicon, self.dilate = lexicon, tuple(int(x) for x in dilate)

    def layout(self, img) -> list[dict]:
        """Blocks ``{"bbox", "kind": "table"|"lines", "crops": [(y0, y1, x0, x1)], "grid": (rows, cols)}`` in merge
        order."""
        a = _as_gray(img)
        ink = a < 128
        r, c = self.dilate
        big = ndimage.binary_dilation(ink, structure=np.ones((2 * r + 1, 2 * c + 1), bool)) if r or c else ink
        lab, n = ndimage.label(big)
        blocks = []
        for k, sl in enumerate(ndimage.find_objects(lab)):
            sub = ink[sl] & (lab[sl] == k + 1)
            ys, xs = np.nonzero(sub)
            if ys.size < 4:
                continue
            y0, y1, x0, x1 = (
                sl[0].start + ys.min(),
                sl[0].start + ys.max() + 1,
                sl[1].start + xs.min(),
                sl[1].start + xs.max() + 1,
            )
            m = ink[y0:y1, x0:x1]
            h, w = m.shape
            hl = np.flatnonzero(m.mean(axis=1) >= 0.9)
            vl = np.flatnonzero(m.mean(axis=0) >= 0.9)
            hrun, vrun = _segments(np.isin(np.arange(h), hl)), _segments(np.isin(np.arange(w), vl))
            if len(hrun) >= 2 and len(vrun) >= 2:
                crops = []
                for (_ya, yb), (yc, _) in zip(hrun[:-1], hrun[1:]):
                    for (_xa, xb), (xc, _) in zip(vrun[:-1], vrun[1:]):
                        crops.append((y0 + yb + 1, y0 + yc - 1, x0 + xb + 1, x0 + xc - 1))
                blocks.append(
                    {"bbox": (x0, y0, x1, y1), "kind": "table", "crops": crops, "grid": (len(hrun) - 1, len(vrun) - 1)}
                )
            else:
                lines = _segments(m.any(axis=1).astype(int), min_gap=1)
                crops = [(y0 + ya, y0 + yb, x0, x1) for ya, yb in lines if yb - ya >= 3]
                if crops:
                    blocks.append({"bbox": (x0, y0, x1, y1), "kind": "lines", "crops": crops, "grid": None})
        blocks.sort(key=lambda b: (b["bbox"][1], b["bbox"][0]))
        return blocks

    def parse(self, img) -> str:
        """Page image -> Markdown (text paragraphs, ``$$`` formulas, HTML tables) in cascade merge order."""
        a = _as_gray(img)
        blocks = self.layout(a)
        crops = [a[y0:y1, x0:x1] for b in blocks for (y0, y1, x0, x1) in b["crops"]]
        texts = iter(self.engine.recognize([c for c in crops if c.size]) if crops else [])
        out = []
        for b in blocks:
            got = [next(texts) if a[y0:y1, x0:x1].size else "" for (y0, y1, x0, x1) in b["crops"]]
            if b["kind"] == "table":
                rows, cols = b["grid"]
                cells = [" ".join(snap_words(t, None)[0]) for t in got]
                out.append(table_html([cells[i * cols : (i + 1) * cols] for i in range(rows)]))
                continue
            para = []
            for t in got:
                if "=" in t:
                    if para:
                        out.append(" ".join(para))
                        para = []
                    out.append("$$\n" + "".join(ocr_to_latex(t)[0]) + "\n$$")
                else:
                    para += snap_words(t, self.lexicon)[0]
            if para:
                out.append(" ".join(para))
        return "\n\n".join(out)


def bootstrap_labels(
    images: Sequence,
    layouts: Sequence[Sequence[dict]],
    engines: Sequence[OCREngine],
    *,
    tau: float = 0.15,
    lexicon: Sequence[str] | None = WORDS,
) -> tuple[list[list[dict]], np.ndarray]:
    """OCR-bootstrapped labels from known layout: for each page, every element of ``layouts`` (types, reading
    order, ``line_boxes`` / ``cell_boxes`` / ``bbox``; their ``content`` is ignored) is read by OCR on its crops
    with ``engines[0]``; text is snapped to ``lexicon``, table cells keep their digits, formulas go through
    :func:`ocr_to_latex`.  Validators (``keep_mask[i] = False`` when any fails): every word snaps to the lexicon,
    every table cell is a number, every formula tokenizes, no line repeats the previous one 3+ times and, with a
    second engine, ``NED(engine0, engine1) <= tau`` on every text line.  Returns ``(labels, keep_mask)``;
    ``labels[i]`` are elements ``{"type", "content", "tokens"}`` (``tokens`` for the tokenizer)."""
    if not engines:
        raise ValueError("engines must hold at least one OCREngine")
    if len(images) != len(layouts):
        raise ValueError(f"images and layouts must have the same length, got {len(images)} and {len(layouts)}")
    if not 0.0 <= tau <= 1.0:
        raise ValueError(f"tau must be in [0, 1], got {tau}")
    arrs = [_as_gray(im) for im in images]
    jobs = []  # (page, element, kind, crop)
    for p, (a, els) in enumerate(zip(arrs, layouts)):
        for k, e in enumerate(els):
            if e["type"] == "text":
                boxes = e["line_boxes"]
            elif e["type"] == "table":
                boxes = [b for row in e["cell_boxes"] for b in row]
            else:
                boxes = [e["bbox"]]
            for x0, y0, x1, y1 in boxes:
                jobs.append((p, k, a[max(0, y0 - 1) : y1 + 1, max(0, x0 - 1) : x1 + 1]))
    reads = [e.recognize([j[2] for j in jobs]) for e in engines[:2]]
    per: dict[tuple[int, int], list[int]] = {}
    for n, (p, k, _) in enumerate(jobs):
        per.setdefault((p, k), []).append(n)
    labels, keep = [], np.ones(len(arrs), dtype=bool)
    for p, els in enumerate(layouts):
        out = []
        for k, e in enumerate(els):
            idx = per.get((p, k), [])
            txt = [reads[0][n] for n in idx]
            if len(reads) > 1 and e["type"] == "text":
                if any(ned(reads[0][n].lower(), reads[1][n].lower()) > tau for n in idx):
                    keep[p] = False
            if e["type"] == "text":
                words, bad = [], 0
                for t in txt:
                    w, b = snap_words(t, lexicon)
                    words += w
                    bad += b
                if bad or not words:
                    keep[p] = False
                if len(txt) >= 3 and len(set(txt)) == 1:
                    keep[p] = False
                out.append({"type": "text", "content": " ".join(words), "tokens": words})
            elif e["type"] == "table":
                rows, cols = len(e["cell_boxes"]), len(e["cell_boxes"][0])
                cells = ["".join(re.findall(r"\d", t)) for t in txt]
                if any(not re.fullmatch(r"\d{1,2}", c) for c in cells):
                    keep[p] = False
                grid = [cells[i * cols : (i + 1) * cols] for i in range(rows)]
                out.append({"type": "table", "content": table_html(grid), "cells": grid})
            else:
                toks, ok = ocr_to_latex(txt[0] if txt else "")
                keep[p] &= ok
                out.append({"type": "formula", "content": "".join(toks), "tokens": toks})
        labels.append(out)
    return labels, keep
