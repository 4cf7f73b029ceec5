"""What editing attaches to each document tab: the connect gesture, problem badges, the
context menu on the canvas, crash-recovery writes, work to do after the next layout."""

from __future__ import annotations

import time

from PySide6.QtCore import QEvent, QObject

from widgets.editing.badges import ProblemBadges
from widgets.editing.gesture import ConnectFilter
from widgets.editing.recovery import RecoveryWriter


class TabHooks(QObject):
    """What editing attaches to one document tab."""

    def __init__(self, controller, tab) -> None:
        super().__init__(tab)
        self.controller, self.tab = controller, tab
        self.connect = ConnectFilter(tab)
        self.badges = ProblemBadges()
        tab.canvas.scene.addItem(self.badges)
        self.recovery = RecoveryWriter(tab.doc, controller.recovery_store, self) if controller.recovery_store else None
        tab.canvas.view.viewport().installEventFilter(self)
        tab.canvas.controller.laidOut.connect(self.refresh_badges)
        self._after_layout: list = []
        tab.canvas.controller.laidOut.connect(self._run_after_layout)
        if tab.validator is not None:
            tab.validator.problems_changed.connect(self._on_problems)
        self.badge_refreshes = 0
        #: perf_counter() of the last badge refresh (benchmarks read it)
        self.badges_at = 0.0

    def _on_problems(self, _added, _removed) -> None:
        self.refresh_badges()

    def refresh_badges(self) -> None:
        v = self.tab.validator
        if v is None:
            return
        before = self.badges.sceneBoundingRect()
        self.badges.update_marks(self.tab.canvas.scene, self.tab.doc, v.problems, self.tab.scope_id)
        self.badge_refreshes += 1
        # NOTE: paint the badge region now. An edit's change signal also reaches views that
        # rebuild synchronously (outline, display graph: hundreds of ms on 10k nodes); the
        # badges would otherwise reach the screen only after all of them. Only the few boxes
        # under the marks repaint, so this costs ~1 ms.
        view = self.tab.canvas.view
        if view.isVisible():
            area = before.united(self.badges.sceneBoundingRect())
            if not area.isEmpty():
                rect = view.mapFromScene(area).boundingRect().adjusted(-2, -2, 2, 2)
                rect = rect.intersected(view.viewport().rect())
                if not rect.isEmpty():
                    view.viewport().repaint(rect)
        self.badges_at = time.perf_counter()

    def after_layout(self, fn) -> None:
        self._after_layout.append(fn)

    def _run_after_layout(self) -> None:
        pending, self._after_layout = self._after_layout, []
        for fn in pending:
            fn()

    def eventFilter(self, obj, event) -> bool:  # noqa: N802
        if event.type() == QEvent.Type.ContextMenu:
            self.controller.context_menu(self.tab, event.pos(), event.globalPos())
            return True
        return False

    def close(self) -> None:
        if self.recovery is not None:
            self.recovery.close()
        if self.tab.validator is not None:
            try:
                self.tab.validator.problems_changed.disconnect(self._on_problems)
            except (TypeError, ValueError, RuntimeError):
                pass
