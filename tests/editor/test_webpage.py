"""The interactive web page (editor.webpage): what it holds, checked in Python, and how it
behaves, checked in a real headless Chromium driven through its chromedriver (Debian's
chromium + chromium-driver; .ci/run installs them).

One page of a real model with name-scope groups and nested If bodies (Silero VAD) is made
once per module, and one browser serves every browser test."""

from __future__ import annotations

import base64
import gzip
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from editor.document import Document
from editor.layout import layout_graph
from editor.viewmodel import build_display_graph, default_expanded, document_bodies
from editor.webpage import document_page
from tests.conftest import CORPUS, ROOT

VAD = CORPUS / "real" / "silero_vad_16k_op15.onnx"   # groups, 12 If nodes (nested), an LSTM in a body
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"


@pytest.fixture(scope="module")
def vad() -> Document:
    return Document.open(VAD)


@pytest.fixture(scope="module")
def page(vad: Document):
    return document_page(vad)


@pytest.fixture(scope="module")
def page_file(page, tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("webpage") / "vad.html"
    page.write(path)
    return path


def _embedded(html: str) -> dict:
    """The data object a page carries (gzip + base64 inside its data script)."""
    m = re.search(r'<script id="data" type="application/octet-stream">([A-Za-z0-9+/=\s]+)</script>', html)
    assert m, "the page carries its data in <script id=data>"
    return json.loads(gzip.decompress(base64.b64decode(m.group(1))))


# ---------------------------------------------------------------------------- the data

def test_first_view_is_the_windows_first_view(vad: Document, page) -> None:
    """Same boxes, edges and positions as the canvas's first view (same display model, same layout)."""
    graph = vad.main.graph
    display = build_display_graph(graph, list(vad.main.node_ids), opsets=vad.opsets(),
                                  expanded=default_expanded(graph),
                                  bodies=document_bodies(vad))
    layout = layout_graph(display)
    first = page.panes[0]["views"][0]
    boxes = [page.panes[0]["boxes"][i][0] for i in first["b"]]
    edges = [page.panes[0]["edges"][i][0] for i in first["e"]]
    assert boxes == [b.key for b in display.boxes], "the page's first view draws the window's boxes, in order"
    assert sorted(edges) == sorted(e.key for e in display.edges), "the page's first view draws the window's edges"
    for k, key in enumerate(boxes):
        x, y = layout.positions[key]
        assert (first["p"][2 * k], first["p"][2 * k + 1]) == (round(x, 1), round(y, 1)), \
            f"{key}: the page puts it at {first['p'][2 * k:2 * k + 2]}, the window at {(x, y)}"


def test_views_cover_every_group_and_body(page) -> None:
    """Every openable path has a view one click away from the first view (this model is small)."""
    d = page.panes[0]
    held = {tuple(v["x"]) for v in d["views"]}
    assert not d["missing"], f"nothing is left out of a small model's page: {d['missing']}"
    first = set(d["views"][0]["x"])
    bodies = [p for p in d["parents"] if p.startswith("@")]
    assert len(bodies) >= 12, f"every If's bodies can be opened: {bodies}"
    for p in d["parents"]:
        if p in first:
            continue
        chain = {p}
        q = d["parents"][p]
        while q:
            chain.add(q)
            q = d["parents"][q]
        want = tuple(sorted(first | chain))
        assert want in held, f"opening {p!r} from the first view lands on a view the page holds"


def test_every_node_is_findable_and_no_weight_is_carried(vad: Document, page) -> None:
    d = page.panes[0]
    names = {node.name for scope, _nid, node in vad.index.iter_nodes() if scope.kind != "function"}
    assert {n[2] for n in d["nodes"].values()} == names, "every node of the model (bodies too) is in the page"
    assert d["weights"], "the weights a node reads are summarised"
    for name, w in d["weights"].items():
        assert set(w) <= {"dtype", "shape", "count", "min", "max", "mean", "std", "zeros", "nan", "inf", "note"}, \
            f"{name}: statistics only, never the values ({sorted(w)})"
    assert all(isinstance(v[0], str) and v[1] in ("declared", "inferred") for v in d["values"].values()), \
        "every value's shape says where it comes from"


def test_page_is_self_contained(page) -> None:
    html = page.html
    assert _embedded(html)["title"] == page.data["title"] and len(_embedded(html)["panes"]) == 1
    # no address the browser would fetch: no src/href attributes, no http(s) URL in code or style
    assert not re.search(r'\s(src|href)\s*=', html), "nothing is loaded from outside the page"
    assert not re.search(r'https?://', html), "no network address in the page"


def test_render_cli_writes_a_page_without_qt(tmp_path: Path) -> None:
    """``onnx-studio render MODEL -o view.html`` is made by the core: Qt is never loaded."""
    out = tmp_path / "magika.html"
    code = ("import sys; from widgets.export.render import main; rc = main([sys.argv[1], '-o', sys.argv[2]]); "
            "assert rc == 0, rc; assert not any(m.startswith(('PySide6', 'shiboken6')) for m in sys.modules), 'Qt loaded'")
    r = subprocess.run([sys.executable, "-c", code, str(ROOT / "resources" / "magika_standard_v3_3.onnx"), str(out)],
                       cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "boxes" in r.stderr and out.stat().st_size > 10_000, (r.stderr, out.stat().st_size)
    assert _embedded(out.read_text(encoding="utf-8"))["panes"][0]["views"], "the page has views"


def test_render_page_with_bodies_opens_every_body(vad: Document, tmp_path: Path) -> None:
    from widgets.export.render import main

    out = tmp_path / "bodies.html"
    assert main([str(VAD), "-o", str(out), "--bodies"]) == 0
    first = _embedded(out.read_text(encoding="utf-8"))["panes"][0]["views"][0]
    owners = {f"@{nid}" for nid, scopes in vad.index.children.items() if scopes}
    assert owners and owners <= set(first["x"]), f"every If's bodies are open in the first view: {first['x']}"


# ---------------------------------------------------------------------------- in Chromium

def _chromium_missing() -> str | None:
    if not (Path(CHROMIUM).exists() and Path(CHROMEDRIVER).exists()):
        return f"Debian's chromium and chromium-driver are not installed ({CHROMIUM}, {CHROMEDRIVER}); .ci/run installs them"
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium (dev dependency) is not installed"
    return None


@pytest.fixture(scope="module")
def browser():
    reason = _chromium_missing()
    if reason:
        pytest.skip(reason)
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    opts = Options()
    opts.binary_location = CHROMIUM
    profile = tempfile.mkdtemp(prefix="studio-chromium-")
    for a in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
              "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic", "--disable-dev-shm-usage",
              f"--user-data-dir={profile}", "--window-size=1400,900"):
        opts.add_argument(a)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=opts)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def _open(browser, path: Path) -> None:
    from selenium.webdriver.support.ui import WebDriverWait

    browser.get(path.as_uri())
    WebDriverWait(browser, 60).until(
        lambda d: d.execute_script("return !!window.studio && (window.studio.ready || window.studio.errors.length > 0)"))
    errors = browser.execute_script("return window.studio.errors")
    assert not errors, f"the page failed to open: {errors}"


