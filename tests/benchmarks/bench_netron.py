"""Netron beside us: the same models drawn by Netron 9.3.3 in headless Chromium and by our
flat (expanded) layout, measured with one metric code (not part of the default test run).

    python -m venv /tmp/netron-venv && /tmp/netron-venv/bin/pip install netron==9.3.3
    PYTHONPATH=. python tests/benchmarks/bench_netron.py --netron-python /tmp/netron-venv/bin/python \\
        [--png DIR] MODEL.onnx ...

Netron is a benchmark peer only (its PyPI package serves its web app; never a dependency of
ours): it is started by the other interpreter on a local port, Chromium (``chromium`` and
``chromedriver`` on the PATH, selenium from the dev lock) opens the page, accepts the cookie
notice and waits until the graph is drawn. Every edge of Netron's SVG (``path.edge-path``,
the dashed ones into If branches included) is read as a polyline (its cubic pieces sampled
at 8 points each, as dot's splines are) and every box (``g.node``) as its screen rectangle;
then both drawings are measured as
``bench_layout_quality.py`` measures ours and dot's (:mod:`editor.layout.quality`: proper
crossings between edge polylines; edge length in the drawing's own mean box height; the
widest layer: boxes whose centres share a row). ``--png DIR`` writes Netron's drawing (a
screenshot of a window as big as the drawing, up to 8,000 px a side) and ours
(``render --expanded``: the same boxes, set in columns when tall) for looking at them.

Ours is the flat view ``bench_layout_quality.py`` calls expanded: every node a box, weights
as rows, no columns (Netron draws no columns either); Netron also draws every node, with
initializers as rows of their consumer.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

import onnx

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_layout_quality import box_heights, widest_layer  # noqa: E402
from editor.layout import layout_graph  # noqa: E402
from editor.layout.quality import count_crossings  # noqa: E402
from editor.viewmodel import build_display_graph  # noqa: E402

SERVE = "import netron, sys, time; netron.start(sys.argv[1], address=('localhost', int(sys.argv[2])), browse=False); time.sleep(3600)"

#: in the page: every box's screen rectangle, every edge's path data, and the transform from
#: the edges' coordinates to the screen (one per edge group; reading points in the page with
#: getPointAtLength took minutes for the 3.2k-node TTS model's 5k edges)
READ_DRAWING = """
const svg = document.getElementById('canvas');
const boxes = Array.from(svg.querySelectorAll('g.node')).map(g => {
  const r = g.getBoundingClientRect(); return [r.left, r.top, r.width, r.height]; });
const edges = Array.from(svg.querySelectorAll('path.edge-path')).map(p => {
  const m = p.getScreenCTM(); return [p.getAttribute('d') || '', [m.a, m.b, m.c, m.d, m.e, m.f]]; });
