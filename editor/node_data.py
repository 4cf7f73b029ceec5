"""Per-node data from other tools (Model Explorer's "custom node data"): a profile from
another runtime, an accuracy or sensitivity score per layer, a label per node.

:func:`load_node_data` reads JSON or CSV and gives node name -> number or text:

- JSON: an object ``{"conv1": 0.93, ...}``; or a list of objects, each with a node name
  (key ``name`` or ``node``) and a value (key ``value``, else the first other key);
  or ``{"nodes": [...]}`` of the same.
- CSV: a header row; the node name is the column called ``name`` or ``node`` (else the
  first), the value the column given, else the first other column.
- onnxruntime's profile (the Chrome-trace JSON list ``SessionOptions.enable_profiling``
  writes): each node's kernel time in microseconds, summed over its runs (an unnamed node
  under onnxruntime's name for it, ``<op type>_<index>``)
  (:func:`editor.runtime.profiling.parse_ort_profile`), so a profile recorded on the target
  device colours the graph as it ran there.

Numbers stay numbers (the canvas colours them as a heat map); anything else is a label.
Bad input raises :class:`~editor.errors.StudioError` with one line that says what is wrong.
"""

from __future__ import annotations

import csv
import json
import math
from collections import Counter
from collections.abc import Callable, Container, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from editor.errors import StudioError

V = TypeVar("V")

__all__ = ["NodeData", "load_node_data", "innermost_group", "by_box", "box_values", "overlay_amounts", "legend_entries"]

NAME_KEYS = ("name", "node", "node_name", "layer")


@dataclass
class NodeData:
    values: dict[str, float | str]
    column: str = "value"
    source: str = ""
    #: names in the file that no node of the model has (filled by :meth:`match`)
    unmatched: list[str] = field(default_factory=list)
    #: an onnxruntime profile: an unnamed node is named ``<op type>_<index>`` there
    #: (:func:`editor.runtime.profiling.profile_node_names`)
    ort_profile: bool = False

    @property
    def numeric(self) -> bool:
        return bool(self.values) and all(isinstance(v, float) for v in self.values.values())

    def match(self, node_names: dict[int, str]) -> dict[int, float | str]:
        """Node id -> value for the nodes whose name the file gives."""
        by_name: dict[str, list[int]] = {}
        for nid, name in node_names.items():
            by_name.setdefault(name, []).append(nid)
        out: dict[int, float | str] = {}
        self.unmatched = []
        for name, value in self.values.items():
            ids = by_name.get(name)
            if not ids:
                self.unmatched.append(name)
                continue
            for nid in ids:
                out[nid] = value
        return out


    def match_doc(self, doc: Any) -> dict[int, float | str]:
        """:meth:`match` over every node of ``doc`` (an :class:`editor.document.Document`);
        an onnxruntime profile's unnamed main-graph nodes by onnxruntime's names for them."""
        names = {nid: node.name for _scope, nid, node in doc.index.iter_nodes()}
        if self.ort_profile:
            from editor.runtime.profiling import main_profile_names

            names.update(main_profile_names(doc))
        return self.match(names)


def _value(v: object) -> float | str:
    if isinstance(v, bool):
        return str(v).lower()
    if isinstance(v, (int, float)) and math.isfinite(float(v)):
        return float(v)
    if isinstance(v, str):
        try:
            f = float(v)
        except ValueError:
            return v
        return f if math.isfinite(f) else v
    return json.dumps(v) if not isinstance(v, str) else v


def load_node_data(path: str | Path, column: str | None = None) -> NodeData:
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise StudioError(f"no such file: '{p}'") from None
    except IsADirectoryError:
        raise StudioError(f"'{p}' is a folder, not a node data file") from None
    except UnicodeDecodeError:
        raise StudioError(f"'{p}' is not UTF-8 text (node data is JSON or CSV)") from None
    except OSError as exc:
        raise StudioError(f"cannot read '{p}': {exc.strerror}") from None
    if p.suffix.lower() == ".json" or text.lstrip().startswith(("{", "[")):
        data = _from_json(text, p, column)
    else:
        data = _from_csv(text, p, column)
    if not data.values:
        raise StudioError(f"'{p}' names no node (expected JSON {{\"node\": value}} or a CSV with a name column)")
    data.source = str(p)
    return data


def _from_json(text: str, p: Path, column: str | None) -> NodeData:
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as exc:
        raise StudioError(f"'{p}' is not valid JSON: {exc.msg} at line {exc.lineno}") from None
    if isinstance(raw, dict) and isinstance(raw.get("nodes"), list):
        raw = raw["nodes"]
    if isinstance(raw, dict):
        return NodeData({str(k): _value(v) for k, v in raw.items() if not isinstance(v, (dict, list))},
                        column or "value")
    if not isinstance(raw, list):
        raise StudioError(f"'{p}': expected an object or a list of objects")
    if any(isinstance(item, dict) and item.get("cat") == "Node" for item in raw):
        return _from_ort_profile(raw, p)
    values: dict[str, float | str] = {}
    used = column
    for k, item in enumerate(raw):
        if not isinstance(item, dict):
            raise StudioError(f"'{p}': item {k} is not an object")
        key = next((n for n in NAME_KEYS if n in item), None)
        if key is None:
            raise StudioError(f"'{p}': item {k} has no node name (a key among {', '.join(NAME_KEYS)})")
        if used is None:
            used = "value" if "value" in item else next((c for c in item if c != key), None)
        if used is None or used not in item:
            raise StudioError(f"'{p}': item {k} has no {used or 'value'!r}")
        values[str(item[key])] = _value(item[used])
    return NodeData(values, used or "value")