def _severe(browser) -> list:
    return [e for e in browser.get_log("browser") if e.get("level") == "SEVERE"]


def _move(browser, x: float, y: float, click: bool = False) -> None:
    """A real mouse move (and click) at client point (x, y) of the page."""
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By

    canvas = browser.find_element(By.ID, "canvas")
    rect = browser.execute_script("const r = arguments[0].getBoundingClientRect(); return [r.left, r.top, r.width, r.height]", canvas)
    ox, oy = x - (rect[0] + rect[2] / 2), y - (rect[1] + rect[3] / 2)
    chain = ActionChains(browser).move_to_element_with_offset(canvas, int(ox), int(oy))
    if click:
        chain = chain.click()
    chain.perform()


def test_page_opens_without_console_errors(browser, page_file: Path) -> None:
    _open(browser, page_file)
    view = browser.execute_script("return window.studio.view()")
    assert len(view["boxes"]) > 10 and view["edges"], f"the first view is drawn: {view}"
    severe = _severe(browser)
    assert not severe, f"console errors while opening the page: {severe}"


def test_find_a_node_by_name(browser, page_file: Path, vad: Document) -> None:
    """Typing a name in the find box and pressing Enter opens the groups around the node,
    selects it and shows its details."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    _open(browser, page_file)
    first = set(browser.execute_script("return window.studio.view().expanded"))
    page = _embedded(page_file.read_text(encoding="utf-8"))["panes"][0]
    # a node inside a group that is closed in the first view
    nid, target = next((nid, n) for nid, n in page["nodes"].items()
                  if page["home"].get(nid) and page["home"][nid] not in first and n[2] and n[0] != "Constant"
                  and nid not in page["host"])
    box = browser.find_element(By.ID, "find")
    box.click()
    box.send_keys(target[2])
    box.send_keys(Keys.ENTER)
    view = browser.execute_script("return window.studio.view()")
    assert f"n:{nid}" in view["boxes"], f"{target[2]!r} is drawn after find (groups open: {view['expanded']})"
    panel = browser.execute_script("return window.studio.panel()")
    assert panel and target[0] in panel and target[2] in panel, f"the details of {target[2]!r} show: {panel!r}"
    assert not _severe(browser)


def test_click_opens_a_group_and_hover_shows_an_edge_shape(browser, page_file: Path) -> None:
    _open(browser, page_file)
    view = browser.execute_script("return window.studio.view()")
    group = next(k for k in view["boxes"] if k.startswith("g:"))
    x, y = browser.execute_script("return window.studio.clientOfBox(arguments[0])", group)
    _move(browser, x, y, click=True)
    after = browser.execute_script("return window.studio.view()")
    assert group[2:] in after["expanded"] and group not in after["boxes"], \
        f"a click on {group} opens it: {after['expanded']}"
    assert group[2:] in after["frames"], "the opened group is drawn as a frame"
    # hover the middle of an edge that carries a known shape
    page = _embedded(page_file.read_text(encoding="utf-8"))["panes"][0]
    edge_rec = {e[0]: e for e in page["edges"]}
    key = next(k for k in after["edges"] if edge_rec[k][3] in page["values"]
               and browser.execute_script("return window.studio.clientOfEdge(arguments[0])", k))
    assert browser.execute_script("return window.studio.showEdge(arguments[0])", key)
    ex, ey = browser.execute_script("return window.studio.clientOfEdge(arguments[0])", key)
    _move(browser, ex, ey)
    tip = browser.execute_script("return window.studio.tip()")
    value = edge_rec[key][3]
    shape, source = page["values"][value]
    assert tip and value in tip and shape in tip and source in tip, \
        f"hovering {key} shows its value, shape and where the shape comes from: {tip!r}"
    # a click on the frame's title closes it again: back to the first view
    fx, fy = browser.execute_script("return window.studio.clientOfFrame(arguments[0])", group[2:])
    _move(browser, fx, fy, click=True)
    assert browser.execute_script("return window.studio.view().expanded") == view["expanded"], "closed again"
    assert not _severe(browser)


def test_bodies_open_and_the_theme_switches(browser, page_file: Path) -> None:
    from selenium.webdriver.common.action_chains import ActionChains

    _open(browser, page_file)
    page = _embedded(page_file.read_text(encoding="utf-8"))["panes"][0]
    view = browser.execute_script("return window.studio.view()")
    owner = next(b[0] for b in page["boxes"] if b[13] and b[0] in view["boxes"])
    assert browser.execute_script("return window.studio.toggle(arguments[0])", "@" + owner[2:])
    opened = browser.execute_script("return window.studio.view()")
    assert "@" + owner[2:] in opened["frames"], f"the bodies of {owner} open in place: {opened['frames']}"
    assert browser.execute_script("return window.studio.theme()") == "light"
    ActionChains(browser).send_keys("t").perform()
    assert browser.execute_script("return window.studio.theme()") == "dark", "T switches to the dark theme"
    assert not _severe(browser)


# ---------------------------------------------------------------------------- a diff, a notebook

@pytest.fixture(scope="module")
def diff_file(tmp_path_factory) -> tuple[Path, dict]:
    """``onnx-studio diff A B --render diff.html`` on a real model and a copy with three
    planted edits (an attribute, a deleted node, a renamed value)."""
    import argparse

    from tests.diff_support import CLS, planted_file
    from widgets.diffview.render import add_parser, run

    tmp = tmp_path_factory.mktemp("webdiff")
    b, names = planted_file(CLS, tmp / "b.onnx")
    out = tmp / "diff.html"
    parser = argparse.ArgumentParser()
    add_parser(parser.add_subparsers())
    args = parser.parse_args(["diff", str(CLS), str(b), "--render", str(out)])
    assert run(args) == 1, "1: the models differ"
    return out, names


def test_diff_page_colours_both_sides_and_links_counterparts(diff_file) -> None:
    from editor.diff.display import COLOURS, LEGEND

    out, names = diff_file
    data = _embedded(out.read_text(encoding="utf-8"))
    a, b = data["panes"]
    assert a["side"].startswith("A: ") and b["side"].startswith("B: "), (a["side"], b["side"])

    def coloured(pane: dict, node_name: str) -> str | None:
        nid = next(k for k, n in pane["nodes"].items() if n[2] == node_name)
        return pane["overlays"][0]["colours"].get(f"n:{nid}"), nid

    colour, conv_a = coloured(a, names["conv"])
    assert colour == COLOURS["changed"], f"the planted attribute edit is 'changed' in A: {colour}"
    colour, _ = coloured(a, names["victim"])
    assert colour == COLOURS["removed"], f"the deleted node is 'removed' in A: {colour}"
    conv_b = a["links"][conv_a]
    assert [b["nodes"][str(m)][2] for m in conv_b] == [names["conv"]], "A's Conv links to its counterpart in B"
    assert coloured(b, names["conv"])[0] == COLOURS["changed"], "and B colours it too"
    legend = [t for _c, t in a["overlays"][0]["legend"]]
    assert [t.split(":")[0] for t in legend] == [e.label for e in LEGEND], "the diff's own legend"


def test_diff_page_switches_sides_in_the_browser(browser, diff_file) -> None:
    from selenium.webdriver.common.by import By

    out, names = diff_file
    _open(browser, out)
    assert browser.execute_script("return window.studio.pane()") == 0
    found = browser.execute_script("return window.studio.search(arguments[0])", names["conv"])
    assert browser.execute_script("return window.studio.reveal(arguments[0])", found[0])
    link = browser.find_element(By.CSS_SELECTOR, "#panel a.cp")
    link.click()
    assert browser.execute_script("return window.studio.pane()") == 1, "the counterpart link shows side B"
    panel = browser.execute_script("return window.studio.panel()")
    assert names["conv"] in panel and "changed" in panel, f"B's node and its status: {panel!r}"
    legend = browser.find_element(By.ID, "legend").text
    assert "removed" in legend and "added" in legend, f"the diff's legend shows: {legend!r}"
    browser.find_element(By.CSS_SELECTOR, "#panes button[data-k='0']").click()
    assert browser.execute_script("return window.studio.pane()") == 0
    assert not _severe(browser)


def test_show_in_a_notebook_is_the_page_in_an_iframe(browser, tmp_path: Path) -> None:
    """``from editor import show``: the page in an iframe sized to the cell (as Jupyter puts
    ``_repr_html_`` into the output area), with the cost heat map asked for."""
    from editor import show

    page = show(ROOT / "resources" / "magika_standard_v3_3.onnx", overlay="cost")
    cell = page._repr_html_()
    assert cell.startswith("<iframe srcdoc=") and "width:100%" in cell, cell[:200]
    overlay = page.panes[0]["overlays"][0]
    assert overlay["kind"] == "cost" and overlay["colours"] and overlay["legend"], "the cost heat map is carried"
    notebook = tmp_path / "notebook.html"
    notebook.write_text(f"<!doctype html><html><body><div style='width:900px'>{cell}</div></body></html>",
                        encoding="utf-8")
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    browser.get(notebook.as_uri())
    frame = browser.find_element(By.TAG_NAME, "iframe")
    width = frame.size["width"]
    assert 880 <= width <= 900, f"the page takes the cell's width: {width}"
    browser.switch_to.frame(frame)
    try:
        WebDriverWait(browser, 60).until(lambda d: d.execute_script(
            "return !!window.studio && (window.studio.ready || window.studio.errors.length > 0)"))
        assert not browser.execute_script("return window.studio.errors")
        assert browser.find_element(By.ID, "legend").is_displayed(), "the heat map's legend shows"
    finally:
        browser.switch_to.default_content()
    assert not _severe(browser)


def test_references_are_drawn_and_hovered_as_the_canvas_draws_them(browser, tmp_path: Path) -> None:
    """An edge too long to route (a reference: the canvas draws a stub at each end, named)
    is in the page with both ends at the boxes' ports, and a hover on its stub says so."""
    import importlib.util

    from editor.layout import port_position

    spec = importlib.util.spec_from_file_location("tts_standin", ROOT / "tests" / "benchmarks" / "fixtures" / "tts_standin.py")
    fixture = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(fixture)
    doc = Document(fixture.tts_standin(layers=2))
    page = document_page(doc, weights=False)
    pane = page.panes[0]
    k, view = next((k, v) for k, v in enumerate(pane["views"]) if v["q"])
    from editor.webpage.source import source_of_document

    display = source_of_document(doc).build(set(view["x"]))
    boxes = {b.key: b for b in display.boxes}
    pos = {pane["boxes"][i][0]: (view["p"][2 * j], view["p"][2 * j + 1]) for j, i in enumerate(view["b"])}
    local, sx, sy, dx, dy = view["q"][0]
    edge = pane["edges"][view["e"][local]]
    want_src = port_position(boxes[edge[1]], pos[edge[1]], "out", next(e.src_port for e in display.edges if e.key == edge[0]))
    assert (sx, sy) == tuple(round(c, 1) for c in want_src), f"the stub starts at {edge[1]}'s port"
    out = tmp_path / "refs.html"
    page.write(out)
    _open(browser, out)
    path = next(p for p in view["x"] if p not in pane["views"][0]["x"]) if k else None
    if path is not None:
        assert browser.execute_script("return window.studio.toggle(arguments[0])", path)
    assert browser.execute_script("return window.studio.view().expanded") == view["x"]
    assert browser.execute_script("return window.studio.showEdge(arguments[0])", edge[0])
    x, y = browser.execute_script("return window.studio.clientOfEdge(arguments[0])", edge[0])
    _move(browser, x, y)
    tip = browser.execute_script("return window.studio.tip()")
    assert tip and edge[3] in tip and "reference" in tip, f"hovering the reference's stub names it: {tip!r}"
    assert not _severe(browser)