return JSON.stringify({boxes, edges});
"""
_TOKEN = re.compile(r"[A-Za-z]|-?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")


def path_points(d: str, ctm: list[float], steps: int = 8) -> list[tuple[float, float]]:
    """A polyline through an SVG path of absolute M / L / C commands (what Netron's d3 writes),
    each cubic sampled at ``steps`` points like dot's splines (``bench_layout_quality._bezier``),
    in screen pixels."""
    a, b, c, dd, e, f = ctm
    out: list[tuple[float, float]] = []
    cmd, nums = "", []
    for tok in _TOKEN.findall(d):
        if tok.isalpha():
            if tok not in "MLCZ":
                raise ValueError(f"path command {tok!r} not read here: {d[:80]}")
            cmd = tok
            continue
        nums.append(float(tok))
        if cmd in "ML" and len(nums) == 2:
            out.append((nums[0], nums[1]))
            nums = []
            cmd = "L"   # numbers after M without a command are line-tos
        elif cmd == "C" and len(nums) == 6:
            x0, y0 = out[-1]
            for k in range(1, steps + 1):
                t = k / steps
                u = 1 - t
                out.append((u ** 3 * x0 + 3 * u * u * t * nums[0] + 3 * u * t * t * nums[2] + t ** 3 * nums[4],
                            u ** 3 * y0 + 3 * u * u * t * nums[1] + 3 * u * t * t * nums[3] + t ** 3 * nums[5]))
            nums = []
    return [(a * x + c * y + e, b * x + dd * y + f) for x, y in out]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("localhost", 0))
        return s.getsockname()[1]


def netron_drawing(model: Path, netron_python: str, png: Path | None, timeout: float) -> dict:
    """Netron's drawing of ``model``: boxes (x, y, w, h) and edge polylines, in screen pixels."""
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    port = _free_port()
    server = subprocess.Popen([netron_python, "-c", SERVE, str(model), str(port)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    opts = Options()
    opts.binary_location = "/usr/bin/chromium"
    for a in ("--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1600,1000", "--disable-dev-shm-usage"):
        opts.add_argument(a)
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=opts)
    driver.set_script_timeout(timeout)   # reading 5k sampled edges takes minutes on a loaded machine
    try:
        t0 = time.perf_counter()
        while True:
            try:
                driver.get(f"http://localhost:{port}/")
                break
            except Exception:   # the server is still starting
                if time.perf_counter() - t0 > 30:
                    raise
                time.sleep(0.5)
        while True:
            # drawn: boxes there, and every edge's path set (edges are routed after the boxes)
            n = driver.execute_script(
                "const s = document.getElementById('canvas'); if (!s) return 0;"
                "const e = Array.from(s.querySelectorAll('path.edge-path'));"
                "return e.length && e.every(p => (p.getAttribute('d') || '').length > 0) ? "
                "s.querySelectorAll('g.node').length : 0")
            if n:
                break
            # the cookie notice first; a very big graph asks before it is drawn
            driver.execute_script("Array.from(document.querySelectorAll('button')).filter(b => b.offsetParent && "
                                  "['Accept', 'Show'].includes(b.innerText.trim())).forEach(b => b.click())")
            if time.perf_counter() - t0 > timeout:
                raise TimeoutError(f"Netron drew nothing in {timeout:.0f} s")
            time.sleep(0.5)
        seconds = time.perf_counter() - t0
        d = json.loads(driver.execute_script(READ_DRAWING))
        d["seconds"] = seconds
        if png is not None:
            try:
                _screenshot(driver, d, png)
            except Exception as e:   # noqa: BLE001 - the figures stand without the picture
                print(f"{model.name}: no screenshot ({type(e).__name__}: {str(e).splitlines()[0][:100]})",
                      file=sys.stderr)
        return d
    finally:
        driver.quit()
        server.terminate()
        server.wait(10)


def _screenshot(driver, d: dict, png: Path, longest: int = 8000) -> None:
    """The drawing as Netron shows it, in a window as big as the drawing (up to ``longest``
    pixels a side: Netron paints only what its scroll view shows; a bigger drawing is cut,
    and a 12,000 px window timed out in Chromium on the 3.2k-node TTS model)."""
    xs = [b[0] for b in d["boxes"]] + [b[0] + b[2] for b in d["boxes"]]
    ys = [b[1] for b in d["boxes"]] + [b[1] + b[3] for b in d["boxes"]]
    w, h = max(xs) - min(xs) + 200, max(ys) - min(ys) + 200
    driver.set_window_size(int(min(max(w, 800), longest)), int(min(max(h, 600), longest)))
    time.sleep(1.0)
    driver.save_screenshot(str(png))


def netron_figures(d: dict) -> dict:
    routes = [r for r in (path_points(path, ctm) for path, ctm in d["edges"]) if len(r) >= 2]
    hs = [b[3] for b in d["boxes"]]
    mean_h = sum(hs) / max(len(hs), 1)
    length = sum(math.dist(a, b) for r in routes for a, b in zip(r, r[1:]))
    # layers: boxes whose vertical centres fall in one row of half a box height
    rows: dict[int, int] = {}
    for x, y, w, h in d["boxes"]:
        k = round((y + h / 2) / max(mean_h / 2, 1.0))
        rows[k] = rows.get(k, 0) + 1
    xs = [b[0] for b in d["boxes"]] + [b[0] + b[2] for b in d["boxes"]]
    ys = [b[1] for b in d["boxes"]] + [b[1] + b[3] for b in d["boxes"]]
    return {"boxes": len(d["boxes"]), "edges": len(routes), "cross": count_crossings(routes),
            "len_boxh": length / max(mean_h, 1.0) / max(len(routes), 1), "widest": max(rows.values(), default=0),
            "aspect": (max(xs) - min(xs)) / max(max(ys) - min(ys), 1.0), "seconds": d["seconds"]}


def our_figures(model: Path, png: Path | None) -> dict:
    from editor.shapes import infer_model
    from editor.shapes.declare import label_value_info

    m = onnx.load(str(model), load_external_data=False)
    vi = label_value_info(m.graph, infer_model(m))
    dg = build_display_graph(m.graph, list(range(len(m.graph.node))),
                             opsets={o.domain: o.version for o in m.opset_import}, value_info=vi)
    res = layout_graph(dg)
    routes = list(res.routes.values())
    if png is not None:
        subprocess.run([sys.executable, "-c", "import sys; from widgets.cli import main; sys.exit(main())", "render", str(model),
                        "-o", str(png), "--expanded"],
                       cwd=ROOT, check=False, capture_output=True)
    return {"boxes": len(dg.boxes), "edges": len(routes), "cross": count_crossings(routes),
            "len_boxh": box_heights(dg, routes), "widest": widest_layer(res),
            "aspect": res.width / max(res.height, 1.0)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("models", nargs="+", type=Path)
    ap.add_argument("--netron-python", required=True, help="an interpreter with `pip install netron==9.3.3`")
    ap.add_argument("--png", type=Path, default=None, help="write NAME-netron.png and NAME-ours.png here")
    ap.add_argument("--timeout", type=float, default=600.0)
    a = ap.parse_args()
    if a.png:
        a.png.mkdir(parents=True, exist_ok=True)
    print("| model | nodes | boxes, edges ours / Netron | crossings ours / Netron | edge length (box heights) ours / "
          "Netron | widest layer ours / Netron | aspect w:h ours / Netron | Netron's page drawn in |")
    print("|---|---|---|---|---|---|---|---|")
    for model in a.models:
        nodes = len(onnx.load(str(model), load_external_data=False).graph.node)
        ours = our_figures(model, a.png / f"{model.stem}-ours.png" if a.png else None)
        try:
            n = netron_figures(netron_drawing(model, a.netron_python, a.png / f"{model.stem}-netron.png" if a.png else None,
                                              a.timeout))
        except Exception as e:   # noqa: BLE001 - one model's failure is a row, not the end of the table
            print(f"| {model.name} | {nodes} | {ours['boxes']}, {ours['edges']} / ? | {ours['cross']} / ? | "
                  f"{ours['len_boxh']:.1f} / ? | {ours['widest']} / ? | {ours['aspect']:.2f} / ? | {type(e).__name__}: {str(e).splitlines()[0][:120]} |")
            continue
        print(f"| {model.name} | {nodes} | {ours['boxes']}, {ours['edges']} / {n['boxes']}, {n['edges']} "
              f"| {ours['cross']} / {n['cross']} | {ours['len_boxh']:.1f} / {n['len_boxh']:.1f} "
              f"| {ours['widest']} / {n['widest']} | {ours['aspect']:.2f} / {n['aspect']:.2f} | {n['seconds']:.1f} s |",
              flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
