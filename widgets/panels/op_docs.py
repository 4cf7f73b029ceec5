"""Operator documentation for the selected node, at the model's opset, from ``onnx.defs``
(onnxruntime's registry for the ops only it defines: :mod:`editor.schema`).

Rendered as rich text (the schema docs are Markdown): summary line, the doc, inputs and
outputs with their type strings and options, attributes with type, default or required,
and type constraints. Nothing here is hand-written about any op.
"""

from __future__ import annotations

import re

import onnx
from onnx.defs import OpSchema
from PySide6.QtWidgets import QTextBrowser, QVBoxLayout, QWidget

from widgets.common.formatting import attribute_text

_OPTION = {
    OpSchema.FormalParameterOption.Optional: "optional",
    OpSchema.FormalParameterOption.Variadic: "variadic",
}


def _attr_type_name(t) -> str:
    try:
        return onnx.AttributeProto.AttributeType.Name(int(t.value)).lower()
    except Exception:  # noqa: BLE001
        return str(t).rsplit(".", 1)[-1].lower()


#: a fenced code block (``` lines) or an inline code span: Markdown shows them verbatim
_CODE = re.compile(r"^[ \t]*```.*?^[ \t]*```[^\n]*$|`[^`\n]*`", re.MULTILINE | re.DOTALL)


def _md(text: str) -> str:
    """Schema text for Markdown: ``Tensor<T>`` must not read as an HTML tag. Code is left
    as it is: Markdown shows code verbatim, so an entity there read ``&lt;`` on screen
    (LayerNormalization's ``ReduceMean<axes=normalized_axes>(X)``)."""
    out, at = [], 0
    for m in _CODE.finditer(text):
        out.append(_escape(text[at:m.start()]))
        out.append(m.group(0))
        at = m.end()
    out.append(_escape(text[at:]))
    return "".join(out)


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def schema_markdown(schema: OpSchema, opset: int | None) -> str:
    """The documentation of one schema as Markdown."""
    domain = schema.domain or "ai.onnx"
    lines = [f"## {schema.name}", ""]
    at = f" (the model imports {domain} {opset})" if opset is not None else ""
    from editor.schema import schema_source

    runtime = schema_source(schema.name, schema.domain, schema.since_version) == "onnxruntime"
    source = " · from onnxruntime's registry" if runtime else ""
    lines.append(f"*{domain}* · version **{schema.since_version}**{at}"
                 + (" · **deprecated**" if schema.deprecated else "") + source)
    lines.append("")
    if schema.doc:
        lines.append(_md(schema.doc.strip()))
        lines.append("")

    def params(title: str, items) -> None:
        if not items:
            return
        lines.append(f"#### {title}")
        lines.append("")
        for p in items:
            opt = _OPTION.get(p.option)
            extra = f", {opt}" if opt else ""
            desc = _md(" ".join(p.description.split())) if p.description else ""
            lines.append(f"- **{p.name}** (*{_md(p.type_str)}*{extra}){': ' + desc if desc else ''}")
        lines.append("")

    params("Inputs", schema.inputs)
    params("Outputs", schema.outputs)
    if schema.attributes:
        lines.append("#### Attributes")
        lines.append("")
        for name, a in sorted(schema.attributes.items()):
            if a.required:
                extra = "required"
            elif a.default_value.type != 0:
                extra = f"default {attribute_text(a.default_value)}"
            else:
                extra = "optional"
            desc = _md(" ".join(a.description.split())) if a.description else ""
            lines.append(f"- **{name}** (*{_attr_type_name(a.type)}*, {_md(extra)}){': ' + desc if desc else ''}")
        lines.append("")
    if schema.type_constraints:
        lines.append("#### Type constraints")
        lines.append("")
        for c in schema.type_constraints:
            types = _md(", ".join(c.allowed_type_strs))
            desc = _md(" ".join(c.description.split())) if c.description else ""
            lines.append(f"- **{c.type_param_str}**: {types}{'. ' + desc if desc else ''}")
        lines.append("")
    return "\n".join(lines)


class OpDocsPanel(QWidget):
    """Shows the schema of the current node's op; follows the selection."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.browser = QTextBrowser(self)
        self.browser.setOpenExternalLinks(True)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.browser)
        self._tab = None
        self._key: tuple | None = None

    def set_tab(self, tab) -> None:
        if self._tab is not None:
            self._tab.selection.changed.disconnect(self._on_selection)
        self._tab = tab
        if tab is not None:
            tab.selection.changed.connect(self._on_selection)
        self._key = None
        self._on_selection("")

    def _on_selection(self, _source: str) -> None:
        tab = self._tab
        target = tab.selection.current if tab is not None else None
        if tab is None or target is None or target.kind != "node" or not tab.doc.has_node(target.node):
            self.show_op(None, "", None)
            return
        node = tab.doc.node(target.node)
        self.show_op(node.op_type, node.domain, tab.doc.opset(node.domain))

    def show_op(self, op_type: str | None, domain: str, opset: int | None) -> None:
        key = (op_type, domain, opset)
        if key == self._key:
            return
        self._key = key
        if op_type is None:
            self.browser.setMarkdown("*Select a node to see its operator's documentation.*")
            return
        from editor.schema import get_schema

        schema = get_schema(op_type, domain, opset)
        if schema is None:
            where = domain or "ai.onnx"
            self.browser.setMarkdown(f"## {op_type}\n\nNo schema for *{where}.{op_type}*"
                                     f"{f' at opset {opset}' if opset else ''} in onnx {onnx.__version__} "
                                     "or the installed onnxruntime (a custom operator).")
            return
        self.browser.setMarkdown(schema_markdown(schema, opset))

    def text(self) -> str:
        return self.browser.toPlainText()
