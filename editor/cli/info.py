"""``onnx-studio info``: what a model is, in one screen (or as JSON).

    onnx-studio info MODEL [--json] [--data-dir DIR] [--top N] [--cost [--dim NAME=VALUE ...]]

The text form reads like ``ls -l`` for models: a header line (file, size, IR, opsets,
producer, node and weight counts), the graph inputs and outputs with element types and
shapes, the op-type histogram (top 15 by default), weights by dtype, external data files,
functions and subgraphs. ``--cost`` adds what the model costs (MACs, parameters, weight and
activation memory; :mod:`editor.cli.info_cost`). ``--json`` prints :meth:`editor.summary.ModelSummary.to_json`
(keys documented in :mod:`editor.summary`). No tensor data is read either way.

Exit codes: 0 printed; 2 the model could not be opened (one ``error:`` line on stderr).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from editor.errors import StudioError
from editor.summary import ModelSummary, summarize

__all__ = ["add_parser", "format_summary", "human_bytes", "human_count", "run"]


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    p = subparsers.add_parser("info", help="summarise a model (--json for machine-readable output)",
                              description=__doc__.split("\n\n")[0])
    p.add_argument("model", help="the model file (.onnx binary or ONNX text syntax)")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.add_argument("--data-dir", metavar="DIR", help="folder holding the external data (default: the model's folder)")
    p.add_argument("--top", type=int, default=15, metavar="N", help="op types to list (default 15; 0 for all)")
    p.add_argument("--cost", action="store_true",
                   help="add MACs, parameters and memory per node (formulas in the dynamic dims)")
    p.add_argument("--dim", action="append", default=[], metavar="NAME=VALUE",
                   help="with --cost: value of a named dim (repeatable)")
    return p


def run(args: argparse.Namespace) -> int:
    from editor.cli import emit_json
    from editor.document import Document

    from editor.cli.info_cost import cost_of, format_cost, format_token_cost, parse_dims
    from editor.cost.per_token import token_cost
    from editor.decoder import find_layout

    if args.dim and not args.cost:
        raise StudioError("--dim goes with --cost")
    dims = parse_dims(args.dim)
    doc = Document.open(args.model, data_dir=args.data_dir)
    try:
        summary = summarize(doc)
        cost = cost_of(doc.model, dims) if args.cost else None
        layout = find_layout(doc.model, Path(args.model).parent) if args.cost else None
        per_token = token_cost(doc.model, layout, dims=dims) if layout is not None else None
    finally:
        if doc.store is not None:
            doc.store.close()
    if args.json:
        data = summary.to_json()
        if cost is not None:
            data = {**data, **cost.to_json()}
        if per_token is not None:
            data["decoder"] = per_token.to_json()
        emit_json(data)
    else:
        print(format_summary(summary, top=args.top), end="")
        if cost is not None:
            print(format_cost(cost, top=args.top), end="")
        if per_token is not None:
            print(format_token_cost(per_token), end="")
    return 0


# ----------------------------------------------------------------------------- text form


def human_bytes(n: int | None) -> str:
    if n is None:
        return "?"
    if n < 1024:
        return f"{n} B"
    value = float(n)
    for unit in ("KiB", "MiB", "GiB", "TiB", "PiB"):
        value /= 1024
        if value < 1024 or unit == "PiB":
            return f"{value:.1f} {unit}"
    return f"{n} B"  # pragma: no cover - unreachable


def human_count(n: int) -> str:
    if n < 10_000:
        return str(n)
    for unit, size in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if n >= size:
            return f"{n / size:.1f}{unit}"
    return str(n)  # pragma: no cover - unreachable


def _shape(shape: list | None) -> str:
    if shape is None:
        return "?"
    return "[" + ", ".join("?" if d is None else str(d) for d in shape) + "]"


def _table(rows: list[list[str]], indent: str = "  ", right: set[int] = frozenset()) -> list[str]:
    """Left-aligned columns (right-aligned where asked), two spaces apart."""
    if not rows:
        return []
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    out = []
    for r in rows:
        cells = [c.rjust(widths[i]) if i in right else c.ljust(widths[i]) for i, c in enumerate(r)]
        out.append((indent + "  ".join(cells)).rstrip())
    return out


def format_summary(s: ModelSummary, *, top: int = 15) -> str:
    lines: list[str] = []
    name = s.path or "<model>"
    opsets = " ".join(f"{d}={v}" for d, v in s.opset_imports.items())
    producer = " ".join(p for p in (s.producer_name, s.producer_version) if p) or "unknown producer"
    size = human_bytes(s.file_size)
    external = sum(f["bytes"] or 0 for f in s.external_data_files)
    if s.external_data_files:
        size += f" + {human_bytes(external)} external"
    head = f"{name}  {size}  {s.format}  ir {s.ir_version}  opset {opsets or '-'}  {producer}"
    lines.append(head)
    nodes = f"{s.nodes} nodes"
    if s.nodes_total != s.nodes:
        nodes += f" ({s.nodes_total} with subgraphs)"
    weights = (f"{s.initializers} initializers {human_bytes(s.weight_bytes)} ({human_count(s.parameters)} params)"
               if s.initializers or s.sparse_initializers else "no initializers")
    if s.sparse_initializers:
        weights += f" incl. {s.sparse_initializers} sparse"
    parts = [nodes, weights]
    if s.constants:
        parts.append(f"{s.constants} Constant tensors {human_bytes(s.constant_bytes)} "
                     f"({human_count(s.constant_parameters)} params)")
    if s.functions:
        parts.append(f"{len(s.functions)} functions")
    lines.append("  ".join(parts))
    if s.graph_name or s.domain or s.model_version:
        extra = [f"graph {s.graph_name!r}"] if s.graph_name else []
        if s.domain:
            extra.append(f"domain {s.domain}")
        if s.model_version:
            extra.append(f"model_version {s.model_version}")
        lines.append("  ".join(extra))

    for title, values in (("inputs", s.inputs), ("outputs", s.outputs)):
        lines.append(f"{title} ({len(values)})")
        rows = [
            [v["name"] or "''", v["elem_type"], _shape(v["shape"]) + ("  (initializer)" * bool(v.get("initializer")))]
            for v in values
        ]
        lines += _table(rows)

    if s.op_types:
        ops = list(s.op_types.items())
        shown = ops if top <= 0 else ops[:top]
        more = f", top {len(shown)}" if len(shown) < len(ops) else ""
        lines.append(f"ops ({len(ops)} types{more})")
        rows = [[str(c), op] for op, c in shown]
        rest = sum(c for _, c in ops[len(shown):])
        if rest:
            rows.append([str(rest), f"... {len(ops) - len(shown)} more types"])
        lines += _table(rows, right={0})

    if s.weights_by_dtype:
        lines.append("weights by dtype (initializers and Constant tensors)")
        rows = [[dt, f"{e['tensors']} tensors", f"{human_count(e['parameters'])} params", human_bytes(e["bytes"])]
                for dt, e in s.weights_by_dtype.items()]
        lines += _table(rows, right={1, 2, 3})

    if s.external_data_files:
        lines.append(f"external data ({_plural(len(s.external_data_files), 'file')})")
        rows = [[f["path"], human_bytes(f["bytes"]), _plural(f["tensors"], "tensor")] for f in s.external_data_files]
        lines += _table(rows, right={1, 2})

    if s.functions:
        lines.append(f"functions ({len(s.functions)})")
        rows = []
        for f in s.functions:
            fname = f"{f['domain']}.{f['name']}" if f["domain"] else f["name"]
            if f["overload"]:
                fname += f":{f['overload']}"
            sig = f"({', '.join(f['inputs'])}) -> ({', '.join(f['outputs'])})"
            rows.append([fname, _clip(sig), _plural(f["nodes"], "node")])
        lines += _table(rows)

    if s.subgraphs:
        lines.append(f"subgraphs ({len(s.subgraphs)})")
        shown_sg = s.subgraphs[:top] if top > 0 else s.subgraphs
        lines += _table([[_clip(g["path"]), _plural(g["nodes"], "node")] for g in shown_sg], right={1})
        if len(shown_sg) < len(s.subgraphs):
            lines.append(f"  ... {len(s.subgraphs) - len(shown_sg)} more")

    if s.metadata_props:
        lines.append(f"metadata ({len(s.metadata_props)})")
        rows = [[k, _one_line(v)] for k, v in s.metadata_props.items()]
        lines += _table(rows)
    return "\n".join(lines) + "\n"


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _clip(text: str, limit: int = 72) -> str:
    """Keep the end of long graph paths (the innermost part is the informative one)."""
    return text if len(text) <= limit else "..." + text[-(limit - 3):]


def _one_line(text: str, limit: int = 80) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."
