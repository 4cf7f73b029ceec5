"""The model summary view: parameters, weight bytes by dtype, op histogram, opsets,
producer, inputs and outputs — :func:`editor.summary.summarize` rendered as rich text.

The numbers are exactly the ones ``onnx-studio info --json`` prints (same function). The
summary is recomputed after edits, coalesced so a burst of commands costs one rebuild.
"""

from __future__ import annotations

from html import escape
from urllib.parse import quote, unquote

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QTextBrowser, QVBoxLayout, QWidget

from editor.errors import StudioError
from widgets.common.formatting import human_bytes, human_count
from widgets.common.selection import Target
from widgets.common.seen import SeenWatch, is_seen

SOURCE = "summary"

MAX_OPS = 60


def _shape(shape) -> str:
    if shape is None:
        return "?"
    return "[" + ",".join("?" if d is None else str(d) for d in shape) + "]"


def summary_html(s, *, accent: str = "#2f6fd0") -> str:
    """HTML for a ModelSummary."""
    out = ["<style>td{padding:1px 8px 1px 0;} th{text-align:left;padding-right:8px;} h3{margin-top:14px;}</style>"]
    title = escape(s.path.rsplit('/', 1)[-1]) if s.path else "Untitled"
    out.append(f"<h2>{title}</h2>")
    producer = " ".join(x for x in (s.producer_name, s.producer_version) if x) or "unknown"
    rows = [
        ("Producer", escape(producer)),
        ("IR version", str(s.ir_version)),
        ("Opsets", escape(", ".join(f"{d or 'ai.onnx'} {v}" for d, v in s.opset_imports.items()))),
        ("File size", human_bytes(s.file_size) if s.file_size else "—"),
        ("Nodes", f"{s.nodes:,}" + (f" ({s.nodes_total:,} with subgraphs)" if s.nodes_total != s.nodes else "")),
        ("Parameters", f"{human_count(s.parameters + s.constant_parameters)} "
                       f"({s.parameters:,} in {s.initializers:,} initializers, "
                       f"{s.constant_parameters:,} in {s.constants:,} constants)"),
        ("Weight bytes", human_bytes(s.weight_bytes + s.constant_bytes)),
    ]
    if s.functions:
        rows.append(("Functions", str(len(s.functions))))
    if s.subgraphs:
        rows.append(("Subgraphs", str(len(s.subgraphs))))
    if s.external_data_files:
        rows.append(("External data", escape(", ".join(f["path"] for f in s.external_data_files))))
    out.append("<table>" + "".join(f"<tr><td><b>{k}</b></td><td>{v}</td></tr>" for k, v in rows) + "</table>")

    def values(title: str, items) -> None:
        out.append(f"<h3>{title} ({len(items)})</h3><table>")
        for v in items:
            if v.get("initializer"):
                continue
            link = f"<a href='value:{quote(v['name'])}'>{escape(v['name'])}</a>"
            out.append(f"<tr><td>{link}</td><td>{escape(str(v.get('elem_type', '')))}"
                       f"{escape(_shape(v.get('shape')))}</td></tr>")
        out.append("</table>")

    values("Inputs", s.inputs)
    values("Outputs", s.outputs)
    if s.weights_by_dtype:
        out.append("<h3>Weights by dtype</h3><table><tr><th>dtype</th><th>tensors</th><th>parameters</th>"
                   "<th>bytes</th></tr>")
        for dtype, rec in sorted(s.weights_by_dtype.items(), key=lambda kv: -kv[1].get("bytes", 0)):
            out.append(f"<tr><td>{escape(dtype)}</td><td>{rec.get('tensors', 0):,}</td>"
                       f"<td>{rec.get('parameters', 0):,}</td><td>{human_bytes(rec.get('bytes', 0))}</td></tr>")
        out.append("</table>")
    if s.op_types:
        out.append(f"<h3>Operators ({len(s.op_types)} types)</h3><table>")
        peak = max(s.op_types.values())
        for op, n in list(s.op_types.items())[:MAX_OPS]:
            width = max(1, round(160 * n / peak))
            out.append(f"<tr><td><a href='op:{quote(op)}'>{escape(op)}</a></td><td align='right'>{n:,}</td>"
                       f"<td><table cellspacing='0' cellpadding='0'><tr><td width='{width}' height='9' "
                       f"bgcolor='{accent}'></td></tr></table></td></tr>")
        if len(s.op_types) > MAX_OPS:
            out.append(f"<tr><td colspan='3'>… {len(s.op_types) - MAX_OPS} more</td></tr>")
        out.append("</table>")
    if s.metadata_props:
        out.append("<h3>Metadata</h3><table>")
        for k, v in s.metadata_props.items():
            out.append(f"<tr><td><b>{escape(k)}</b></td><td>{escape(v[:300])}</td></tr>")
        out.append("</table>")
    return "".join(out)


