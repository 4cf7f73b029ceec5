"""``RunDock``: the Run dock and the Run menu of the main window, wired to its tabs.

One :class:`RunController` per document tab (created when the tab first becomes current,
deleted with the tab), one :class:`RunService` (worker process) for the window. The dock
follows the current tab; a canvas selection shows the selected value (or the outputs of the
selected node) from that tab's last run, and the profile of the last profiled run is drawn
as a heat map over that tab's canvas.
"""

from __future__ import annotations

import shiboken6

from PySide6.QtCore import QEvent, QObject, Qt, Signal
from PySide6.QtWidgets import QDockWidget, QMainWindow

from editor.errors import StudioError
from widgets.actions.registry import ActionSpec
from widgets.actions.view import register_dock
from widgets.run.controller import RunController, RunService
from widgets.overlays.heatmap import HeatMap
from widgets.common.status_line import Part
from widgets.docking import ensure_room
from widgets.overlays.layer import clear_when_closed, untick
from widgets.run.panel import RunPanel


class _CloseWatcher(QObject):
    """Stops the run worker when the main window closes."""

    def __init__(self, dock: RunDock) -> None:
        super().__init__(dock)
        self.dock = dock

    def eventFilter(self, obj, event) -> bool:  # noqa: N802
        if event.type() == QEvent.Type.Close and event.isAccepted():
            self.dock.service.shutdown()
        return False


