"""OmniDocBench's element matching (official ``match_gt2pred_quick`` and ``match_gt2pred_simple``) on normalised lines.

Both functions take the normalised GT lines (with their categories) and the normalised predicted lines of one page,
all non-empty, and return groups ``(gt_indices, pred_indices)`` in the official output order; ``pred_indices`` is
``None`` for a GT element left without prediction and ``gt_indices`` is ``[]`` for a prediction-only group.  The
distance everywhere is ``NED(a, b) = Lev(a, b) / max(|a|, |b|)``.

``quick_match`` (the default of the official end-to-end evaluation):

* special cases: no prediction -> every GT alone; one GT line and one predicted line -> one pair;
* **ignore categories** (headers, footers, page numbers, page footnotes, captions, footnotes, algorithms): every
  prediction within ``NED < 0.25`` of a GT element of an ignore category is removed from the page before the main
  matching (the official code also pairs them, but those pairs are filtered out of every metric);
* **fragment merging** (``deal_with_truncated``): pairs with ``NED < 0.25`` anchor their GT and prediction; for each
  free GT element and each free prediction ``p``, the run ``p, p+1, ..`` grows while the next prediction is free,
  joining it does not raise the NED to the GT element, every piece so far is a fuzzy substring of the GT element
  (best window ``NED <= 0.6``) and the new piece is one (``< 0.6``); the run stops growing once it is as long as the GT
  element.  Each free GT element keeps its cheapest run; overlapping runs are resolved by the official path rule
  (keep the set of compatible runs with the lowest mean cost) and each kept run becomes one merged prediction;
* a Hungarian assignment on the NED matrix against the merged predictions; assigned pairs with ``NED > 0.7`` are
  undone;
* **many-to-one fuzzy merge**: a GT element left unmatched is given to every prediction that contains it as a fuzzy
  substring (best window of the prediction ``NED < 0.4``); several GT elements given to one prediction form one
  group, compared with their concatenation;
* left-overs: when unmatched predictions remain, they are paired with the unmatched GT elements by a second Hungarian
  assignment (whatever the distance) or, with no GT element left, form one prediction-only group; GT elements still
  alone get no prediction.

``simple_match``: one Hungarian assignment; the official table matching (on the raw HTML strings).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from rapidfuzz.distance import Levenshtein
from scipy.optimize import linear_sum_assignment

__all__ = ["IGNORE_CATEGORIES", "quick_match", "simple_match", "ned_matrix"]

IGNORE_CATEGORIES = (
    "figure_caption",
    "figure_footnote",
    "table_caption",
    "table_footnote",
    "code_algorithm",
    "code_algorithm_caption",
    "header",
    "footer",
    "page_footnote",
    "page_number",
    "equation_caption",
)

Group = tuple[list[int], "list[int] | None"]


def _ned(a: str, b: str) -> float:
    n = max(len(a), len(b))
    return 0.0 if n == 0 else Levenshtein.distance(a, b) / n


def ned_matrix(rows: Sequence[str], cols: Sequence[str]) -> np.ndarray:
    """``M[i, j] = NED(rows[i], cols[j])`` (0 when both are empty)."""
    m = np.zeros((len(rows), len(cols)))
    for i, r in enumerate(rows):
        for j, c in enumerate(cols):
            m[i, j] = _ned(r, c)
    return m


def _best_window(long: str, short: str) -> float | None:
    """Lowest ``Lev(window, short) / |short|`` over the windows of ``long`` of length ``|short|``; ``None`` when
    ``short`` is empty or longer than ``long``."""
    k = len(short)
    if k == 0 or k > len(long):
        return None
    return min(Levenshtein.distance(long[i : i + k], short) for i in range(len(long) - k + 1)) / k


def _may_extend(gt: str, run: list[str], threshold: float = 0.6) -> tuple[bool, bool]:
    """Official ``judge_pred_merge``: may the last piece of ``run`` join the others (and may the run grow further)?"""
    if len(run) == 1:
        return False, False
    if _ned(gt, " ".join(run)) > _ned(gt, " ".join(run[:-1])):
        return False, False
    for piece in run[:-1]:
        d = _best_window(gt, piece)
        if d is None or d > threshold:
            return False, False
    d = _best_window(gt, run[-1])
    if d is None:
        return False, False
    return d < threshold, len(" ".join(run)) <= len(gt)


def _resolve_overlaps(runs: list[list[int]], costs: list[float]) -> list[list[int]]:
    """Official ``get_final_subset``: runs sorted by first index are grouped while they overlap the current group;
    inside a group of several runs, runs are distributed over 'paths' of mutually compatible runs (a run equal to one
    already on a path replaces it when cheaper) and the path with the lowest mean cost is kept."""
    if not runs:
        return []
    order = sorted(zip(runs, costs), key=lambda rc: rc[0][0])
    groups: list[list[tuple[list[int], float]]] = [[order[0]]]
    for item in order[1:]:
        if any(i in other[0] for other in groups[-1] for i in item[0]):
            groups[-1].append(item)
        else:
            groups.append([item])
    kept: list[list[int]] = []
    for group in groups:
        if len(group) == 1:
            kept.append(group[0][0])
            continue
        paths: list[list[tuple[list[int], float]]] = [[group[0]]]
        for cand in group[1:]:
            new_path = True
            for path in paths:
                dup = same = False
                k = 0
                while k < len(path):  # the official loop edits the path while iterating over it; kept as is
                    item = path[k]
                    if item[0] == cand[0]:
                        dup = same = True
                        if item[1] > cand[1]:
                            path.pop(path.index(item))
                            path.append(cand)
                    elif any(a == b for a in item[0] for b in cand[0]):
                        dup = True
                    k += 1
                if not dup:
                    path.append(cand)
                    new_path = False
                if same:
                    new_path = False
            if new_path:
                paths.append([cand])
        best, best_cost = [], float("inf")
        for path in paths:
            mean = sum(c for _, c in path) / len(path)
            if mean < best_cost:
                best, best_cost = [r for r, _ in path], mean
        kept.extend(best)
    return kept


def _merge_fragments(cost: np.ndarray, gt: list[str], pred: list[str]) -> tuple[np.ndarray, list]:
    """Official ``deal_with_truncated``: returns the cost matrix against the merged predictions and, per column,
    either a prediction index or the list of merged prediction indices."""
    anchored = np.argwhere(cost < 0.25)
    gt_anch = {int(r) for r, _ in anchored}
    pred_anch = {int(c) for _, c in anchored}
    free_pred = [j for j in range(cost.shape[1]) if j not in pred_anch]
    runs, run_costs = [], []
    for g in range(cost.shape[0]):
        if g in gt_anch:
            continue
        best: tuple[list[int], float] | None = None
        for p in free_pred:
            pieces, step = [pred[p]], 1
            while p + step not in pred_anch and p + step < len(pred):
                pieces.append(pred[p + step])
                ok, go_on = _may_extend(gt[g], pieces)
                if not ok:
                    break
                step += 1
                if not go_on:
                    break
            span = list(range(p, p + step))
            d = _ned(gt[g], " ".join(pred[k] for k in span))
            if best is None or d < best[1]:
                best = (span, d)
        if best is not None:
            runs.append(best[0])
            run_costs.append(best[1])
    kept = _resolve_overlaps(runs, run_costs)
    if not kept:
        return cost, list(range(len(pred)))
    cols: list = list(range(len(pred)))
    for run in kept:
        try:
            at = cols.index(run[0])
        except ValueError as e:  # the official code fails here too (overlapping runs on one path)
            raise RuntimeError("OmniDocBench quick_match cannot merge overlapping fragment runs on this page") from e
        del cols[at : at + len(run)]
        cols.insert(at, run)
    lines = [" ".join(pred[c[0] : c[-1] + 1]) if isinstance(c, list) else pred[c] for c in cols]
    return ned_matrix(gt, lines), cols


def quick_match(gt: Sequence[str], gt_categories: Sequence[str], pred: Sequence[str]) -> list[Group]:
    """Official ``match_gt2pred_quick`` on non-empty normalised lines (see the module docstring)."""
    gt, pred = list(gt), list(pred)
    if not gt:
        return [([], [j]) for j in range(len(pred))]
    if not pred:
        return [([i], None) for i in range(len(gt))]
    if len(gt) == 1 and len(pred) == 1:
        return [([0], [0])]
    ign = [i for i in range(len(gt)) if gt_categories[i] in IGNORE_CATEGORIES]
    keep_gt = [i for i in range(len(gt)) if gt_categories[i] not in IGNORE_CATEGORIES]
    dropped: set[int] = set()
    if ign:
        m = ned_matrix([gt[i] for i in ign], pred)
        dropped = {int(j) for _, j in np.argwhere(m < 0.25)}
    keep_pred = [j for j in range(len(pred)) if j not in dropped]
    g = [gt[i] for i in keep_gt]
    p = [pred[j] for j in keep_pred]
    groups = _match_core(g, p)
    return [
        ([keep_gt[i] for i in gi], None if pj is None else [keep_pred[j] for j in pj])  # back to page indices
        for gi, pj in groups
    ]


def _match_core(gt: list[str], pred: list[str]) -> list[Group]:
    m, n = len(gt), len(pred)
    cost = ned_matrix(gt, pred)
    merged_cost, cols = _merge_fragments(cost, gt, pred)
    rows, assigned = linear_sum_assignment(merged_cost)
    matches: dict[int, list[int]] = {}
    unmatched_gt: list[int] = []
    where = {int(r): k for k, r in enumerate(rows)}
    for i in range(m):
        if i not in where:
            unmatched_gt.append(i)
            continue
        k = where[i]
        c = cols[int(assigned[k])]
        ids = list(range(c[0], c[-1] + 1)) if isinstance(c, list) else [int(c)]
        if merged_cost[i, int(assigned[k])] > 0.7:
            unmatched_gt.append(i)
        else:
            matches[i] = ids
    fuzzy: dict[int, list[int]] = {}
    for j in range(n):
        hits = []
        for i in unmatched_gt:
            d = _best_window(pred[j], gt[i])
            if (1.0 if d is None else d) < 0.4:
                hits.append(i)
        if hits:
            fuzzy[j] = hits
    final: dict[tuple[int, ...], list[int]] = {}
    done: set[int] = set()
    for i, ids in matches.items():
        key = tuple(sorted(ids))
        if key in final:
            if i not in done:
                final[key].append(i)
                done.add(i)
        else:
            final[key] = [i]
            done.add(i)
    for j, hits in fuzzy.items():
        key = (j,)
        if key in final:
            for i in hits:
                if i not in done:
                    final[key].append(i)
                    done.add(i)
        else:
            final[key] = [i for i in hits if i not in done]
            done.update(final[key])
    # one entry per (GT element, prediction key), then the left-overs
    entries: list[tuple[int | None, tuple[int, ...] | None]] = [
        (i, key) for key, gis in final.items() for i in sorted(set(gis))
    ]
    # The official code takes these left-overs as Python set differences and iterates them in set order, which
    # decides Hungarian ties; the same set expressions keep that order.
    matched_gt: set[int] = set().union(*[set(gis) for gis in final.values()])
    matched_pred = {j for key in final for j in key}
    free_gt = list(set(range(m)) - matched_gt)
    free_pred = list(set(range(n)) - matched_pred)
    if free_pred:
        if free_gt:
            left = ned_matrix([gt[i] for i in free_gt], [pred[j] for j in free_pred])
            for r, c in zip(*linear_sum_assignment(left)):
                entries.append((free_gt[int(r)], (free_pred[int(c)],)))
        else:
            entries.append((None, tuple(free_pred)))
    else:
        entries += [(i, None) for i in free_gt]
    # official merge_duplicates_add_unmatched: entries sharing a prediction key become one group
    out: list[Group] = []
    seen_keys: set[tuple[int, ...]] = set()
    seen_gt: set[int] = set()
    for k, (gi, pkey) in enumerate(entries):
        if pkey is None or pkey in seen_keys:
            continue
        gis = [gi] + [g2 for k2, (g2, key2) in enumerate(entries) if key2 == pkey and k2 != k]
        out.append(([x for x in gis if x is not None], list(pkey)))
        seen_keys.add(pkey)
        seen_gt.update(x for x in gis if x is not None)
    out += [([i], None) for i in range(m) if i not in seen_gt]
    return out


def simple_match(gt: Sequence[str], pred: Sequence[str]) -> tuple[list[tuple[int, int | None]], list[int]]:
    """Official ``match_gt2pred_simple``: Hungarian assignment on NED; returns ``[(gt_index, pred_index or None)]``
    in GT order (every GT element, assigned whatever the distance) and the unassigned prediction indices."""
    if not pred:
        return [(i, None) for i in range(len(gt))], []
    if not gt:
        return [], list(range(len(pred)))
    rows, cols = linear_sum_assignment(ned_matrix(gt, pred))
    where = {int(r): int(c) for r, c in zip(rows, cols)}
    used = set(where.values())
    return [(i, where.get(i)) for i in range(len(gt))], [j for j in range(len(pred)) if j not in used]
