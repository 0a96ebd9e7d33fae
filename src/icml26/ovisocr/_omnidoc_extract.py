"""Prediction Markdown -> page elements, by OmniDocBench's extraction rules (official ``md_tex_filter``).

The official extraction works on one string in a fixed order, blanking each element it takes out with spaces so that
later steps keep character positions; the positions order the elements (and hence the reading order):

1. clean-up: Markdown image links ``![..](..)`` are removed, code fences opened with ``markdown``/``html``/``latex``
   and any line-final closing fence are removed, runs of more than 4 underscores / spaces become 4, and
   ``<html> </html> <body> </body>`` are deleted;
2. LaTeX tables: ``\\begin{table} .. \\end{table}`` environments, then top-level ``tabular`` environments (a stack
   scan that lets ``tabular`` nest) -> ``latex_table`` elements;
3. HTML tables: top-level ``<table ..> .. </table>`` (the same stack scan) -> ``html_table`` elements; a ``<table``
   that is never closed is not a table and its text stays in the page;
4. formulas: ``$$..$$``, ``\\[..\\]``, ``$..$``, ``\\(..\\)`` (first match wins, left to right).  ``$$`` and ``\\[``
   formulas are display formulas (``equation_isolated``, blanked, written as ``\\[..\\]``); ``$..$`` and ``\\(..\\)``
   are kept as ``equation_inline`` elements *and stay in the text* (the matcher sorts them last);
5. Markdown pipe tables: when the page has at least two lines ``| .. |``, the page is rewritten by the official
   Markdown-to-HTML conversion (each pipe line becomes a one-row table, consecutive ones are merged, header cells
   become ``td``, rows that contain ``:`` or ``---`` are dropped) and each resulting table is an ``html_table``;
6. fenced code with a language tag -> a ``text_all`` element (``code``);
7. ``\\title{..}``, ``\\text{..}``, ``\\section{..}`` lose their command;
8. the rest is split at blank lines, or at single newlines when the page has no blank line (the *single-newline
   fallback*); a block that starts with ``<table`` and ends with ``</table>`` is an HTML table, one that starts and
   ends with ``$`` a display formula, anything else a text block.  A block's position is the running sum of the
   previous blocks' lengths (the separators are not counted, as in the official code).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

__all__ = ["PredItem", "extract_elements", "balanced_spans", "pipe_tables_to_html"]


@dataclass
class PredItem:
    """One predicted element: ``category`` is ``text_all`` / ``equation_isolated`` / ``html_table`` /
    ``latex_table``; ``fine`` the finer kind where the official code records one (``text_block``, ``code``,
    ``equation_inline``, ``md2html_table``); ``position`` = ``(start, end)`` in the (rewritten) page string."""

    category: str
    position: tuple[int, int]
    content: str
    fine: str | None = None
    meta: dict = field(default_factory=dict)

    @property
    def kind(self) -> str:
        """The official ``pred_category_type``: the fine kind when set, else the category."""
        return self.fine or self.category


def _blank(s: str, a: int, b: int) -> str:
    return s[:a] + " " * (b - a) + s[b:]


def balanced_spans(
    text: str, open_re: re.Pattern, close_re: re.Pattern, open_step: int, close_step: int, restart: int
) -> list[tuple[int, int]]:
    """Outermost ``open .. close`` spans found by the official stack scan.

    Scanning left to right, an opening match (when it comes before the next closing one) is pushed and the scan
    moves ``open_step`` characters past its start; a closing match pops, records ``(start, close_start +
    close_step)`` when the stack becomes empty, and moves ``close_step`` past its start.  If openings remain at the
    end, the scan restarts ``restart`` characters after the first unclosed opening.  The step sizes are the
    official ones (the lengths of the pattern strings, which are not always the lengths of the matches)."""
    spans: list[tuple[int, int]] = []
    stack: list[int] = []
    pos = 0
    while pos < len(text):
        o = open_re.search(text, pos)
        c = close_re.search(text, pos)
        if o is None and c is None:
            break
        if o is not None and (c is None or o.start() < c.start()):
            stack.append(o.start())
            pos = o.start() + open_step
        else:
            assert c is not None
            if stack:
                start = stack.pop()
                if not stack:
                    spans.append((start, c.start() + close_step))
            pos = c.start() + close_step
    if stack:
        base = stack[0] + restart
        spans += [
            (a + base, b + base)
            for a, b in balanced_spans(text[base:], open_re, close_re, open_step, close_step, restart)
        ]
    return spans


_HTML_OPEN = re.compile(r"<table(?:[^>]*)>")
_HTML_CLOSE = re.compile(r"</table>")
# official step sizes: len("</table>") for both, len(r"<table(?:[^>]*)>") to restart
_HTML_STEPS = (8, 8, 16)
_TAB_OPEN = re.compile(r"\\begin{tabular}")
_TAB_CLOSE = re.compile(r"\\end{tabular}")
# official step sizes: len(r"\\end{tabular}") = 14 (one more than the 13 characters of \end{tabular}), restart 16
_TAB_STEPS = (14, 14, 16)
_TABLE_ENV = re.compile(r"\\begin{table}(.*?)\\end{table}", re.S)


def _latex_tables(s: str) -> list[tuple[tuple[int, int], str]]:
    found = []
    work = s
    for m in _TABLE_ENV.finditer(s):
        found.append(((m.start(), m.end()), m.group(0)))
        work = _blank(work, m.start(), m.end())
    for a, b in balanced_spans(work, _TAB_OPEN, _TAB_CLOSE, *_TAB_STEPS):
        found.append(((a, b), work[a:b]))
    return sorted(found, key=lambda t: t[0][0])


_FORMULA = re.compile(r"\$\$(.*?)\$\$|\\\[(.*?)\\\]|\$(.*?)\$|\\\((.*?)\\\)", re.S)
_DOLLAR = re.compile(r"\$\$(.*?)\$\$|\$(.*?)\$|\\\((.*?)\\\)", re.S)
_PIPE_LINE = re.compile(r"\|\s*.*?\s*\|\n", re.S)
_HTML_TABLE_ANY = re.compile(r"(<table.*?</table>)", re.S)
_CODE = re.compile(r"```(\w+)\n(.*?)```", re.S)


def _one_row_table(match: str) -> str:
    """The official ``markdown_to_html`` of one pipe-table match: first line = header (``th``), second line
    skipped, the rest = body rows; cells are the ``|``-separated fields without the outer two."""
    rows = [r.strip() for r in match.strip().split("\n")]
    out = "<table>\n  <thead>\n    <tr>\n"
    out += "".join(f"      <th>{c.strip()}</th>\n" for c in rows[0].split("|")[1:-1])
    out += "    </tr>\n  </thead>\n  <tbody>\n"
    for row in rows[2:]:
        out += "    <tr>\n" + "".join(f"      <td>{c.strip()}</td>\n" for c in row.split("|")[1:-1]) + "    </tr>\n"
    return out + "  </tbody>\n</table>\n"


def _separator_like(line: str) -> bool:
    # the official ``find_md_table_mode``: a line containing ':' or '---'
    return ":" in line or "---" in line


def _merge_table_block(block: str) -> str:
    """Join the rows of consecutive one-row tables into one table (official ``merge_tables``): comments removed,
    ``th`` -> ``td``, the ``table/thead/tbody`` lines dropped, tables with fewer than 3 remaining lines dropped."""
    block = re.sub(r"<!--[\s\S]*?-->", "", block)
    rows: list[str] = []
    for tab in re.findall(r"<table>[\s\S]*?</table>", block):
        lines = [ln.replace("<th>", "<td>").replace("</th>", "</td>") if "<th>" in ln else ln for ln in tab.split("\n")]
        kept = [ln for ln in lines if not re.search(r"</?t(able|head|body)>", ln)]
        if len(kept) > 2:
            rows.extend(kept)
    return "\n\n<table>\n" + "\n".join(rows) + "\n</table>\n\n"


def _merge_tables_in_page(s: str) -> str:
    """The official line-by-line pass (``replace_table_with_placeholder``): a line containing ``<table>`` opens a
    block (taking the line before it along, which is thereby dropped from the text); inside a block, lines that look
    like separators or contain ``</thead>`` are skipped; a line with ``</table>`` not followed by another ``<table>``
    line closes the block, which is replaced by its merged table."""
    out: list[str] = []
    in_block, block, prev = False, "", ""
    for line in s.split("\n"):
        if "<table>" in line:
            in_block = True
            block += prev
        elif in_block:
            if not _separator_like(prev) and "</thead>" not in prev:
                block += "\n" + prev
            if "</table>" in prev:
                in_block = False
                out.append(_merge_table_block(block))
                block = ""
        else:
            out.append(prev)
        prev = line
    if prev:
        if in_block or "</table>" in prev:
            block += "\n" + prev
            out.append(_merge_table_block(block))
        else:
            out.append(prev)
    return "\n".join(out)


def pipe_tables_to_html(s: str) -> str:
    """The official Markdown-pipe-table conversion of a whole page (``convert_markdown_to_html``): every pipe line
    becomes a one-row table, consecutive tables are merged, and ``<table>`` / ``<td>`` get the official
    ``border="1"`` / ``colspan="1" rowspan="1"`` attributes."""
    s = s.replace("\r", "") + "\n"
    s = _PIPE_LINE.sub(lambda m: _one_row_table(m.group(0)), s)
    s = _merge_tables_in_page(s)
    return s.replace("<table>", '<table border="1" >').replace("<td>", '<td colspan="1" rowspan="1">')


def _clean_page(s: str) -> str:
    s = re.sub(r"!\[.*?\]\(.*?\)", "", s)
    for lang in ("markdown", "html", "latex"):
        s = re.sub(rf"^```{lang}\n?", "", s, flags=re.M)
    s = re.sub(r"```\n?$", "", s, flags=re.M)
    s = re.sub(r"_{4,}", "____", s)
    s = re.sub(r" {4,}", "    ", s)
    for tag in ("<html>", "</html>", "<body>", "</body>"):
        s = s.replace(tag, "")
    return s


def extract_elements(md: str) -> tuple[list[PredItem], int]:
    """Split one prediction into :class:`PredItem` s sorted by start position (see the module docstring), and count
    the ``<table`` openings that were never closed (they are left as text, as in the official code)."""
    s = _clean_page(md)
    items: list[PredItem] = []
    for (a, _), tab in _latex_tables(s):
        b = a + len(tab)
        items.append(PredItem("latex_table", (a, b), tab))
        s = _blank(s, a, b)
    unclosed = max(0, len(_HTML_OPEN.findall(s)) - len(_HTML_CLOSE.findall(s)))
    for a, b in balanced_spans(s, _HTML_OPEN, _HTML_CLOSE, *_HTML_STEPS):
        tab = s[a:b]
        items.append(PredItem("html_table", (a, a + len(tab)), tab))
        s = _blank(s, a, a + len(tab))
    for m in _FORMULA.finditer(s):
        one_line = " ".join(m.group(0).strip().split("\n"))
        inner = _DOLLAR.search(one_line)
        pos = (m.start(), m.end())
        if inner is None:  # \[ .. \]
            s = _blank(s, *pos)
            items.append(PredItem("equation_isolated", pos, one_line))
        elif inner.group(1):  # $$ .. $$
            s = _blank(s, *pos)
            items.append(PredItem("equation_isolated", pos, _DOLLAR.sub(r"\\[\1\\]", one_line)))
        else:  # $ .. $ or \( .. \): recorded, but left in the text
            items.append(PredItem("equation_isolated", pos, _DOLLAR.sub(r"\\[\2\3\\]", one_line), "equation_inline"))
    if len(_PIPE_LINE.findall(s + "\n")) >= 2:
        s = pipe_tables_to_html(s)
        for m in _HTML_TABLE_ANY.finditer(s):
            s = _blank(s, m.start(), m.end())
            items.append(PredItem("html_table", (m.start(), m.end()), m.group(0).strip(), "md2html_table"))
    for m in _CODE.finditer(s):
        s = _blank(s, m.start(), m.end())
        items.append(PredItem("text_all", (m.start(), m.end()), m.group(2).strip(), "code", {"language": m.group(1)}))
    s = re.sub(r"\\title\{(.*?)\}", r"\1", s)
    s = re.sub(r"\\title\s*\{\s*(.*?)\s*\}", r"\1", s, flags=re.S)
    s = re.sub(r"\\text\s*\{\s*(.*?)\s*\}", r"\1", s, flags=re.S)
    s = re.sub(r"\\section\*?\{(.*?)\}", r"\1", s)
    s = re.sub(r"\\section\*?\{\s*(.*?)\s*\}", r"\1", s, flags=re.S)
    blocks = s.split("\n\n")
    if len(blocks) == 1:
        blocks = s.split("\n")  # the single-newline fallback
    at = 0
    for block in blocks:
        pos = (at, at + len(block))
        at += len(block)
        t = block.strip().strip("\n")
        t = "\n".join(ln.strip() for ln in t.split("\n") if ln.strip())
        if not t:
            continue
        if t.startswith("<table") and t.endswith("</table>"):
            items.append(PredItem("html_table", pos, t))
        elif t.startswith("$") and t.endswith("$"):
            if t.replace("$", "").strip():
                items.append(PredItem("equation_isolated", pos, t.strip()))
        else:
            items.append(PredItem("text_all", pos, t.strip(), "text_block"))
    items.sort(key=lambda it: it.position[0])
    return items, unclosed
