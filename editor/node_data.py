"""Per-node data from other tools (Model Explorer's "custom node data"): a profile from
another runtime, an accuracy or sensitivity score per layer, a label per node.

:func:`load_node_data` reads JSON or CSV and gives node name -> number or text:

- JSON: an object ``{"conv1": 0.93, ...}``; or a list of objects, each with a node name
  (key ``name`` or ``node``) and a value (key ``value``, else the first other key);
  or ``{"nodes": [...]}`` of the same.
- CSV: a header row; the node name is the column called ``name`` or ``node`` (else the
  first), the value the column given, else the first other column.

Numbers stay numbers (the canvas colours them as a heat map); anything else is a label.
Bad input raises :class:`~editor.errors.StudioError` with one line that says what is wrong.
"""

from __future__ import annotations

import csv
import json
import math
from dataclasses import dataclass, field
from pathlib import Path

from editor.errors import StudioError

__all__ = ["NodeData", "load_node_data"]

NAME_KEYS = ("name", "node", "node_name", "layer")


@dataclass
class NodeData:
    values: dict[str, float | str]
    column: str = "value"
    source: str = ""
    #: names in the file that no node of the model has (filled by :meth:`match`)
    unmatched: list[str] = field(default_factory=list)

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