def _from_ort_profile(events: list, p: Path) -> NodeData:
    """Kernel time per node (µs) from onnxruntime's profile events."""
    from editor.runtime.profiling import parse_ort_profile

    times = parse_ort_profile(events)
    if not times:
        raise StudioError(f"'{p}' is an onnxruntime profile with no kernel times (was the session run?)")
    return NodeData({name: float(t.microseconds) for name, t in times.items()}, "kernel time (onnxruntime profile)",
                    ort_profile=True)


def _from_csv(text: str, p: Path, column: str | None) -> NodeData:
    try:
        dialect = csv.Sniffer().sniff(text[:4096], delimiters=",;\t")
    except csv.Error:
        dialect = csv.excel
    rows = list(csv.reader(text.splitlines(), dialect))
    if len(rows) < 2:
        raise StudioError(f"'{p}': a CSV needs a header row and at least one row of data")
    header = [h.strip() for h in rows[0]]
    name_col = next((k for k, h in enumerate(header) if h.lower() in NAME_KEYS), 0)
    if column is not None:
        if column not in header:
            raise StudioError(f"'{p}' has no column {column!r} (columns: {', '.join(header)})")
        value_col = header.index(column)
    else:
        value_col = next((k for k in range(len(header)) if k != name_col), None)
        if value_col is None:
            raise StudioError(f"'{p}' has only one column: a value column is needed beside the node names")
    values = {}
    for row in rows[1:]:
        if len(row) > max(name_col, value_col) and row[name_col].strip():
            values[row[name_col].strip()] = _value(row[value_col].strip())
    return NodeData(values, header[value_col])


def innermost_group(groups: Mapping[str, str], name: str) -> str | None:
    """The key of the innermost collapsed group whose path (``groups``: path without the
    trailing ``/`` -> box key) prefixes node ``name``; looked up prefix by prefix, so the
    cost is linear in the name, not in the number of groups."""
    if not groups:
        return None
    parts = name.split("/")
    for i in range(len(parts) - 1, 0, -1):
        key = groups.get("/".join(parts[:i]))
        if key is not None:
            return key
    return None


def by_box(values: Mapping[int, V], keys: Container[str], groups: Mapping[str, str],
           names: Mapping[int, str]) -> Iterator[tuple[str, V]]:
    """(box key, value) for each node's value: the node's own box (``n:<id>``) when it is
    drawn (in ``keys``), else the innermost collapsed group holding it; nodes in neither
    are skipped. Every overlay (profile, diff, errors, node data) assigns values this way."""
    for nid, value in values.items():
        key: str | None = f"n:{nid}"
        if key not in keys:
            key = innermost_group(groups, names.get(nid, ""))
            if key is None:
                continue
        yield key, value


def box_values(boxes: Iterable[tuple[str, str]], values: Mapping[int, float | str],
               names: Mapping[int, str]) -> dict[str, float | str]:
    """Box key -> the value it shows: a node box (``n:<id>``) its node's, a collapsed group
    (``g:<path>``) the largest number of the nodes inside it (labels: the most common).

    ``boxes`` are (key, name) of the drawn boxes (a group's name is its path); ``values``
    node id -> value (:meth:`NodeData.match`); ``names`` node id -> node name."""
    keys: set[str] = set()
    groups: dict[str, str] = {}
    for key, name in boxes:
        keys.add(key)
        if key.startswith("g:") and name:
            groups[name.rstrip("/")] = key
    per_key: dict[str, list[float | str]] = {}
    for key, value in by_box(values, keys, groups, names):
        per_key.setdefault(key, []).append(value)
    out: dict[str, float | str] = {}
    for key, vals in per_key.items():
        numbers = [v for v in vals if isinstance(v, float)]
        out[key] = max(numbers) if numbers else Counter(map(str, vals)).most_common(1)[0][0]
    return out


def _fmt_number(v: float) -> str:
    return f"{v:.4g}"


def overlay_amounts(values: Mapping[str, float | str], numeric: bool
                    ) -> tuple[dict[str, float], Callable[[float], str]]:
    """(box key -> a non-negative amount for the heat scale, amount -> the text a badge
    shows). Numbers are shifted so the smallest is pale and the largest deep red (scores
    can be negative); labels are numbered 1..n in sorted order, each a colour of its own."""
    if numeric:
        offset = min(0.0, min((float(v) for v in values.values()), default=0.0))
        return {k: float(v) - offset for k, v in values.items()}, lambda a: _fmt_number(a + offset)
    labels = sorted({str(v) for v in values.values()})
    index = {label: k + 1 for k, label in enumerate(labels)}
    return ({k: float(index[str(v)]) for k, v in values.items()},
            lambda a: labels[min(len(labels), max(1, int(round(a)))) - 1])


def legend_entries(values: Mapping[str, float | str], numeric: bool, *, steps: int = 5) -> list[tuple[float, str]]:
    """(amount, text) pairs a legend shows for the box values ``values``: ``steps`` points
    from the smallest to the largest number, or every label (amounts as
    :func:`overlay_amounts` gives them, so the legend's colours are the boxes')."""
    amounts, text = overlay_amounts(values, numeric)
    if not amounts:
        return []
    if not numeric:
        return sorted({(a, text(a)) for a in amounts.values()})
    lo, hi = min(amounts.values()), max(amounts.values())
    if hi == lo:
        return [(hi, text(hi))]
    return [(lo + (hi - lo) * k / (steps - 1), text(lo + (hi - lo) * k / (steps - 1))) for k in range(steps)]
