"""The interactive web page (issue 36) on real models: file size, time to load and draw in
headless Chromium, drawing time at 3.6k nodes, every node findable (not part of the
default test run).

    python tests/benchmarks/bench_webpage.py [MODEL.onnx ...] [--json OUT.json]

Without models: the 3.6k-node int8 TTS stand-in (``fixtures/tts_standin.py``, com.microsoft
fused ops, one 3,440-node ``/encoder`` scope), the corpus's real models, and the detector
and int8 models of ``fetch_more.sh`` when they are in /tmp/onnx-corpus-extra.

Per model: the page's size (MB), the core's time to make it (views laid out ahead), and in
Chromium (Debian's, via chromedriver): ``load`` = navigation start to the first picture
drawn (the page's ``studio.readyMs``: HTML parsed, data inflated, first view drawn);
``draw`` = one full redraw of the first view, of Open All fitted, and of Open All at a
reading zoom (0.6, text drawn); ``found`` = nodes whose name finds them (of all, bodies
too), ``revealed`` = nodes that find + Enter brings on screen (own box or the box that
holds them); the first view's box and edge ids against the core's display model of the
same view (the window's, see tests/widgets/test_export_webpage.py).
Targets: a 3.6k-node model's page <= 5 MB, loaded and drawn <= 3 s, no console error,
every node of the detector findable by name.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

CORPUS = Path(os.environ.get("ONNX_STUDIO_CORPUS", ROOT.parent / "shared" / "corpus"))
EXTRA = Path("/tmp/onnx-corpus-extra")


def _driver():
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    opts = Options()
    opts.binary_location = shutil.which("chromium") or "/usr/bin/chromium"
    profile = tempfile.mkdtemp(prefix="bench-chromium-")
    for a in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
              "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic", "--disable-dev-shm-usage",
              f"--user-data-dir={profile}", "--window-size=1400,900"):
        opts.add_argument(a)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service(shutil.which("chromedriver") or "/usr/bin/chromedriver"), options=opts)


FIND_ALL = """
const S = window.studio, names = arguments[0];
let found = 0, revealed = 0, missing = [];
for (const [nid, name] of names) {
  const hits = S.match(name);
  if (hits.includes(nid)) found++; else { missing.push(name); continue; }
}
return [found, missing.slice(0, 5)];
"""

REVEAL_SOME = """
const S = window.studio, ids = arguments[0];
let ok = 0, bad = [];
for (const nid of ids) {
  if (S.reveal(nid)) ok++; else bad.push(nid);
}
S.firstView();
return [ok, bad.slice(0, 5)];
"""


def bench(path: Path, driver, out_dir: Path) -> dict:
    from editor.document import Document
    from editor.viewmodel import build_display_graph, default_expanded, document_bodies
    from editor.webpage import document_page
    from selenium.webdriver.support.ui import WebDriverWait

    doc = Document.open(path)
    nodes = [(nid, node.name) for scope, nid, node in doc.index.iter_nodes() if scope.kind != "function"]
    t = time.perf_counter()
    cpu = time.process_time()
    page = document_page(doc)
    make_wall, make_cpu = time.perf_counter() - t, time.process_time() - cpu
    html = out_dir / (path.stem + ".html")
    size = page.write(html)
    pane = page.panes[0]
    graph = doc.main.graph
    core = build_display_graph(graph, list(doc.main.node_ids), opsets=doc.opsets(), expanded=default_expanded(graph),
                               bodies=document_bodies(doc))
    first = pane["views"][0]
    same = ([pane["boxes"][i][0] for i in first["b"]] == [b.key for b in core.boxes]
            and {pane["edges"][i][0] for i in first["e"]} == {e.key for e in core.edges})

    driver.get("about:blank")
    driver.get_log("browser")
    t = time.perf_counter()
    driver.get(html.as_uri())
    WebDriverWait(driver, 120).until(lambda d: d.execute_script(
        "return !!window.studio && (window.studio.ready || window.studio.errors.length > 0)"))
    wall = time.perf_counter() - t
    errors = driver.execute_script("return window.studio.errors")
    load_ms = driver.execute_script("return window.studio.readyMs")
    draw = {"first": driver.execute_script("return window.studio.drawMs()")}
    if driver.execute_script("return window.studio.openAll()"):
        draw["all_boxes"] = len(driver.execute_script("return window.studio.view().boxes"))
        draw["all_fit"] = min(driver.execute_script("return window.studio.drawMs()") for _ in range(3))
        driver.execute_script("window.studio.reveal(arguments[0])", nodes[len(nodes) // 2][0])
        draw["all_read"] = min(driver.execute_script("return window.studio.drawMs()") for _ in range(3))
        driver.execute_script("window.studio.firstView()")
    named = [(nid, name) for nid, name in nodes if name]
    found, missing = driver.execute_script(FIND_ALL, named)
    step = max(1, len(nodes) // 200)
    sample = [nid for nid, _ in nodes[::step]]
    revealed, not_revealed = driver.execute_script(REVEAL_SOME, sample)
    severe = [e for e in driver.get_log("browser") if e.get("level") == "SEVERE"]
    return {
        "model": path.name, "nodes": len(nodes), "first_view_boxes": len(core.boxes),
        "views": page.facts["views"], "views_not_held": page.facts["missing"],
        "mb": round(size / 1e6, 2), "make_s": round(make_wall, 1), "make_cpu_s": round(make_cpu, 1),
        "load_ms": round(load_ms), "load_wall_s": round(wall, 2), "draw_ms": {k: round(v, 1) for k, v in draw.items()},
        "found": f"{found}/{len(named)}", "missing": missing, "revealed": f"{revealed}/{len(sample)}",
        "not_revealed": not_revealed, "same_ids_as_core": same, "errors": errors + [e["message"] for e in severe],
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("models", nargs="*", type=Path)
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args(argv)
    tmp = Path(tempfile.mkdtemp(prefix="bench-webpage-"))
    models = list(args.models)
    if not models:
        import onnx
        from fixtures.tts_standin import tts_standin

        models = [tmp / "tts_standin_3.6k_int8.onnx"]
        onnx.save(tts_standin(), str(models[0]))
        models += [CORPUS / "real" / n for n in ("silero_vad_16k_op15.onnx", "ppocrv4_det.onnx",
                                                   "magika_standard_v3_3.onnx")]
        models += sorted(p for p in (EXTRA / "ddddocr_det_yolox.onnx", EXTRA / "minilm_l6_v2_int8w.onnx") if p.exists())
    print(f"load average {os.getloadavg()[0]:.1f} {os.getloadavg()[1]:.1f} {os.getloadavg()[2]:.1f}, "
          f"{os.cpu_count()} CPUs", flush=True)
    driver = _driver()
    rows = []
    try:
        for m in models:
            row = bench(m, driver, tmp)
            rows.append(row)
            print(json.dumps(row), flush=True)
    finally:
        driver.quit()
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1), encoding="utf-8")
    bad = [r["model"] for r in rows if r["errors"] or not r["same_ids_as_core"] or r["missing"]]
    if bad:
        print(f"failed: {bad}", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