def test_show_a_comparison_colours_where_the_numbers_went_wrong(tmp_path: Path) -> None:
    """``show(compare_runs(...))``: model A with the window's error heat map: the node whose
    weight was scaled is the first divergence, nodes within tolerance are not coloured."""
    import numpy as np
    import onnx
    from onnx import numpy_helper

    from editor import show
    from editor.debug import RunSpec, compare_runs
    from editor.webpage.overlays import FIRST_DIVERGENCE

    a = ROOT / "resources" / "magika_standard_v3_3.onnx"
    model = onnx.load(a)
    matmul = next(n for n in model.graph.node if n.op_type == "MatMul")
    weights = {t.name: t for t in model.graph.initializer}
    name = next(i for i in matmul.input if i in weights)
    scaled = numpy_helper.from_array(numpy_helper.to_array(weights[name]) * np.float32(1.5), name)
    weights[name].CopyFrom(scaled)
    b = tmp_path / "b.onnx"
    onnx.save(model, b)
    comparison = compare_runs(RunSpec(a), RunSpec(b))
    assert comparison.first_divergence is not None, "the scaled weight changes the numbers"
    page = show(comparison)
    pane = page.panes[0]
    overlay = pane["overlays"][0]
    nid = next(k for k, n in pane["nodes"].items() if n[2] == matmul.name)
    assert overlay["kind"] == "compare" and overlay["colours"].get(f"n:{nid}") == FIRST_DIVERGENCE, \
        f"{matmul.name} is the first divergence: {overlay['colours'].get(f'n:{nid}')}"
    assert len(overlay["colours"]) < len({b[0] for b in pane["boxes"]}), "nodes within tolerance are not coloured"
