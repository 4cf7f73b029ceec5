"""The collector is held off while a picture is computed, and put back as it was."""

from __future__ import annotations

import gc
import sys
import threading

import onnx

from editor.collector import pause, paused
from editor.layout import layout_graph
from editor.viewmodel import build_display_graph
from tests.conftest import CORPUS


def test_paused_nests_and_restores_the_collector():
    assert gc.isenabled()
    with paused():
        assert not gc.isenabled()
        with paused():
            assert not gc.isenabled()
        assert not gc.isenabled(), "an inner section ended: the outer one still runs"
    assert gc.isenabled(), "the collector stays off after the last section"
    gc.disable()
    try:
        with paused():
            pass
        assert not gc.isenabled(), "a caller that turned the collector off keeps it off"
    finally:
        gc.enable()


def test_a_pause_ends_once_and_nests_with_sections():
    """The application's start-up holds the collector off until its first picture."""
    assert gc.isenabled()
    resume = pause()
    assert not gc.isenabled()
    with paused():
        resume()
        assert not gc.isenabled(), "the start-up's pause ended inside a section: the section still runs"
        resume()  # a second call does nothing (it must not end the section's hold)
        assert not gc.isenabled(), "a second resume() ended the section's hold"
    assert gc.isenabled(), "the collector stays off after the pause and the section ended"


def test_paused_sections_on_two_threads_overlap():
    """The window lays out on a worker thread while the GUI thread builds a view model."""
    inside, leave = threading.Event(), threading.Event()

    def worker():
        with paused():
            inside.set()
            leave.wait(10)

    t = threading.Thread(target=worker)
    t.start()
    assert inside.wait(10)
    with paused():
        pass
    assert not gc.isenabled(), "the worker's section still runs"
    leave.set()
    t.join(10)
    assert gc.isenabled()


def test_no_collection_runs_while_a_graph_is_built_and_laid_out():
    """Hundreds of thousands of live objects and no garbage: on the 11.8k-node export the
    collector's walks were a fifth of the layout and a third of the view model."""
    m = onnx.load(str(CORPUS / "real" / "ppocrv4_det.onnx"), load_external_data=False)
    opsets = {o.domain: o.version for o in m.opset_import}
    seen: list[tuple[int, str]] = []

    def count(phase: str, info: dict) -> None:
        # a collection inside the work runs under a frame of its code (the one that may
        # come as the collector is switched back on runs under collector.py's)
        frame = sys._getframe(1)
        while frame is not None:
            where = frame.f_code.co_filename.replace("\\", "/")
            if phase == "start" and ("/editor/layout/" in where or "/editor/viewmodel/" in where):
                seen.append((info["generation"], f"{where}:{frame.f_lineno}"))
                return
            frame = frame.f_back

    gc.callbacks.append(count)
    try:
        dg = build_display_graph(m.graph, list(range(len(m.graph.node))), opsets=opsets)
        layout_graph(dg, wrap=True)
    finally:
        gc.callbacks.remove(count)
    assert seen == [], f"collections (generation, where) ran during the build and the layout: {seen[:5]}"
    assert gc.isenabled()