class RunDock(QDockWidget):
    """See module docstring; made by :func:`widgets.run.install_run_dock`.

    ``profiled(tab, {node id: microseconds})`` after each profiled run (the Cost panel puts
    measured time beside predicted MACs)."""

    profiled = Signal(object, object)

    def __init__(self, window: QMainWindow) -> None:
        super().__init__("Run", window)
        self.setObjectName("run")  # saveState/restoreState key
        self.window_ = window
        self.service = RunService(self)
        self.panel = RunPanel(self)
        self.setWidget(self.panel)
        self.controllers: dict[int, RunController] = {}
        self.heatmaps: dict[int, HeatMap] = {}
        self._tab = None
        self._debug: str | None = None  # test hook forwarded to the runtime worker
        self.service.busyChanged.connect(self._on_busy)
        self.service.providersKnown.connect(lambda p: self._on_providers(p, remote=False))
        self.service.remoteProvidersKnown.connect(lambda p: self._on_providers(p, remote=True))
        self.panel.options.backend.currentIndexChanged.connect(lambda *_a: self._ask_providers())
        self.panel.runRequested.connect(lambda profile: self.run(profile=profile))
        self.panel.cancelRequested.connect(self.cancel)
        self.panel.captureRequested.connect(self.capture_selection)
        self.panel.heatMapToggled.connect(self._on_heatmap_toggled)
        self.panel.profileNodeActivated.connect(self._reveal_node)
        self.panel.left_tabs.currentChanged.connect(self._on_left_tab)
        window.tabs.currentChanged.connect(self._on_current_tab)
        clear_when_closed(self, lambda: self.heatmaps.values())  # the times go with their dock
        self._watcher = _CloseWatcher(self)
        window.installEventFilter(self._watcher)
        self._build_actions()
        self._on_current_tab()

    # -- actions and menu ------------------------------------------------------------------------
    def _build_actions(self) -> None:
        w = self.window_
        can_run = lambda: self._tab is not None and not self.service.busy  # noqa: E731
        w.registry.add_all([
            ActionSpec("run.run", "&Run", lambda: self.run(profile=False), "F5", "Run", "1_run",
                       enabled_when=can_run, tip="Run the model on the inputs of the Run panel", keywords="execute"),
            ActionSpec("run.profile", "&Profile", lambda: self.run(profile=True), "Ctrl+F5", "Run", "1_run",
                       enabled_when=can_run, tip="Run and time every node"),
            ActionSpec("run.cancel", "&Cancel Run", self.cancel, "Shift+F5", "Run", "1_run",
                       enabled_when=lambda: self.service.busy),
            ActionSpec("run.capture", "Run Capturing &Selected Values", self.capture_selection, menu="Run",
                       section="2_capture", enabled_when=can_run, contexts=("edge", "value"),
                       context_section="3_run", keywords="capture show value tensor"),
            ActionSpec("run.backends", "&Backends…", self.show_backends, menu="Run", section="2_capture",
                       tip="Where runs happen: local backends and a Ray cluster (address, test connection)",
                       keywords="ray cluster remote gpu settings"),
        ])
        register_dock(w, self, "3")
        self.act_run, self.act_profile = w.registry.action("run.run"), w.registry.action("run.profile")
        self.act_cancel, self.act_capture = w.registry.action("run.cancel"), w.registry.action("run.capture")
        self._update_actions()

    def show_backends(self) -> None:
        """The Backends settings (cluster address, test connection); OK applies them."""
        from widgets.run.backends_page import BackendsDialog

        if BackendsDialog(self.window_).exec():
            self.service.reset_remote()

    def _update_actions(self) -> None:
        self.window_.registry.refresh("run.")

    # -- tabs ------------------------------------------------------------------------------------
    def controller_for(self, tab) -> RunController:
        key = id(tab)
        controller = self.controllers.get(key)
        if controller is None:
            controller = RunController(tab, self.service)
            controller.finished.connect(lambda result, c=controller: self._on_finished(c, result))
            controller.inputsChanged.connect(lambda c=controller: self._on_inputs_changed(c))
            self.controllers[key] = controller
            tab.selection.changed.connect(lambda _src, t=tab: self._on_selection(t))
            tab.destroyed.connect(lambda *_a, k=key, c=controller: self._forget(k, c))
        return controller

    def heatmap_for(self, tab) -> HeatMap:
        key = id(tab)
        heat = self.heatmaps.get(key)
        if heat is None:
            heat = self.heatmaps[key] = HeatMap(tab)
            # another overlay took the canvas, or Clear Overlay: the checkbox says so
            heat.on_cleared = lambda t=tab: self._heat_cleared(t)
        return heat

    def _heat_cleared(self, tab) -> None:
        if tab is self._tab and self.panel.heatmap_check.isChecked():
            untick(self.panel.heatmap_check)

    def _forget(self, key: int, controller: RunController) -> None:
        if controller.running:  # the tab closed during its run: end the run and its worker
            self.service.cancel()
        self.controllers.pop(key, None)
        self.service.release(controller)
        self.heatmaps.pop(key, None)
        # at shutdown the tabs may outlive the dock's C++ side
        if shiboken6.isValid(self) and shiboken6.isValid(self.panel) and shiboken6.isValid(controller.input_panel):
            self.panel.forget(controller)

    @property
    def controller(self) -> RunController | None:
        return self.controllers.get(id(self._tab)) if self._tab is not None else None

    def _on_current_tab(self, *_args) -> None:
        tab = self.window_.current_tab()
        self._tab = tab
        self.panel.set_controller(self.controller_for(tab) if tab is not None else None)
        self.panel.clear_message()
        self._update_actions()

    def _on_left_tab(self, index: int) -> None:
        if self.panel.left_tabs.widget(index) is self.panel.options_page:
            self._ask_providers()

    def _backend_is_remote(self) -> bool:
        from widgets.run.remote import is_remote

        return is_remote(str(self.panel.options.backend.currentData()))

    def _ask_providers(self) -> None:
        """Fill the provider list from where runs will go: this machine's worker, or the
        cluster's run host when a remote backend is picked."""
        if self.panel.left_tabs.currentWidget() is not self.panel.options_page:
            return
        remote = self._backend_is_remote()
        providers = self.service.remote_providers() if remote else self.service.providers()
        if providers is not None:
            self.panel.options.set_available_providers(providers)

    def _on_providers(self, providers: list, *, remote: bool) -> None:
        if remote == self._backend_is_remote():  # an answer for the backend still picked
            self.panel.options.set_available_providers(providers)

    # -- running ---------------------------------------------------------------------------------
    def run(self, *, profile: bool = False) -> bool:
        """Run the current tab's model (in the background); False if it could not start."""
        controller = self.controller
        if controller is None or self.service.busy:
            return False
        self.panel.clear_message()
        self.show()
        self.raise_()
        ensure_room(self.window_, self, later=True)
        try:
            controller.run(self.panel.options.settings(), profile=profile, debug=self._debug)
        except StudioError as exc:
            self.panel.show_message(f"Cannot run: {exc.message if hasattr(exc, 'message') else exc}")
            return False
        what = "Profiling" if profile else "Running"
        self.panel.set_status([Part(what), Part(f"{self._tab.title().rstrip('*')}…", "strong")])
        return True

    def cancel(self) -> bool:
        controller = self.service.owner
        return controller is not None and controller.cancel()

    def capture_selection(self) -> bool:
        """Run again capturing the values selected on the canvas."""
        self.panel.options.set_capture("selected")
        return self.run(profile=False)

    def _on_busy(self, busy: bool) -> None:
        self.panel.set_busy(busy)
        self._update_actions()

    def _on_finished(self, controller: RunController, result) -> None:
        bar = self.window_.statusBar()
        if controller is not self.controller:
            bar.showMessage(f"Run finished: {result.status}", 5000)
            return
        self.panel.show_result()
        if self.isVisible():  # results (and a banner) may need more room than the form did
            ensure_room(self.window_, self, later=True)
        if result.ok:
            self.panel.clear_message()
            if result.missing:
                missing = "; ".join(f"{k}: {v}" for k, v in list(result.missing.items())[:4])
                self.panel.show_message(f"Not produced: {missing}", error=False)
            if controller.last_profiled:
                self.panel.results_tabs.setCurrentIndex(1)
                heat = self.heatmap_for(self._tab)
                times = controller.profile_by_node_id()
                heat.set_node_times(times)
                heat.set_visible(self.panel.heatmap_check.isChecked())
                self.profiled.emit(self._tab, times)
            else:
                heat = self.heatmaps.get(id(self._tab))
                if heat is not None:  # the times belonged to the previous result
                    heat.set_node_times({})
                    heat.set_visible(False)
                self._on_selection(self._tab)
            bar.showMessage(f"Run finished in {result.wall_seconds or 0:.2f} s", 5000)
        else:
            self.panel.show_failure(result)
            bar.showMessage(f"Run {result.status}", 5000)

    def _on_inputs_changed(self, controller: RunController) -> None:
        if controller is self.controller:
            self.panel.set_status(self.panel.summary_parts())

    def _on_heatmap_toggled(self, on: bool) -> None:
        if self._tab is not None and id(self._tab) in self.heatmaps:
            self.heatmaps[id(self._tab)].set_visible(on)

    # -- canvas selection -> value -----------------------------------------------------------------
    def _on_selection(self, tab) -> None:
        if tab is not self._tab or tab is None:
            return
        controller = self.controller
        names = controller.selected_value_names()
        if not names or controller.last_result is None or not controller.last_result.ok:
            self.panel.capture_button.hide()
            return
        shown = next((n for n in names if self.panel.select_value(n)), None)
        if shown is None:
            self.panel.results_tabs.setCurrentIndex(0)
            self.panel.show_message(f"{names[0]!r} was not captured in the last run. Use Capture & Run to see it.",
                                    error=False)
            self.panel.capture_button.show()
        else:
            self.panel.results_tabs.setCurrentIndex(0)
            self.panel.clear_message()
            self.panel.capture_button.hide()

    def _reveal_node(self, name: str) -> None:
        tab = self._tab
        if tab is None:
            return
        from widgets.common.selection import Target

        ids = tab.doc.find_nodes(name)
        if ids:
            sid = tab.doc.index.node_scope[ids[0]]
            tab.selection.select([Target.of_node(sid, ids[0])], "run")