class SummaryPanel(QWidget):
    """Shows the current tab's model summary."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.browser = QTextBrowser(self)
        self.browser.setOpenLinks(False)
        self.browser.anchorClicked.connect(self._on_link)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.browser)
        self._tab = None
        self.summary = None
        #: the document changed since the last summary (made when the panel is on screen)
        self._stale = False
        self._seen = SeenWatch(self, self._on_seen)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(250)
        self._timer.timeout.connect(self.refresh)

    # NOTE: the summary reads the whole model (16 ms on a 121-node model, its HTML 29 ms
    # more): a panel off screen (a tab behind Properties by default) is summarized when it
    # comes on screen
    def set_tab(self, tab) -> None:
        if self._tab is not None:
            self._tab.doc.changed.disconnect(self._on_changed)
        self._tab = tab
        if tab is not None:
            tab.doc.changed.connect(self._on_changed)
        self._seen.attach()
        self._stale = True
        if is_seen(self) or tab is None:
            self.refresh()

    def _on_seen(self) -> None:
        if self._stale:
            self._timer.start(0)

    def _on_changed(self, changes) -> None:
        # the summary names no node but the owners of subgraphs: renaming any other node
        # leaves it as it is (it cost 180 ms per rename on a 670-node model)
        children = self._tab.doc.index.children
        if changes.only_node_fields(("name", "doc_string")) and not any(
                children.get(nid) for nid in changes.nodes_changed):
            return
        self._stale = True
        if is_seen(self):
            self._timer.start()

    def _on_link(self, url) -> None:
        """``value:NAME`` selects a graph input/output; ``op:KEY`` selects every node of that
        op (main graph and its subgraphs, the same set the histogram counts)."""
        tab = self._tab
        if tab is None:
            return
        kind, _, rest = url.toString().partition(":")
        rest = unquote(rest)
        doc = tab.doc
        if kind == "value":
            tab.selection.select([Target.of_value(doc.index.main, rest)], SOURCE)
        elif kind == "op":
            from editor.summary import op_key

            targets = [Target.of_node(scope.id, nid) for scope, nid, node in doc.index.iter_nodes()
                       if op_key(node) == rest and doc.index.scope_chain(scope.id)[-1].kind == "main"]
            if targets:
                tab.selection.select(targets, SOURCE)

    def refresh(self) -> None:
        self._timer.stop()
        self._stale = False
        if self._tab is None:
            self.summary = None
            self.browser.clear()
            return
        from editor.summary import summarize

        try:
            self.summary = summarize(self._tab.doc)
            text = summary_html(self.summary, accent=self.palette().highlight().color().name())
        except Exception as exc:  # noqa: BLE001 - a damaged model: say so here, keep the window going
            self.summary = None
            message = exc.message if isinstance(exc, StudioError) else f"{type(exc).__name__}: {exc}"
            text = f"<p><b>Cannot summarize this model.</b></p><p>{escape(message.splitlines()[0] if message else '')}</p>"
        self.browser.setHtml(text)
