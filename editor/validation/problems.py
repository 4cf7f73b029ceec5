"""Problem records: what is wrong with a model, as data.

A :class:`Problem` names its severity, a short stable ``code``, a one-line message that
quotes the names involved, and where it is (node id, value name, scope id and the
human-readable graph path). Views badge boxes and fill the problems panel from them; the
CLI prints them. Nothing here raises.
"""

from __future__ import annotations

from dataclasses import dataclass

ERROR = "error"
WARNING = "warning"
INFO = "info"
SEVERITIES = (ERROR, WARNING, INFO)

#: every code the validators emit, with what it means (docs, the problems panel's tooltips)
CODES: dict[str, str] = {
    "unknown-op": "no operator of that name in a standard domain at the model's opset",
    "deprecated-op": "the operator is deprecated at the model's opset",
    "unknown-domain": "the node's domain is not imported by the model (or its function)",
    "custom-op": "an op neither onnx nor onnxruntime has a schema for: it is not checked",
    "input-count": "the node has more or fewer inputs than the schema allows",
    "output-count": "the node has more or fewer outputs than the schema allows",
    "missing-input": "a required (single) input is left empty",
    "missing-output": "a required (single) output is left empty",
    "attr-unknown": "the schema has no attribute of that name",
    "attr-type": "the attribute's type is not the one the schema declares",
    "attr-missing": "a required attribute is not set",
    "attr-duplicate": "the same attribute name appears twice on one node",
    "attr-value": "the attribute has no value of its declared type",
    "attr-range": "an axis (or perm) attribute is out of range for the rank of the input it indexes",
    "declared-dim": "a declared dim disagrees with what the model computes (a symbolic dim the model "
    "fixes, a different fixed size or rank that onnxruntime accepts) or is not a valid size (negative)",
    "ssa": "a value name is defined more than once (two producers, producer vs graph input "
    "or initializer, or a name that shadows one of an enclosing graph)",
    "undefined-value": "an input names a value nothing defines in this graph or an enclosing one",
    "graph-order": "an input is produced only later in the graph (nodes must be topologically sorted)",
    "undefined-output": "a graph output is not a graph input, an initializer or a node output of that graph",
    "missing-type": "a main-graph input or output has no element type or shape",
    "graph-name": "a graph has no name",
    "initializer-input": "IR version <= 3: every initializer must also be a graph input",
    "type-mismatch": "an input type the op does not accept, or an inferred output type that "
    "contradicts the declared one",
    "shape-inference": "the op's shape inference fails on the declared input types",
    "ir-version": "the model's IR version is missing or newer than onnx supports",
    "opset-import": "the model imports no opset",
    "metadata": "duplicate keys in the model's metadata_props",
    "checker": "onnx.checker rejected the model (a problem the live checks do not model)",
    "internal": "the live checks themselves failed on this node or graph (a bug: please report it)",
}


@dataclass(frozen=True)
class Problem:
    """One problem. ``source`` is "live" (incremental checks) or "full" (onnx.checker +
    strict shape inference, run in the background)."""

    severity: str
    code: str
    message: str
    node_id: int | None = None
    value: str | None = None
    scope_id: int | None = None
    graph: str = ""
    source: str = "live"

    @property
    def is_error(self) -> bool:
        return self.severity == ERROR

    @property
    def subject(self) -> tuple:
        """What the problem is about, for comparisons that ignore wording."""
        return (self.code, self.node_id, self.value)


def count_errors(problems: list[Problem]) -> int:
    return sum(1 for p in problems if p.severity == ERROR)


def sort_key(p: Problem) -> tuple:
    """Errors first, then by graph, node and code: a stable order for panels and the CLI."""
    return (
        SEVERITIES.index(p.severity) if p.severity in SEVERITIES else 9,
        p.graph,
        -1 if p.node_id is None else p.node_id,
        p.code,
        p.value or "",
        p.message,
    )


#: the problems that say the same thing of every node of one op type (an op no installed
#: runtime knows): reports show them once per op type
FOLDED_CODES = frozenset({"custom-op"})


def fold_notes(problems: list[Problem]) -> list[tuple[Problem, list[Problem]]]:
    """``(shown, members)`` per line of a report: a problem of :data:`FOLDED_CODES` stands
    for every problem of its graph with the same text after the node's label (``members``,
    in order, itself first); any other problem stands for itself alone. The shown problem
    of a group of n says so: ``... (n nodes)``."""
    groups: dict[tuple, list[Problem]] = {}
    order: list[tuple] = []
    for k, p in enumerate(problems):
        key: tuple = (k,)
        if p.code in FOLDED_CODES and ": " in p.message:
            key = (p.code, p.graph, p.message.split(": ", 1)[1])
        if key not in groups:
            groups[key] = []
            order.append(key)
        groups[key].append(p)
    out = []
    for key in order:
        members = groups[key]
        first = members[0]
        if len(members) > 1:
            first = Problem(first.severity, first.code, f"{key[2]} ({len(members)} nodes)", first.node_id,
                            first.value, first.scope_id, first.graph, first.source)
        out.append((first, members))
    return out
