"""What a picture of a diff shows: a colour for every node of both models, each node's
counterpart on the other side, and the changes as one walk in A's topological order.

The side-by-side view (:mod:`widgets.diffview`), ``onnx-studio diff --render`` and the HTML
export all draw from one :class:`DiffDisplay`, so a colour means the same thing everywhere.
It is plain data over the node ids of the two documents the diff was computed on.

Statuses, one per node and side (:data:`LEGEND` says what each means and its colour):
``same``; ``changed`` (attributes, weights, types, wiring or name); ``added`` (B only);
``removed`` (A only); ``rewritten`` (a region of A paired with a region of B that computes
the same thing another way: a quantization, a fusion, an opset spelling).

The stops and their details are made by :mod:`editor.diff.stops` (one edit, one stop),
in the order of :mod:`editor.diff.walk`.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from editor.diff.records import ModelDiff

if TYPE_CHECKING:
    from editor.document import Document

__all__ = [
    "ADDED", "CHANGED", "COLOURS", "COLOURS_DARK", "LEGEND", "REMOVED", "REWRITTEN", "SAME", "STATUS_RANK",
    "Detail", "DiffDisplay", "LegendEntry", "Stop", "WeightRef", "display_of", "strongest",
]

SAME, CHANGED, ADDED, REMOVED, REWRITTEN = "same", "changed", "added", "removed", "rewritten"


@dataclass(frozen=True)
class LegendEntry:
    status: str
    label: str
    meaning: str
    colour: str  # "#rrggbb", on a light background
    colour_dark: str  # on a dark background


LEGEND: tuple[LegendEntry, ...] = (
    LegendEntry(CHANGED, "changed", "attributes, weights, types, wiring or name differ", "#e69600", "#ffb74d"),
    LegendEntry(REWRITTEN, "rewritten", "computed another way: quantized, fused, respelled", "#8250df", "#b392f0"),
    LegendEntry(ADDED, "added", "only in B", "#2ea043", "#56d364"),
    LegendEntry(REMOVED, "removed", "only in A", "#da3633", "#ff6a69"),
    LegendEntry(SAME, "same", "the same in both", "#9ea3ab", "#6e7681"),
)
COLOURS: dict[str, str] = {e.status: e.colour for e in LEGEND}
COLOURS_DARK: dict[str, str] = {e.status: e.colour_dark for e in LEGEND}
#: which status a box showing several nodes (a collapsed group) takes
STATUS_RANK = {SAME: 0, CHANGED: 1, REWRITTEN: 2, ADDED: 3, REMOVED: 3}


def strongest(statuses) -> str:  # noqa: ANN001 - any iterable of statuses
    """The status a box holding nodes of ``statuses`` shows (removed/added over rewritten
    over changed over same)."""
    best = SAME
    for s in statuses:
        if STATUS_RANK.get(s, 0) > STATUS_RANK[best]:
            best = s
    return best


@dataclass(frozen=True)
class Detail:
    """One row of a change: what, before (A), after (B)."""

    what: str
    before: str
    after: str


@dataclass(frozen=True)
class WeightRef:
    """A weight as its reader sees it: node ``node`` reads value ``name`` at input ``port``."""

    node: int
    port: int
    name: str


@dataclass
class Stop:
    """One change to visit (next / previous change), in A's topological order."""

    kind: str  # a status: changed, rewritten, added, removed
    title: str
    a: tuple[int, ...]  # A node ids (first: the one to centre on)
    b: tuple[int, ...]
    details: list[Detail] = field(default_factory=list)
    #: weights to compare on demand (editor.diff.weight_stats): (A weight, B weight)
    weights: list[tuple[WeightRef | None, WeightRef | None]] = field(default_factory=list)
    io_a: tuple[str, ...] = ()  # graph inputs / outputs of the main graph drawn as pills
    io_b: tuple[str, ...] = ()
    rank: float = 0.0


@dataclass
class DiffDisplay:
    """The display data of one diff (module docstring)."""

    status_a: dict[int, str]
    status_b: dict[int, str]
    counterparts_a: dict[int, tuple[int, ...]]  # A node -> its B node(s)
    counterparts_b: dict[int, tuple[int, ...]]
    stops: list[Stop]
    io_a: dict[str, str] = field(default_factory=dict)  # main graph input/output -> status
    io_b: dict[str, str] = field(default_factory=dict)
    io_pairs: dict[str, str] = field(default_factory=dict)  # A input/output name -> B's
    summary: list[str] = field(default_factory=list)
    #: what the picture leaves out and why ("renames throughout: not marked")
    notes: list[str] = field(default_factory=list)
    _stop_a: dict[int, int] = field(default_factory=dict, repr=False)
    _stop_b: dict[int, int] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        self.reindex()

    def reindex(self) -> None:
        self._stop_a, self._stop_b = {}, {}
        for k, stop in enumerate(self.stops):
            for nid in stop.a:
                self._stop_a.setdefault(nid, k)
            for nid in stop.b:
                self._stop_b.setdefault(nid, k)

    def stop_of(self, side: str, nid: int) -> int | None:
        """Index of the stop that shows node ``nid`` of side ``"a"`` / ``"b"``."""
        return (self._stop_a if side == "a" else self._stop_b).get(nid)

    def counterparts(self, side: str, nid: int) -> tuple[int, ...]:
        return (self.counterparts_a if side == "a" else self.counterparts_b).get(nid, ())

    def status(self, side: str, nid: int) -> str:
        return (self.status_a if side == "a" else self.status_b).get(nid, SAME)

    def coverage(self) -> tuple[int, int]:
        """(A nodes with a counterpart, A nodes): a node counts when it is paired, part of
        a rewrite with a B side, or a weight node B holds another way (an initializer)."""
        covered = sum(1 for nid, st in self.status_a.items() if nid in self.counterparts_a or st == SAME)
        return covered, len(self.status_a)

    def counts(self) -> dict[str, int]:
        """Nodes per status, per side, and the number of stops."""
        out: dict[str, int] = {"stops": len(self.stops)}
        for side, status in (("a", self.status_a), ("b", self.status_b)):
            for st in (SAME, CHANGED, REWRITTEN, ADDED, REMOVED):
                out[f"{side}_{st}"] = sum(1 for s in status.values() if s == st)
        return out

    def to_dict(self) -> dict[str, Any]:
        """Plain data (JSON): node ids as text keys, the legend included."""
        return {
            "legend": [asdict(e) for e in LEGEND],
            "status_a": {str(k): v for k, v in self.status_a.items()},
            "status_b": {str(k): v for k, v in self.status_b.items()},
            "counterparts_a": {str(k): list(v) for k, v in self.counterparts_a.items()},
            "counterparts_b": {str(k): list(v) for k, v in self.counterparts_b.items()},
            "io_a": dict(self.io_a), "io_b": dict(self.io_b), "io_pairs": dict(self.io_pairs),
            "stops": [{"kind": s.kind, "title": s.title, "a": list(s.a), "b": list(s.b),
                       "io_a": list(s.io_a), "io_b": list(s.io_b),
                       "details": [asdict(d) for d in s.details]} for s in self.stops],
            "summary": list(self.summary),
            "notes": list(self.notes),
        }


# -- building -------------------------------------------------------------------------------
def display_of(diff: ModelDiff, doc_a: Document, doc_b: Document) -> DiffDisplay:
    """The display data of ``diff``, computed on ``doc_a`` and ``doc_b`` (their node ids)."""
    from editor.diff.stops import StopBuilder

    return StopBuilder(diff, doc_a, doc_b).build()
