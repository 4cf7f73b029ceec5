/* ONNX Studio's web page viewer: draws the views the core laid out (editor/webpage), with
 * pan/zoom, fit, an overview, groups and bodies that open and close, find, tooltips, node
 * details and overlays. No network: everything it reads is in this file.
 * window.studio is the page's small API (the tests drive the page through it and through
 * real mouse and keyboard events). */
(function () {
  "use strict";
  const S = (window.studio = { ready: false, errors: [] });
  window.addEventListener("error", (e) => S.errors.push(String(e.message || e)));

  const FRAME_TITLE = 24, TITLE_H = 26, LINE_H = 13, STUB = 16;
  const THEMES = {
    light: { bg: "#f7f8fa", fill: "#ffffff", border: "#b4bac3", text: "#1f2328", header: "#ffffff",
      muted: "#5b636e", edge: "#737a84", ref: "#9a6700", hover: "#0969da", sel: "#0969da",
      group: "#eef1f5", match: "#e8590c", mini: "#ffffff" },
    dark: { bg: "#1e1f22", fill: "#2b2d31", border: "#4a4e56", text: "#e6e6e6", header: "#ffffff",
      muted: "#a0a6ad", edge: "#6f7680", ref: "#d4a72c", hover: "#4493f8", sel: "#4493f8",
      group: "#26282c", match: "#ff922b", mini: "#2b2d31" },
  };
  const $ = (id) => document.getElementById(id);
  const canvas = $("canvas"), ctx = canvas.getContext("2d");
  const mini = $("minimap"), mctx = mini.getContext("2d");
  let D = null, P = null, pane = 0, paneState = [], theme = null, view = null, viewIndex = new Map(), opened = new Set(), first = null;
  let scale = 1, tx = 0, ty = 0, dpr = window.devicePixelRatio || 1;
  let hoverEdge = -1, hoverBox = -1, selected = null, matches = new Set(), overlay = null;
  let miniCache = null, pending = false;

  // ------------------------------------------------------------------ data
  async function load() {
    const b64 = $("data").textContent.trim();
    const bin = atob(b64), bytes = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
    const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
    return JSON.parse(await new Response(stream).text());
  }

  function anc(p) {
    const out = [];
    let q = P.parents[p] || "";
    while (q) { out.push(q); q = P.parents[q] || ""; }
    return out;
  }
  function effKey(set) {
    const out = [];
    for (const p of set) {
      if (!(p in P.parents)) continue;
      if (anc(p).every((q) => set.has(q))) out.push(p);
    }
    out.sort();
    return out.join("\n");
  }

  // colours: the window's category hues; dark lifts them as QColor.lighter(135) does
  const colourCache = new Map();
  function hexRgb(h) { const n = parseInt(h.slice(1), 16); return [(n >> 16) & 255, (n >> 8) & 255, n & 255]; }
  function lighter(hex, f) {
    let [r, g, b] = hexRgb(hex);
    const mx = Math.max(r, g, b), mn = Math.min(r, g, b);
    let v = mx / 255, s = mx ? (mx - mn) / mx : 0, hue = 0;
    if (mx !== mn) {
      if (mx === r) hue = ((g - b) / (mx - mn)) % 6; else if (mx === g) hue = (b - r) / (mx - mn) + 2; else hue = (r - g) / (mx - mn) + 4;
      hue *= 60; if (hue < 0) hue += 360;
    }
    v *= f;
    if (v > 1) { s = Math.max(0, s - (v - 1)); v = 1; }
    const c = v * s, x = c * (1 - Math.abs(((hue / 60) % 2) - 1)), m = v - c;
    const [a, bb, cc] = hue < 60 ? [c, x, 0] : hue < 120 ? [x, c, 0] : hue < 180 ? [0, c, x] : hue < 240 ? [0, x, c] : hue < 300 ? [x, 0, c] : [c, 0, x];
    return `rgb(${Math.round((a + m) * 255)},${Math.round((bb + m) * 255)},${Math.round((cc + m) * 255)})`;
  }
  function catColour(cat) {
    const k = (theme === THEMES.dark ? "d:" : "l:") + cat;
    let c = colourCache.get(k);
    if (!c) {
      const norm = (cat || "").toLowerCase().replace(/[ _-]/g, "");
      let hex = D.colours[norm];
      if (!hex) { let h = 0; for (const ch of norm) h = (h * 31 + ch.charCodeAt(0)) >>> 0; c = `hsl(${h % 360},43%,${theme === THEMES.dark ? 47 : 37}%)`; }
      else c = theme === THEMES.dark ? lighter(hex, 1.35) : hex;
      colourCache.set(k, c);
    }
    return c;
  }

  // ------------------------------------------------------------------ views
  function buildView(i) {
    const v = P.views[i];
    const boxes = v.b.map((bi, k) => {
      const r = P.boxes[bi];
      return { rec: r, key: r[0], kind: r[1], x: v.p[2 * k], y: v.p[2 * k + 1], w: r[5], h: r[6] };
    });
    const byKey = new Map(boxes.map((b, k) => [b.key, k]));
    const edges = v.e.map((ei, k) => {
      const r = P.edges[ei], pts = v.r[k];
      let x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity;
      if (pts) for (let j = 0; j < pts.length; j += 2) {
        x0 = Math.min(x0, pts[j]); x1 = Math.max(x1, pts[j]); y0 = Math.min(y0, pts[j + 1]); y1 = Math.max(y1, pts[j + 1]);
      }
      return { rec: r, key: r[0], pts, bb: [x0, y0, x1, y1] };
    });
    for (const [k, sx, sy, dx, dy] of v.q || []) {
      // a reference: a stub under the source's port and one over the target's (the canvas's)
      const e = edges[k];
      e.stubs = [sx, sy, sx, sy + STUB, dx, dy - STUB, dx, dy];
      e.bb = [Math.min(sx, dx) - 1, Math.min(sy, dy - STUB), Math.max(sx, dx) + 1, Math.max(sy + STUB, dy)];
    }
    const frames = Object.entries(v.f).map(([path, f]) => ({ path, x: f[0], y: f[1], w: f[2], h: f[3], label: v.fl[path] || path }));
    frames.sort((a, b) => a.path.length - b.path.length);
    return { i, v, boxes, byKey, edges, frames, w: v.w, h: v.h };
  }

  function anchorOf(vw, path) {
    const k = vw.byKey.get("g:" + path);
    if (k !== undefined) return [vw.boxes[k].x, vw.boxes[k].y];
    const f = vw.frames.find((fr) => fr.path === path);
    if (f) return [f.x, f.y];
    const m = /^@(\d+)$/.exec(path);
    if (m) { const b = vw.byKey.get("n:" + m[1]); if (b !== undefined) return [vw.boxes[b].x, vw.boxes[b].y]; }
    return null;
  }

  function setView(i, anchorPath) {
    const old = view;
    view = buildView(i);
    miniCache = null;
    hoverEdge = hoverBox = -1;
    if (old && anchorPath) {
      // the clicked group stays where it was on screen, as in the window
      const a = anchorOf(old, anchorPath), b = anchorOf(view, anchorPath);
      if (a && b) { tx += (a[0] - b[0]) * scale; ty += (a[1] - b[1]) * scale; }
    }
    redraw();
  }

  /** The path a frame's title closes: its own, or for a body's sub-frame (``@12/then_branch``)
   * its owner's bodies, as the window's title does. */
  function closerOf(path) {
    if (path in P.parents) return path;
    const m = /^(@\d+)\/[^/]+$/.exec(path);
    return m && m[1] in P.parents ? m[1] : null;
  }
  function notice(text) { $("notice").textContent = text || ""; $("notice").title = text || ""; }

  /** Open or close ``path`` (a group, ``@<node>`` bodies); returns whether the picture changed. */
  function toggle(path) {
    if (!(path in P.parents)) return false;
    if (P.missing[path]) { notice(`"${P.labels[path] || path}": ${P.missing[path]}`); return false; }
    const target = new Set(opened);
    if (target.has(path)) target.delete(path); else { target.add(path); for (const q of anc(path)) target.add(q); }
    let vi = viewIndex.get(effKey(target)), note = "";
    if (vi === undefined) {
      // not held: the view with only this change from the first one (see editor/webpage/views.py)
      const t2 = new Set(first);
      if (t2.has(path) && !target.has(path)) t2.delete(path); else { t2.add(path); for (const q of anc(path)) t2.add(q); }
      vi = viewIndex.get(effKey(t2));
      if (vi === undefined) { notice(`"${P.labels[path] || path}" cannot be opened in this page`); return false; }
      note = `Showing "${P.labels[path] || path}" from the first view: this page holds each group's view from the sender's, not every combination`;
      target.clear(); for (const p of t2) target.add(p);
    }
    opened = target;
    notice(note);
    setView(vi, path);
    return true;
  }

  /** Go to the view with exactly ``paths`` open, if the page holds it. */
  function showSet(paths, note) {
    const vi = viewIndex.get(effKey(new Set(paths)));
    if (vi === undefined) return false;
    opened = new Set(paths);
    notice(note || "");
    setView(vi, null);
    fit();
    return true;
  }
  const openAll = () => showSet(Object.keys(P.parents));
  const closeAll = () => showSet([]);
  const firstView = () => { showSet(first); firstZoom(); return true; };
  function barButtons() {
    $("openall").hidden = !Object.keys(P.parents).length || !viewIndex.has(effKey(new Set(Object.keys(P.parents))));
    $("closeall").hidden = !Object.keys(P.parents).length || !viewIndex.has("");
    $("firstview").hidden = !Object.keys(P.parents).length;
  }

  // ------------------------------------------------------------------ camera
  function resize() {
    dpr = window.devicePixelRatio || 1;
    const r = canvas.getBoundingClientRect();
    canvas.width = Math.max(1, Math.round(r.width * dpr));
    canvas.height = Math.max(1, Math.round(r.height * dpr));
    mini.width = Math.round(180 * dpr); mini.height = Math.round(140 * dpr);
    miniCache = null;
    redraw();
  }
  function fit() {
    const r = canvas.getBoundingClientRect();
    const pad = 24;
    const s = Math.min((r.width - 2 * pad) / Math.max(view.w, 1), (r.height - 2 * pad) / Math.max(view.h, 1));
    scale = Math.max(0.02, Math.min(s, 1.5));
    tx = (r.width - view.w * scale) / 2;
    ty = Math.max(pad, (r.height - view.h * scale) / 2);
    redraw();
  }
  /** The window's first view: the whole picture when it reads at READABLE_ZOOM or more,
   * else its top at that zoom (widgets/window/document_tab.py). */
  function firstZoom() {
    fit();
    const READABLE_ZOOM = 0.55;
    if (scale >= READABLE_ZOOM) return;
    const r = canvas.getBoundingClientRect();
    scale = READABLE_ZOOM;
    tx = (r.width - view.w * scale) / 2;
    if (view.w * scale > r.width) tx = 24;
    ty = 24;
    redraw();
  }
  function zoomAt(f, cx, cy) {
    const ns = Math.max(0.01, Math.min(8, scale * f));
    tx = cx - ((cx - tx) * ns) / scale; ty = cy - ((cy - ty) * ns) / scale; scale = ns;
    redraw();
  }
  function centreOn(x, y, atLeast) {
    const r = canvas.getBoundingClientRect();
    if (atLeast && scale < atLeast) scale = atLeast;
    tx = r.width / 2 - x * scale; ty = r.height / 2 - y * scale;
    redraw();
  }
  function toWorld(cx, cy) { return [(cx - tx) / scale, (cy - ty) / scale]; }

  // ------------------------------------------------------------------ drawing
  function redraw() {
    if (pending) return;
    pending = true;
    requestAnimationFrame(() => { pending = false; draw(); });
  }

  function draw() {
    if (!view) return;
    const W = canvas.width / dpr, H = canvas.height / dpr, T = theme;
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.fillStyle = T.bg; ctx.fillRect(0, 0, W, H);
    ctx.setTransform(dpr * scale, 0, 0, dpr * scale, dpr * tx, dpr * ty);
    const [vx0, vy0] = toWorld(0, 0), [vx1, vy1] = toWorld(W, H);
    const seen = (x, y, w, h) => x + w >= vx0 && x <= vx1 && y + h >= vy0 && y <= vy1;
    const text = scale >= 0.3, px = 1 / scale;
    // frames of open groups and bodies
    for (const f of view.frames) {
      if (!seen(f.x, f.y, f.w, f.h)) continue;
      ctx.fillStyle = T.group; ctx.strokeStyle = T.border; ctx.lineWidth = px;
      ctx.fillRect(f.x, f.y, f.w, f.h); ctx.strokeRect(f.x, f.y, f.w, f.h);
      if (text) {
        ctx.fillStyle = T.muted; ctx.font = "600 12px system-ui, sans-serif"; ctx.textBaseline = "middle";
        const canClose = !!closerOf(f.path);
        ctx.fillText((canClose ? "▾ " : "") + f.label, f.x + 8, f.y + FRAME_TITLE / 2, Math.max(10, f.w - 16));
      }
    }
    // edges, in one path per style
    const solid = new Path2D(), dashed = new Path2D();
    for (const e of view.edges) {
      const p = e.pts;
      if (!p || !seen(e.bb[0], e.bb[1], e.bb[2] - e.bb[0], e.bb[3] - e.bb[1])) continue;
      const path = e.rec[5] === "body" ? dashed : solid;
      path.moveTo(p[0], p[1]);
      for (let j = 2; j < p.length; j += 2) path.lineTo(p[j], p[j + 1]);
    }
    const stubs = new Path2D();
    for (const e of view.edges) {
      const q = e.stubs;
      if (!q || !seen(e.bb[0], e.bb[1], e.bb[2] - e.bb[0], e.bb[3] - e.bb[1])) continue;
      stubs.moveTo(q[0], q[1]); stubs.lineTo(q[2], q[3]); stubs.moveTo(q[4], q[5]); stubs.lineTo(q[6], q[7]);
    }
    ctx.lineWidth = Math.max(px, 1.1); ctx.strokeStyle = T.ref; ctx.stroke(stubs);
    ctx.strokeStyle = T.edge;
    ctx.stroke(solid);
    ctx.setLineDash([5, 4]); ctx.stroke(dashed); ctx.setLineDash([]);
    if (hoverEdge >= 0 && view.edges[hoverEdge] && (view.edges[hoverEdge].pts || view.edges[hoverEdge].stubs)) {
      const he = view.edges[hoverEdge], hp = new Path2D();
      const parts = he.pts ? [he.pts] : [he.stubs.slice(0, 4), he.stubs.slice(4)];
      for (const p of parts) { hp.moveTo(p[0], p[1]); for (let j = 2; j < p.length; j += 2) hp.lineTo(p[j], p[j + 1]); }
      ctx.lineWidth = Math.max(3 * px, 2.5); ctx.strokeStyle = T.hover; ctx.stroke(hp);
    }
    // arrow heads where text shows
    if (text) {
      ctx.fillStyle = T.edge;
      for (const e of view.edges) {
        const p = e.pts;
        if (!p || p.length < 4) continue;
        const x = p[p.length - 2], y = p[p.length - 1];
        if (!seen(x - 5, y - 8, 10, 8)) continue;
        ctx.beginPath(); ctx.moveTo(x, y); ctx.lineTo(x - 3.5, y - 7); ctx.lineTo(x + 3.5, y - 7); ctx.fill();
      }
    }
    if (text) {
      const placed = new Set();
      for (const e of view.edges) {
        const q = e.stubs;
        if (!q || !seen(e.bb[0] - 200, e.bb[1], e.bb[2] - e.bb[0] + 400, e.bb[3] - e.bb[1])) continue;
        const value = e.rec[3], from = e.rec[1] + "|" + value;
        if (!placed.has(from)) { placed.add(from); label(value + " ⇢", q[0] + 5, q[1] + STUB - 5, T.ref, "10px", 220, "left"); }
        label("⇢ " + value, q[6] + 5, q[7] - STUB + 2, T.ref, "10px", 220, "left");
        ctx.fillStyle = T.ref;
        ctx.beginPath(); ctx.moveTo(q[6], q[7]); ctx.lineTo(q[6] - 3.5, q[7] - 7); ctx.lineTo(q[6] + 3.5, q[7] - 7); ctx.fill();
      }
    }
    // boxes
    const ov = overlay ? (theme === THEMES.dark && overlay.coloursDark ? overlay.coloursDark : overlay.colours) : null;
    for (let k = 0; k < view.boxes.length; k++) {
      const b = view.boxes[k];
      if (!seen(b.x, b.y, b.w, b.h)) continue;
      drawBox(b, T, text, px, ov);
    }
    // selection and matches on top
    ctx.lineWidth = Math.max(2.5 * px, 2);
    for (const b of view.boxes) {
      const nid = b.rec[9];
      const isSel = selected !== null && b.key === selected;
      const isMatch = nid !== null && matches.has(nid);
      if (!isSel && !isMatch) continue;
      ctx.strokeStyle = isSel ? T.sel : T.match;
      ctx.strokeRect(b.x - 3 * px, b.y - 3 * px, b.w + 6 * px, b.h + 6 * px);
    }
    drawMini();
  }

  function drawBox(b, T, text, px, ov) {
    const r = b.rec, kind = b.kind, cat = catColour(r[4]);
    const oc = ov ? ov[b.key] : undefined;
    if (kind === "input" || kind === "output") {
      ctx.fillStyle = oc || cat;
      roundRect(b.x, b.y, b.w, b.h, Math.min(10, b.h / 2)); ctx.fill();
      if (text) label(r[2], b.x + b.w / 2, b.y + Math.min(TITLE_H, b.h) / 2, T.header, "600 12px", b.w - 8, "center");
      if (text && scale >= 0.5 && r[10].length) label(r[10][0][1], b.x + b.w / 2, b.y + TITLE_H + 4, T.header, "10px", b.w - 8, "center");
      return;
    }
    if (kind === "group") {
      ctx.fillStyle = oc || T.group; ctx.strokeStyle = T.border; ctx.lineWidth = px;
      ctx.fillRect(b.x, b.y, b.w, b.h);
      ctx.setLineDash([4 * px, 3 * px]); ctx.strokeRect(b.x, b.y, b.w, b.h); ctx.setLineDash([]);
      if (text) {
        const path = b.key.slice(2);
        const sign = P.missing[path] ? "· " : "▸ ";
        label(sign + r[2], b.x + 8, b.y + TITLE_H / 2, T.text, "600 12px", b.w - 12, "left");
        const badge = view.v.badge[b.key];
        label(badge || `${r[12]} nodes`, b.x + 8, b.y + TITLE_H + 4, T.muted, "10px", b.w - 12, "left");
      }
      return;
    }
    // a node: header in its category's colour (or the overlay's), details below
    ctx.fillStyle = T.fill; ctx.strokeStyle = T.border; ctx.lineWidth = px;
    ctx.fillRect(b.x, b.y, b.w, b.h); ctx.strokeRect(b.x, b.y, b.w, b.h);
    ctx.fillStyle = oc || cat;
    ctx.fillRect(b.x, b.y, b.w, Math.min(TITLE_H - 4, b.h));
    if (oc) { ctx.fillStyle = cat; ctx.fillRect(b.x, b.y, 4, b.h); }
    if (!text) return;
    label(r[2], b.x + b.w / 2, b.y + (TITLE_H - 4) / 2, T.header, "600 12px", b.w - 8, "center");
    if (r[13].length) label("⊞", b.x + b.w - 8, b.y + (TITLE_H - 4) / 2, T.header, "12px", 12, "center");
    if (scale >= 0.45) {
      let y = b.y + TITLE_H + 2;
      for (const [k, v] of r[10].concat(r[11]).slice(0, 6)) {
        label(`${k}  ${v}`, b.x + 6, y, T.muted, "10px", b.w - 10, "left");
        y += LINE_H;
      }
    }
  }
  function roundRect(x, y, w, h, rad) {
    ctx.beginPath();
    ctx.moveTo(x + rad, y); ctx.arcTo(x + w, y, x + w, y + h, rad); ctx.arcTo(x + w, y + h, x, y + h, rad);
    ctx.arcTo(x, y + h, x, y, rad); ctx.arcTo(x, y, x + w, y, rad); ctx.closePath();
  }
  const fitted = new Map();  // (font, width, text) -> the text elided to fit: measured once
  function label(s, x, y, colour, font, maxW, align) {
    ctx.fillStyle = colour; ctx.font = font + " system-ui, sans-serif"; ctx.textAlign = align; ctx.textBaseline = "middle";
    const key = font + "|" + Math.round(maxW) + "|" + s;
    let t = fitted.get(key);
    if (t === undefined) {
      t = String(s);
      if (ctx.measureText(t).width > maxW) {
        let lo = 0, hi = t.length;  // the longest prefix that fits with its ellipsis
        while (lo < hi) { const mid = (lo + hi + 1) >> 1; if (ctx.measureText(t.slice(0, mid) + "…").width <= maxW) lo = mid; else hi = mid - 1; }
        t = t.slice(0, Math.max(1, lo)) + "…";
      }
      fitted.set(key, t);
    }
    ctx.fillText(t, x, y);
  }

  function miniScale() {
    const s = Math.min(mini.width / Math.max(view.w, 1), mini.height / Math.max(view.h, 1));
    return [s, (mini.width - view.w * s) / 2, (mini.height - view.h * s) / 2];
  }
  function drawMini() {
    const [s, ox, oy] = miniScale();
    if (!miniCache) {
      miniCache = document.createElement("canvas");
      miniCache.width = mini.width; miniCache.height = mini.height;
      const c = miniCache.getContext("2d");
      c.fillStyle = theme.mini; c.fillRect(0, 0, mini.width, mini.height);
      for (const f of view.frames) { c.strokeStyle = theme.border; c.strokeRect(ox + f.x * s, oy + f.y * s, f.w * s, f.h * s); }
      for (const b of view.boxes) {
        c.fillStyle = b.kind === "group" ? theme.border : catColour(b.rec[4]);
        c.fillRect(ox + b.x * s, oy + b.y * s, Math.max(1, b.w * s), Math.max(1, b.h * s));
      }
    }
    mctx.setTransform(1, 0, 0, 1, 0, 0);
    mctx.drawImage(miniCache, 0, 0);
    const W = canvas.width / dpr, H = canvas.height / dpr, [x0, y0] = toWorld(0, 0);
    mctx.strokeStyle = theme.sel; mctx.lineWidth = 1.5 * dpr;
    mctx.strokeRect(ox + x0 * s, oy + y0 * s, (W / scale) * s, (H / scale) * s);
  }

  // ------------------------------------------------------------------ hit tests
  function boxAt(wx, wy) {
    for (let k = view.boxes.length - 1; k >= 0; k--) {
      const b = view.boxes[k];
      if (wx >= b.x && wx <= b.x + b.w && wy >= b.y && wy <= b.y + b.h) return k;
    }
    return -1;
  }
  function frameTitleAt(wx, wy) {
    for (let k = view.frames.length - 1; k >= 0; k--) {
      const f = view.frames[k];
      if (wx >= f.x && wx <= f.x + f.w && wy >= f.y && wy <= f.y + FRAME_TITLE) return f;
    }
    return null;
  }
  function edgeAt(wx, wy) {
    const tol = 5 / scale;
    let best = -1, bestD = tol * tol;
    for (let k = 0; k < view.edges.length; k++) {
      const e = view.edges[k], p = e.pts || e.stubs;
      if (!p || wx < e.bb[0] - tol || wx > e.bb[2] + tol || wy < e.bb[1] - tol || wy > e.bb[3] + tol) continue;
      for (let j = 2; j < p.length; j += 2) {
        if (!e.pts && j === 4) continue;  // a reference's two stubs are not joined
        const d = segDist2(wx, wy, p[j - 2], p[j - 1], p[j], p[j + 1]);
        if (d < bestD) { bestD = d; best = k; }
      }
    }
    return best;
  }
  function segDist2(x, y, x0, y0, x1, y1) {
    const dx = x1 - x0, dy = y1 - y0, L = dx * dx + dy * dy;
    let t = L ? ((x - x0) * dx + (y - y0) * dy) / L : 0;
    t = Math.max(0, Math.min(1, t));
    const ex = x0 + t * dx - x, ey = y0 + t * dy - y;
    return ex * ex + ey * ey;
  }

  // ------------------------------------------------------------------ tooltip and details
  function esc(s) { return String(s).replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" }[c])); }
  function boxTitle(key) {
    const k = view.byKey.get(key);
    return k === undefined ? key : view.boxes[k].rec[2];
  }
  function edgeTip(e) {
    const [, src, dst, value, lab, kind] = e.rec;
    const v = P.values[value];
    const shape = v ? `${v[0]}  (${v[1]})` : lab ? `${lab}` : "shape unknown";
    const how = kind === "body" ? "\nread inside the bodies of " + boxTitle(dst) : "";
    const ref = e.stubs ? "\ndrawn as a reference: too long to route" : "";
    return `${value}\n${shape}\n${boxTitle(src)} → ${boxTitle(dst)}${how}${ref}`;
  }
  function showTip(text, cx, cy) {
    const tip = $("tip");
    tip.textContent = text; tip.hidden = false;
    const r = canvas.getBoundingClientRect();
    tip.style.left = Math.min(cx + 14, r.width - 300) + "px";
    tip.style.top = cy + r.top + 14 + "px";
  }
  function hideTip() { $("tip").hidden = true; }

  function fmt(x) { return x === null || x === undefined ? "–" : typeof x === "number" ? String(+x.toPrecision(6)) : String(x); }
  function showDetails(nid) {
    const n = P.nodes[String(nid)];
    const p = $("panel");
    if (!n) { p.hidden = true; return; }
    const [op, domain, name, attrs, ins, outs] = n;
    let h = `<button class="close" type="button" title="Close (Esc)">×</button><h2>${esc(op)}</h2>`;
    h += `<div class="src">${esc(domain || "ai.onnx")}</div><div>${esc(name || "(no name)")}</div>`;
    if (overlay && overlay.values) {
      const key = "n:" + nid, val = overlay.values[key];
      if (val !== undefined) h += `<h3>${esc(overlay.title)}</h3><div>${esc(val)}</div>`;
    }
    h += "<h3>Attributes</h3>" + (attrs.length ? "<table>" + attrs.map(([k, v]) => `<tr><td>${esc(k)}</td><td>${esc(v)}</td></tr>`).join("") + "</table>" : "<div class=src>none</div>");
    const io = (rows) => "<table>" + rows.map(([nm, t, src]) => {
      const w = P.weights[nm];
      let cell = t ? `${esc(t)} <span class="src">${esc(src)}</span>` : `<span class="src">shape unknown</span>`;
      if (w) cell += `<div class="src">weight ${esc(w.dtype)}[${w.shape.join(",")}] min ${fmt(w.min)} · max ${fmt(w.max)} · mean ${fmt(w.mean)} · std ${fmt(w.std)} · zeros ${fmt(w.zeros)}${w.nan ? " · NaN " + w.nan : ""}${w.inf ? " · Inf " + w.inf : ""}${w.note ? " · " + esc(w.note) : ""}</div>`;
      return `<tr><td>${esc(nm || "(none)")}</td><td>${cell}</td></tr>`;
    }).join("") + "</table>";
    const link = P.links ? P.links[String(nid)] : null;
    if (link && link.length) {
      const other = D.panes[P.linkPane];
      h += `<h3>In ${esc(other.side || other.title)}</h3>` + link.map((m) => `<div><a class="cp" role="button" tabindex="0" data-n="${m}">${esc((other.nodes[String(m)] || ["", "", String(m)])[2] || other.nodes[String(m)][0])}</a></div>`).join("");
    }
    h += "<h3>Inputs</h3>" + io(ins) + "<h3>Outputs</h3>" + io(outs);
    p.innerHTML = h; p.hidden = false;
    for (const a of p.querySelectorAll("a.cp")) a.onclick = (ev) => { ev.preventDefault(); const m = +a.dataset.n; setPane(P.linkPane); reveal(m); };
    p.querySelector(".close").onclick = () => { p.hidden = true; selected = null; redraw(); };
  }

  // ------------------------------------------------------------------ find
  let found = [], foundAt = -1;
  /** Node ids whose name contains ``q`` or whose op type is it (case-insensitive): exact
   * names first, then the op type, then the rest, each in node order. */
  function matchNodes(q) {
    q = q.trim().toLowerCase();
    const out = [];
    if (!q) return out;
    if (!P.index) P.index = Object.entries(P.nodes).map(([nid, n]) => [+nid, (n[2] || "").toLowerCase(), n[0].toLowerCase()]);
    for (const [nid, name, op] of P.index) if (name.includes(q) || op.includes(q)) out.push(nid);
    const rank = (nid) => { const n = P.nodes[nid]; const nm = (n[2] || "").toLowerCase(); return nm === q ? 0 : n[0].toLowerCase() === q ? 1 : 2; };
    out.sort((a, b) => rank(a) - rank(b) || a - b);
    return out;
  }
  function search(q) {
    matches = new Set();
    found = matchNodes(q);
    if (!q.trim()) { $("findinfo").textContent = ""; $("results").hidden = true; redraw(); return found; }
    matches = new Set(found);
    foundAt = -1;
    $("findinfo").textContent = found.length ? `${found.length} found` : "nothing found";
    const list = $("results");
    list.innerHTML = found.slice(0, 200).map((nid, k) => `<div data-k="${k}">${esc(P.nodes[nid][2] || "(no name)")}<span class="op">${esc(P.nodes[nid][0])}</span></div>`).join("");
    list.hidden = !found.length;
    redraw();
    return found;
  }
  /** Show node ``nid``: open the groups around it if needed, centre it and select it. */
  function reveal(nid) {
    let key = "n:" + nid;
    const host = P.host[String(nid)];
    if (host) key = host;
    if (!view.byKey.has(key)) {
      const home = P.home[String(nid)];
      if (home) {
        const target = new Set(opened); target.add(home); for (const q of anc(home)) target.add(q);
        let vi = viewIndex.get(effKey(target));
        if (vi === undefined) {
          const t2 = new Set(first); t2.add(home); for (const q of anc(home)) t2.add(q);
          vi = viewIndex.get(effKey(t2));
          if (vi !== undefined) { target.clear(); for (const p of t2) target.add(p); }
        }
        if (vi !== undefined) { opened = target; setView(vi, null); }
      }
    }
    let k = view.byKey.get(key);
    if (k === undefined) {
      // still closed: point at the innermost group box that holds it
      let g = P.home[String(nid)] || "";
      while (g && !view.byKey.has("g:" + g)) g = P.parents[g] || "";
      if (g) k = view.byKey.get("g:" + g);
      notice(k === undefined ? "this node is not drawn in this page's views" : "this node lies in a group this page cannot open");
      if (k === undefined) return false;
    }
    const b = view.boxes[k];
    selected = b.key;
    centreOn(b.x + b.w / 2, b.y + b.h / 2, 0.6);
    if (b.rec[9] !== null) showDetails(b.rec[9]);
    return true;
  }
  function next(step) {
    if (!found.length) return;
    foundAt = (foundAt + step + found.length) % found.length;
    $("findinfo").textContent = `${foundAt + 1} of ${found.length}`;
    reveal(found[foundAt]);
  }

  // ------------------------------------------------------------------ overlays
  function setOverlay(i) {
    overlay = i >= 0 ? P.overlays[i] : null;
    const lg = $("legend");
    if (!overlay) { lg.hidden = true; redraw(); return; }
    const entries = theme === THEMES.dark && overlay.legendDark ? overlay.legendDark : overlay.legend;
    lg.innerHTML = `<b>${esc(overlay.title)}</b>` + entries.map(([c, t]) => `<div><i style="background:${esc(c)}"></i>${esc(t)}</div>`).join("");
    lg.hidden = false;
    redraw();
  }

  function setTheme(name) {
    theme = THEMES[name];
    document.body.className = name;
    $("theme").textContent = name === "dark" ? "Light" : "Dark";
    colourCache.clear(); miniCache = null;
    if (overlay) setOverlay(+$("overlay").value);
    redraw();
  }

  // ------------------------------------------------------------------ events
  function wire() {
    let drag = null, moved = false;
    canvas.addEventListener("mousedown", (ev) => {
      drag = [ev.clientX, ev.clientY, tx, ty]; moved = false; canvas.classList.add("dragging"); canvas.focus();
    });
    window.addEventListener("mouseup", () => { drag = null; canvas.classList.remove("dragging"); });
    canvas.addEventListener("mousemove", (ev) => {
      const r = canvas.getBoundingClientRect(), cx = ev.clientX - r.left, cy = ev.clientY - r.top;
      if (drag) {
        if (Math.abs(ev.clientX - drag[0]) + Math.abs(ev.clientY - drag[1]) > 3) moved = true;
        tx = drag[2] + ev.clientX - drag[0]; ty = drag[3] + ev.clientY - drag[1];
        hideTip(); redraw(); return;
      }
      const [wx, wy] = toWorld(cx, cy);
      const bk = boxAt(wx, wy), ek = bk < 0 ? edgeAt(wx, wy) : -1;
      if (ek !== hoverEdge || bk !== hoverBox) { hoverEdge = ek; hoverBox = bk; redraw(); }
      if (ek >= 0) showTip(edgeTip(view.edges[ek]), cx, cy);
      else if (bk >= 0) {
        const b = view.boxes[bk], nid = b.rec[9], n = nid !== null ? P.nodes[String(nid)] : null;
        let t = n ? `${n[0]}  ${n[2] || ""}` : b.rec[3] || b.rec[2];
        if (b.kind === "group") t += `\n${b.rec[12]} nodes · click to open`;
        if (b.rec[13].length) t += "\nbodies: " + b.rec[13].join(", ") + " · double-click to open";
        if (overlay && overlay.values[b.key] !== undefined) t += `\n${overlay.title}: ${overlay.values[b.key]}`;
        showTip(t, cx, cy);
      } else hideTip();
      canvas.style.cursor = bk >= 0 ? "pointer" : "";
    });
    canvas.addEventListener("mouseleave", () => { hideTip(); if (hoverEdge >= 0) { hoverEdge = -1; redraw(); } });
    canvas.addEventListener("click", (ev) => {
      if (moved) return;
      const r = canvas.getBoundingClientRect();
      const [wx, wy] = toWorld(ev.clientX - r.left, ev.clientY - r.top);
      const f = frameTitleAt(wx, wy), bk = boxAt(wx, wy);
      if (bk >= 0) {
        const b = view.boxes[bk];
        if (b.kind === "group") { toggle(b.key.slice(2)); return; }
        const nid = b.rec[9];
        if (b.rec[13].length && wx > b.x + b.w - 18 && wy < b.y + TITLE_H) { toggle("@" + nid); return; }
        selected = b.key; redraw();
        if (nid !== null) showDetails(nid);
        return;
      }
      if (f && closerOf(f.path)) { toggle(closerOf(f.path)); return; }
      selected = null; $("panel").hidden = true; redraw();
    });
    canvas.addEventListener("dblclick", (ev) => {
      const r = canvas.getBoundingClientRect();
      const [wx, wy] = toWorld(ev.clientX - r.left, ev.clientY - r.top);
      const bk = boxAt(wx, wy);
      if (bk >= 0 && view.boxes[bk].rec[13].length) toggle("@" + view.boxes[bk].rec[9]);
    });
    canvas.addEventListener("wheel", (ev) => {
      ev.preventDefault();
      const r = canvas.getBoundingClientRect();
      zoomAt(Math.exp(-ev.deltaY * (ev.deltaMode ? 0.05 : 0.0015)), ev.clientX - r.left, ev.clientY - r.top);
    }, { passive: false });
    const miniMove = (ev) => {
      const r = mini.getBoundingClientRect(), [s, ox, oy] = miniScale();
      const x = ((ev.clientX - r.left) * dpr - ox) / s, y = ((ev.clientY - r.top) * dpr - oy) / s;
      centreOn(x, y, 0);
    };
    let miniDrag = false;
    mini.addEventListener("mousedown", (ev) => { miniDrag = true; miniMove(ev); ev.preventDefault(); });
    window.addEventListener("mousemove", (ev) => { if (miniDrag) miniMove(ev); });
    window.addEventListener("mouseup", () => { miniDrag = false; });
    window.addEventListener("keydown", (ev) => {
      const inFind = document.activeElement === $("find");
      if (inFind) {
        if (ev.key === "Enter") { $("results").hidden = true; next(ev.shiftKey ? -1 : 1); ev.preventDefault(); }
        if (ev.key === "Escape") { $("find").blur(); $("results").hidden = true; }
        return;
      }
      const r = canvas.getBoundingClientRect(), step = 80;
      const keys = {
        ArrowLeft: () => { tx += step; redraw(); }, ArrowRight: () => { tx -= step; redraw(); },
        ArrowUp: () => { ty += step; redraw(); }, ArrowDown: () => { ty -= step; redraw(); },
        "+": () => zoomAt(1.25, r.width / 2, r.height / 2), "=": () => zoomAt(1.25, r.width / 2, r.height / 2),
        "-": () => zoomAt(0.8, r.width / 2, r.height / 2), f: fit, F: fit, "0": fit,
        "/": () => $("find").focus(), t: () => setTheme(theme === THEMES.dark ? "light" : "dark"),
        a: openAll, c: closeAll, Home: firstView,
        Escape: () => { selected = null; $("panel").hidden = true; $("results").hidden = true; redraw(); },
      };
      const fn = keys[ev.key];
      if (fn && !ev.ctrlKey && !ev.metaKey && !ev.altKey) { fn(); ev.preventDefault(); }
    });
    $("find").addEventListener("input", () => search($("find").value));
    $("find").addEventListener("focus", () => { if (found.length) $("results").hidden = false; });
    $("results").addEventListener("mousedown", (ev) => {
      const d = ev.target.closest("div[data-k]");
      if (!d) return;
      ev.preventDefault();
      foundAt = +d.dataset.k;
      $("findinfo").textContent = `${foundAt + 1} of ${found.length}`;
      $("results").hidden = true;
      reveal(found[foundAt]);
    });
    $("fit").onclick = fit;
    $("openall").onclick = openAll;
    $("closeall").onclick = closeAll;
    $("firstview").onclick = firstView;
    $("theme").onclick = () => setTheme(theme === THEMES.dark ? "light" : "dark");
    $("overlay").onchange = () => setOverlay(+$("overlay").value);
    window.addEventListener("resize", resize);
  }

  // ------------------------------------------------------------------ start
  /** Show pane ``i`` (one model; a diff has two), keeping each pane's place and open groups. */
  function setPane(i, fresh) {
    if (P && !fresh) paneState[pane] = { scale, tx, ty, opened: new Set(opened), view: view.i, overlay: $("overlay").value };
    pane = i; P = D.panes[i];
    viewIndex = new Map();
    P.views.forEach((v, k) => viewIndex.set(v.x.join("\n"), k));
    first = new Set(P.views[0].x);
    const st = paneState[i];
    opened = st ? new Set(st.opened) : new Set(first);
    const sel = $("overlay");
    sel.innerHTML = `<option value="-1">No overlay</option>` + P.overlays.map((o, k) => `<option value="${k}">${esc(o.title)}</option>`).join("");
    sel.hidden = !P.overlays.length;
    for (const b of document.querySelectorAll("#panes button")) b.classList.toggle("on", +b.dataset.k === i);
    selected = null; $("panel").hidden = true; notice("");
    view = buildView(st ? st.view : 0); miniCache = null;
    barButtons();
    if (st) { scale = st.scale; tx = st.tx; ty = st.ty; sel.value = st.overlay; setOverlay(+st.overlay); }
    else { firstZoom(); if (P.overlays.length) { sel.value = "0"; setOverlay(0); } else setOverlay(-1); }
    if ($("find").value) search($("find").value);
    redraw();
  }

  async function start() {
    try {
      D = await load();
      if (D.version !== 1) throw new Error(`page data version ${D.version} is not one this viewer reads`);
      document.title = D.title + " — ONNX Studio";
      $("title").textContent = D.title;
      const panes = $("panes");
      if (D.panes.length > 1) {
        panes.innerHTML = D.panes.map((p, k) => `<button type="button" data-k="${k}" title="${esc(p.title)}">${esc(p.side || p.title)}</button>`).join("");
        for (const b of panes.querySelectorAll("button")) b.onclick = () => setPane(+b.dataset.k);
      } else panes.hidden = true;
      setTheme(document.body.className === "dark" ? "dark" : "light");
      wire();
      P = D.panes[0];
      view = buildView(0);
      resize();
      setPane(0, true);
      $("loading").remove();
      draw();
      S.readyMs = performance.now();  // since the page's navigation started: loaded, inflated, drawn
      S.ready = true;
    } catch (err) {
      S.errors.push(String(err && err.stack || err));
      $("loading").textContent = "This page could not be opened: " + err;
      throw err;
    }
  }

  // the page's API (tests, and a notebook's own script if it wants one)
  Object.assign(S, {
    pane: () => pane, setPane,
    view: () => ({ expanded: [...view.v.x], boxes: view.boxes.map((b) => b.key), edges: view.edges.map((e) => e.key),
      frames: view.frames.map((f) => f.path), scale, notice: $("notice").textContent }),
    toggle, search, match: matchNodes, reveal, fit, openAll, closeAll, firstView,
    theme: () => (theme === THEMES.dark ? "dark" : "light"),
    /** client (CSS pixel) coordinates of a point of a box, a frame's title or an edge's route */
    clientOfBox: (key) => { const k = view.byKey.get(key); if (k === undefined) return null; const b = view.boxes[k], r = canvas.getBoundingClientRect(); return [r.left + tx + (b.x + b.w / 2) * scale, r.top + ty + (b.y + Math.min(b.h, 20) / 2) * scale]; },
    clientOfFrame: (path) => { const f = view.frames.find((x) => x.path === path); if (!f) return null; const r = canvas.getBoundingClientRect(); return [r.left + tx + (f.x + Math.min(f.w / 2, 60)) * scale, r.top + ty + (f.y + FRAME_TITLE / 2) * scale]; },
    /** centre the view on an edge (its middle; a reference: its target's stub) */
    showEdge: (key) => {
      const e = view.edges.find((x) => x.key === key); if (!e) return false;
      if (e.stubs) centreOn(e.stubs[6], e.stubs[7] - STUB / 2, 0.6);
      else if (e.pts) { const p = e.pts, j = 2 * Math.floor((p.length / 2 - 1) / 2); centreOn((p[j] + p[j + 2]) / 2, (p[j + 1] + p[j + 3]) / 2, 0.6); }
      else return false;
      draw();
      return true;
    },
    clientOfEdge: (key) => {
      const e = view.edges.find((x) => x.key === key); if (!e) return null;
      if (e.stubs) { const q = e.stubs, r = canvas.getBoundingClientRect(); return [r.left + tx + q[6] * scale, r.top + ty + (q[7] - STUB / 2) * scale]; }
      if (!e.pts || e.pts.length < 4) return null;
      const p = e.pts, j = 2 * Math.floor((p.length / 2 - 1) / 2), r = canvas.getBoundingClientRect();
      return [r.left + tx + ((p[j] + p[j + 2]) / 2) * scale, r.top + ty + ((p[j + 1] + p[j + 3]) / 2) * scale];
    },
    tip: () => ($("tip").hidden ? null : $("tip").textContent),
    panel: () => ($("panel").hidden ? null : $("panel").innerText),
    drawMs: () => { const t = performance.now(); draw(); return performance.now() - t; },
  });
  start();
})();
