"""One selection per open model, observed by the canvas and every panel.

A :class:`Target` names something in the document by stable ids and names (never a
protobuf object): a node, a value (tensor name in a graph scope), an initializer or
Constant tensor, a graph scope, a collapsed group of the canvas, or the model itself.
Panels and the canvas call :meth:`SelectionModel.select` with a ``source`` tag and ignore
the change notifications they caused themselves, which is what stops the ping-pong.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QObject, Signal


@dataclass(frozen=True, slots=True)
class Target:
    """Something the user can select.

    kind: ``"model"``, ``"scope"`` (a graph or function body), ``"node"``, ``"value"``
    (a tensor name in ``scope``), ``"tensor"`` (an initializer, or a Constant node's value
    when ``node`` is set), ``"group"`` (a canvas group path in ``scope``).
    """

    kind: str
    scope: int = 0
    node: int | None = None
    name: str = ""

    @staticmethod
    def model() -> Target:
        return Target("model")

    @staticmethod
    def of_node(scope: int, node: int) -> Target:
        return Target("node", scope, node)

    @staticmethod
    def of_value(scope: int, name: str) -> Target:
        return Target("value", scope, None, name)

    @staticmethod
    def of_tensor(scope: int, name: str, node: int | None = None) -> Target:
        return Target("tensor", scope, node, name)


class SelectionModel(QObject):
    """The selected targets of one document tab and the *current* one among them.

    ``changed(source)`` fires after every change; ``source`` is the tag the caller passed
    (``"canvas"``, ``"outline"``, ``"find"`` ...), so an observer skips its own echoes.
    """

    changed = Signal(str)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._targets: tuple[Target, ...] = ()
        self._current: Target | None = None

    @property
    def targets(self) -> tuple[Target, ...]:
        return self._targets

    @property
    def current(self) -> Target | None:
        return self._current

    def select(self, targets, source: str, *, current: Target | None = None) -> None:
        """Replace the selection; ``current`` defaults to the first target."""
        targets = tuple(dict.fromkeys(targets))
        if current is None:
            current = targets[0] if targets else None
        if targets == self._targets and current == self._current:
            return
        self._targets = targets
        self._current = current
        self.changed.emit(source)

    def clear(self, source: str) -> None:
        self.select((), source)
