// gentle view: draws the page's data (the JSON in #gentle-data) with plotly.js.
// Every graph of a flow shares one time axis with every other graph on the page:
// zooming, panning or choosing a range in one sets it in all (linked views). Only
// what lies in (or just beside) the shown range is handed to plotly, thinned to a
// few thousand marks per series, so that a 100,000-packet flow stays responsive.
"use strict";
(function () {
  const t0 = performance.now(); // plotly.js is loaded by now
  const D = JSON.parse(document.getElementById("gentle-data").textContent);
  // Marks per series on screen: drawn as one path (lines, segments) or one element
  // each (markers).
  const BUDGET = { path: 1600, markers: 800 };
  const COLORS = {
    original: "#222", fast: "#d62728", early: "#ff7f0e", timeout: "#9467bd",
    "slow-start": "#8c564b", probe: "#17becf", retransmission: "#e377c2",
  };
  const plots = []; // {div, series: [...], kind, flow}
  const view = { range: null, applying: false };
  const timing = { plotlyLoaded: t0, dataParsed: performance.now() };
  const byId = {};
  D.flows.forEach((f) => (byId[f.id] = f));

  function el(tag, attrs, ...kids) {
    const e = document.createElement(tag);
    Object.entries(attrs || {}).forEach(([k, v]) => {
      if (k === "onclick") e.addEventListener("click", v);
      else if (k === "text") e.textContent = v;
      else e.setAttribute(k, v);
    });
    kids.forEach((k) => k != null && e.append(k));
    return e;
  }
  const fmt = (x, d) => (x == null ? "–" : Number(x).toFixed(d == null ? 1 : d));

  // ---- thinning ---------------------------------------------------------------
  // Indices (into idx) of the points to draw in [lo, hi] (with a margin): all of
  // them if few, else the lowest and highest y of each of budget/2 time buckets.
  function thin(idx, t, y, range, budget) {
    let a = 0, b = idx.length;
    if (range) {
      const w = range[1] - range[0];
      const lo = range[0] - w / 2, hi = range[1] + w / 2;
      a = lowerBoundIdx(idx, t, lo);
      b = lowerBoundIdx(idx, t, hi + 1e-9);
      b = Math.min(idx.length, b + 1);
      a = Math.max(0, a - 1);
    }
    if (b - a <= budget) return idx.slice(a, b);
    const out = [];
    const n = budget / 2, t0 = t[idx[a]], t1 = t[idx[b - 1]];
    const w = (t1 - t0) / n || 1;
    let bucket = -1, lo = -1, hi = -1;
    for (let k = a; k < b; k++) {
      const i = idx[k];
      const bk = Math.floor((t[i] - t0) / w);
      if (bk !== bucket) {
        if (lo >= 0) { out.push(lo); if (hi !== lo) out.push(hi); }
        bucket = bk; lo = hi = i;
      } else {
        if (y[i] < y[lo]) lo = i;
        if (y[i] > y[hi]) hi = i;
      }
    }
    if (lo >= 0) { out.push(lo); if (hi !== lo) out.push(hi); }
    out.sort((p, q) => t[p] - t[q]);
    return out;
  }
  function lowerBoundIdx(idx, t, x) {
    let lo = 0, hi = idx.length;
    while (lo < hi) { const m = (lo + hi) >> 1; if (t[idx[m]] < x) lo = m + 1; else hi = m; }
    return lo;
  }
  const seriesIdx = (s) => (s.idx || (s.idx = s.t.map((_, i) => i)));

  // ---- a packet, in words ---------------------------------------------------
  function describe(f, i) {
    const k = f.pk;
    const flags = f.flag_names[k.flags[i]];
    const tags = f.tag_names.filter((_, b) => k.tags[i] & (1 << b));
    const lines = [
      `<b>${fmt(k.t[i], 3)} ms</b> ${k.dir[i] ? "received by" : "sent by"} the sender`,
      `flags ${flags} seq ${k.seq[i]} len ${k.len[i]} ack ${k.ack[i]} win ${k.win[i]}`,
    ];
    const opts = [];
    if (k.tsval[i] != null) {
      const [mine, theirs] = k.dir[i] ? [1, 0] : [0, 1];
      const abs = (v, c) => (v == null ? 0 : (v + k.ts_base[c] + 4294967296) % 4294967296);
      opts.push(`TS val ${abs(k.tsval[i], mine)} ecr ${abs(k.tsecr[i], theirs)}`);
    }
    const s0 = k.sack_at[i], s1 = k.sack_at[i + 1];
    for (let j = s0; j < s1; j++) opts.push(`SACK ${k.sack[2 * j]}-${k.sack[2 * j + 1]}`);
    if (opts.length) lines.push("options: " + opts.join(", "));
    if (k.dir[i] === 0 && k.cause[i] > 0) {
      tags.push("cause: " + D.causes[k.cause[i]]);
      if (k.spurious[i]) tags.push("spurious");
    }
    lines.push("tags: " + (tags.length ? tags.join(", ") : "none"));
    return lines.join("<br>");
  }

  // ---- the series of a flow's time-sequence graph ----------------------------
  function tsgSeries(f) {
    const k = f.pk, n = k.t.length;
    const byCause = D.causes.map(() => []);
    const acks = [], spur = [], fins = [];
    const finFlag = new Set(f.flag_names.map((x, j) => (x.includes("F") ? j : -1)));
    for (let i = 0; i < n; i++) {
      if (k.dir[i] === 0) {
        if (k.len[i] > 0) byCause[k.cause[i]].push(i);
        else if (finFlag.has(k.flags[i])) fins.push(i);
        if (k.spurious[i]) spur.push(i);
      } else acks.push(i);
    }
    const end = k.seq.map((s, i) => s + k.len[i]);
    const out = [];
    byCause.forEach((idx, c) => {
      if (!idx.length) return;
      const name = c === 0 ? "original" : "retransmission: " + D.causes[c];
      // Originals as tcptrace draws them (a bar from the first byte to the last),
      // retransmissions as a triangle on top of their bar.
      out.push(c === 0
        ? { name, idx, t: k.t, y: end, y0: k.seq, cause: c, hover: true,
            style: { mode: "lines", line: { color: COLORS.original, width: 1.5 } } }
        : { name, idx, t: k.t, y: end, cause: c, hover: true,
            style: { mode: "markers", marker: { symbol: "triangle-up", size: 10, color: COLORS[D.causes[c]] } } });
      if (c > 0) out.push({ name: name + " (bar)", idx, t: k.t, y: end, y0: k.seq, cause: c, hover: true,
        style: { mode: "lines", showlegend: false, line: { color: COLORS[D.causes[c]], width: 2.5 } } });
    });
    if (fins.length) out.push({ name: "FIN", idx: fins, t: k.t, y: k.seq, hover: true,
      style: { mode: "markers", marker: { symbol: "square-open", size: 8, color: "#555" } } });
    if (spur.length) out.push({
      name: "spurious (DSACK or undo)", idx: spur, t: k.t, y: end, hover: true,
      style: { mode: "markers", marker: { symbol: "circle-open", size: 15, color: "#000", line: { width: 2 } } },
    });
    if (acks.length) {
      out.push({ name: "ACK (snd.una)", idx: acks, t: k.t, y: k.ack, hover: true,
        style: { mode: "lines", line: { shape: "hv", color: "#2ca02c", width: 1.5 } } });
      const rwnd = k.ack.map((a, i) => a + k.win[i]);
      out.push({ name: "receive window", idx: acks, t: k.t, y: rwnd,
        style: { mode: "lines", line: { shape: "hv", color: "#bcbd22", width: 1, dash: "dot" } } });
    }
    out.push(sackSeries(f, acks, false), sackSeries(f, acks, true));
    if (f.drop_t.length) {
      const dEnd = f.drop_seq.map((s, i) => s + f.drop_len[i]);
      out.push({ name: "dropped", t: f.drop_t, y: dEnd, idx: f.drop_t.map((_, i) => i),
        text: (i) => `dropped at ${fmt(f.drop_t[i], 3)} ms: seq ${f.drop_seq[i]} len ${f.drop_len[i]}`,
        style: { mode: "markers", marker: { symbol: "x", size: 9, color: "#d62728" } } });
    }
    return out.filter((s) => s && s.idx.length);
  }
  // SACK (or DSACK) blocks: vertical bars at the ACK's time, drawn as one line with
  // gaps.
  function sackSeries(f, acks, dsack) {
    const k = f.pk, dTag = f.tag_names.indexOf("dsack");
    const idx = acks.filter((i) => k.sack_at[i + 1] > k.sack_at[i] &&
      (dTag >= 0 && (k.tags[i] & (1 << dTag)) ? 1 : 0) === (dsack ? 1 : 0));
    return {
      name: dsack ? "DSACK blocks" : "SACK blocks", idx, t: k.t, y: k.ack, bars: true,
      style: { mode: "lines", line: { color: dsack ? "#ff7f0e" : "#9467bd", width: dsack ? 3 : 2 } },
    };
  }
  function barsTrace(f, s, shown) {
    const k = f.pk, x = [], y = [];
    shown.forEach((i) => {
      for (let j = k.sack_at[i]; j < k.sack_at[i + 1]; j++) {
        x.push(k.t[i], k.t[i], null); y.push(k.sack[2 * j], k.sack[2 * j + 1], null);
      }
    });
    return Object.assign({ type: "scatter", name: s.name, x, y, hoverinfo: "skip" }, s.style);
  }
  const stepSeries = (name, s, color, extra) => ({
    name, t: s.t, y: s.v, idx: seriesIdx(s),
    style: Object.assign({ mode: "lines", line: { shape: "hv", color, width: 1.5 } }, extra || {}),
  });
  const pointSeries = (name, s, color, symbol) => ({
    name, t: s.t, y: s.v, idx: seriesIdx(s),
    style: { mode: "markers", marker: { size: 5, color, symbol: symbol || "circle" } },
  });

  // ---- plots ------------------------------------------------------------------
  function traces(p) {
    return p.series.map((s) => {
      const budget = s.style.mode === "markers" ? BUDGET.markers : BUDGET.path;
      const shown = thin(s.idx, s.t, s.y, view.range, budget);
      if (s.bars) return barsTrace(p.flowOf(s), s, shown);
      const tr = Object.assign({ type: "scatter", name: s.name }, s.style);
      // Segments: one bar per point, from y0 to y, as one path with gaps.
      const at = s.y0 ? shown.flatMap((i) => [i, i, -1]) : shown;
      tr.x = at.map((i) => (i < 0 ? null : s.t[i]));
      tr.y = s.y0 ? at.map((i, j) => (i < 0 ? null : j % 3 ? s.y[i] : s.y0[i])) : shown.map((i) => s.y[i]);
      if (s.hover) {
        // The packet's index: the tooltip describes it when hovered (no text is
        // built for the marks nobody points at).
        tr.customdata = at;
        tr.hoverinfo = "none";
      } else if (s.text) {
        tr.text = shown.map(s.text);
        tr.hovertemplate = "%{text}<extra></extra>";
      } else tr.hovertemplate = `%{y} at %{x:.3f} ms<extra>${s.name}</extra>`;
      return tr;
    });
  }
  function yRange(p) {
    if (!view.range || !p.fitY) return null;
    let lo = Infinity, hi = -Infinity;
    p.series.forEach((s) => {
      if (s.bars) return;
      // A step line enters the range at the value it had before it.
      const stepped = s.style.line && s.style.line.shape === "hv";
      const a = Math.max(0, lowerBoundIdx(s.idx, s.t, view.range[0]) - (stepped ? 1 : 0));
      const b = lowerBoundIdx(s.idx, s.t, view.range[1] + 1e-9);
      for (let k = a; k < b; k++) { const v = s.y[s.idx[k]]; if (v < lo) lo = v; if (v > hi) hi = v; }
    });
    if (!(hi >= lo)) return null;
    const pad = (hi - lo) * 0.05 + 1;
    return [lo - pad, hi + pad];
  }
  function layout(p) {
    const l = {
      title: { text: p.title, font: { size: 14 } }, height: p.height || 300,
      margin: Object.assign({ l: 70, r: 20, t: 36, b: 40 }, p.margin || {}), hovermode: "closest", dragmode: view.drag || "zoom",
      xaxis: { title: { text: "ms since the first data segment" } },
      yaxis: { title: { text: p.ytitle } }, legend: { orientation: "h", y: -0.25 },
      // Legend choices survive a redraw; the axes follow the shared range.
      uirevision: "keep",
    };
    l.xaxis.uirevision = view.rev;
    l.yaxis.uirevision = view.rev;
    if (p.yaxis) Object.assign(l.yaxis, p.yaxis);
    if (view.range) {
      l.xaxis.range = view.range.slice();
      l.xaxis.autorange = false;
      const y = yRange(p);
      if (y) { l.yaxis.range = y; l.yaxis.autorange = false; }
    } else if (p.full) {
      l.xaxis.range = p.full.slice();
      l.xaxis.autorange = false;
      l.yaxis.autorange = true;
    } else { l.xaxis.autorange = true; l.yaxis.autorange = true; }
    return l;
  }
  const CONFIG = { scrollZoom: true, displaylogo: false, responsive: true };
  function addPlot(parent, p) {
    p.div = el("div", { class: "plot", id: p.id });
    parent.append(p.div);
    p.flowOf = p.flowOf || (() => p.flow);
    plots.push(p);
    return p;
  }
  function draw(p) {
    p.drawn = true;
    const r = Plotly.react(p.div, traces(p), layout(p), CONFIG);
    if (!p.bound) {
      p.bound = true;
      p.div.on("plotly_relayout", (ev) => onRelayout(p, ev));
      p.div.on("plotly_hover", (ev) => showTip(p, ev));
      p.div.on("plotly_unhover", () => (tip().hidden = true));
    }
    return r;
  }
  // The tooltip of a packet: its header, options and tags.
  function tip() {
    let t = document.getElementById("tip");
    if (!t) { t = el("div", { id: "tip", class: "tip" }); t.hidden = true; document.body.append(t); }
    return t;
  }
  function showTip(p, ev) {
    const pt = ev.points && ev.points[0];
    const s = pt && p.series[pt.curveNumber];
    if (!s || !s.hover || pt.customdata == null || pt.customdata < 0) return;
    const t = tip();
    t.innerHTML = describe(p.flowOf(s), pt.customdata) + `<br><i>${s.name}</i>`;
    t.hidden = false;
    const x = ev.event ? ev.event.clientX : 0, y = ev.event ? ev.event.clientY : 0;
    t.style.left = Math.min(x + 14, window.innerWidth - t.offsetWidth - 8) + "px";
    t.style.top = Math.min(y + 14, window.innerHeight - t.offsetHeight - 8) + "px";
  }
  function onRelayout(p, ev) {
    if (view.applying) return;
    let r = null;
    if (ev["xaxis.range[0]"] != null) r = [ev["xaxis.range[0]"], ev["xaxis.range[1]"]];
    else if (ev["xaxis.range"]) r = ev["xaxis.range"].slice();
    else if (ev["xaxis.autorange"]) r = null;
    else return;
    setRange(r, p);
  }
  // Sets the time range of every graph (linked views); resolves when all are drawn.
  function setRange(r, from) {
    view.range = r ? [Number(r[0]), Number(r[1])] : null;
    view.rev = (view.rev || 0) + 1;
    const box = document.getElementById("range-box");
    if (box) {
      box.querySelector(".lo").value = r ? fmt(r[0], 3) : "";
      box.querySelector(".hi").value = r ? fmt(r[1], 3) : "";
    }
    view.applying = true;
    const visible = plots.filter((p) => p.div.offsetParent !== null);
    const all = visible.map((p) => {
      const keepY = p === from;
      if (keepY) {
        const y = p.div.layout.yaxis.range.slice(), fit = p.fitY;
        p.fitY = false;
        const res = draw(p).then(() => Plotly.relayout(p.div, { "yaxis.range": y }));
        p.fitY = fit;
        return res;
      }
      return draw(p);
    });
    plots.filter((p) => p.div.offsetParent === null).forEach((p) => (p.stale = true));
    window.dispatchEvent(new Event("gentle-range"));
    return Promise.all(all).then(() => { view.applying = false; });
  }

  // ---- a flow's panel -----------------------------------------------------------
  function flowPanel(f) {
    const panel = el("section", { class: "flow", id: "flow-" + f.id });
    const s = f.summary;
    const retx = s.retransmissions.filter((x) => x[1] > 0).map((x) => `${x[1]} ${x[0]}`).join(", ");
    panel.append(el("h3", { text: f.name }), el("p", { class: "meta",
      text: `${f.kind} ${f.source} · ${s.packets} packets (${s.data_packets} data) · ` +
        `retransmissions: ${retx || "none"}${s.spurious ? ` (${s.spurious} spurious)` : ""} · ` +
        `drops ${s.drops} · SRTT ${fmt(s.srtt_ms)} ms · last byte acknowledged at ${fmt(s.last_ack_ms)} ms` }));
    panel.append(episodeList(f));
    const graphs = el("div", { class: "graphs" });
    panel.append(graphs);
    const full = fullRange([f]);
    const mk = (kind, title, ytitle, series, extra) => addPlot(graphs, Object.assign(
      { id: `${kind}-${f.id}`, kind, flow: f, title, ytitle, full, series: series.filter((x) => x.idx.length) }, extra || {}));
    mk("tsg", "Time-sequence graph", "sequence (bytes from the ISN)", tsgSeries(f), { height: 460, fitY: true });
    const e = f.engine;
    const mss = Math.max(1, mode(f.pk.len.filter((x, i) => x > 0 && f.pk.dir[i] === 0)));
    if (e) {
      const inflight = { t: f.pk.t, v: f.inflight.map((b) => b / mss) };
      mk("window", "Congestion window, ssthresh and pipe (after each ACK) and data in flight",
        "segments", [stepSeries("cwnd", e.cwnd, "#1f77b4"), stepSeries("ssthresh", e.ssthresh, "#ff7f0e"),
          pointSeries("pipe", e.pipe, "#2ca02c", "diamond"),
          stepSeries("in flight (snd.nxt − snd.una)", inflight, "#7f7f7f", { line: { shape: "hv", color: "#7f7f7f", width: 1 } })]);
      mk("ca", "CA state and timers", "", [stepSeries("CA state", { t: e.ca.t, v: e.ca.v }, "#9467bd"),
        pointSeries("timer armed (after an ACK)", { t: e.armed.t, v: e.armed.v.map((v) => v + e.ca_names.length) }, "#8c564b", "circle-open"),
        pointSeries("timer fired", { t: e.timers.t, v: e.timers.v.map((v) => v + e.ca_names.length) }, "#d62728", "x")],
        { height: 220, margin: { l: 130 }, yaxis: { tickvals: [...e.ca_names.keys(), ...e.timer_names.map((_, i) => i + e.ca_names.length)],
          ticktext: [...e.ca_names, ...e.timer_names.map((n) => n + " timer")] } });
    } else {
      mk("outstanding", "Outstanding data (snd.nxt − snd.una)", "bytes",
        [stepSeries("outstanding", { t: f.pk.t, v: f.inflight }, "#7f7f7f")], { height: 260 });
    }
    const rtt = [pointSeries("RTT sample", f.rtt, "#1f77b4"), stepSeries("SRTT", f.srtt, "#ff7f0e")];
    if (e) {
      rtt.push(stepSeries("SRTT (engine, after each ACK)", e.srtt, "#2ca02c"));
      rtt.push(stepSeries("RTO (engine, after each ACK)", e.rto_ack, "#9467bd"));
      rtt.push(pointSeries("RTO armed (after a timeout)", e.rto, "#d62728", "square"));
    }
    mk("rtt", "RTT samples (Karn: segments sent once) and SRTT (RFC 6298)", "ms", rtt, { height: 260 });
    mk("throughput", "Throughput (bytes newly acknowledged)", "Mbit/s",
      [stepSeries("throughput", f.throughput, "#17becf")], { height: 220 });
    if (e && e.log.length) panel.append(eventLog(e));
    return panel;
  }
  // The time span of flows, for graphs showing the whole of them.
  function fullRange(flows) {
    let lo = Infinity, hi = -Infinity;
    flows.forEach((f) => {
      const t = f.pk.t;
      if (t.length) { lo = Math.min(lo, t[0], 0); hi = Math.max(hi, t[t.length - 1]); }
    });
    if (!(hi > lo)) return null;
    const pad = (hi - lo) * 0.02;
    return [lo - pad, hi + pad];
  }
  function mode(xs) {
    const c = new Map();
    let best = 0, n = 0;
    xs.forEach((x) => { const v = (c.get(x) || 0) + 1; c.set(x, v); if (v > n) { n = v; best = x; } });
    return best;
  }
  function zoomTo(a, b) {
    const pad = Math.max((b - a) * 0.25, 1);
    return setRange([a - pad, b + pad]);
  }
  function episodeList(f) {
    const box = el("div", { class: "episodes" }, el("h4", { text: `Recovery episodes (${f.episodes.length})` }));
    const ol = el("ol");
    f.episodes.forEach((e, i) => {
      ol.append(el("li", {}, el("button", { class: "episode", "data-flow": f.id, "data-i": i,
        onclick: () => zoomTo(e.start, e.end),
        text: `${e.label} at ${fmt(e.start)} ms, ${fmt(e.end - e.start)} ms, ${e.retransmissions} ` +
          `retransmission${e.retransmissions === 1 ? "" : "s"}${e.spurious ? ` (${e.spurious} spurious)` : ""}` })));
    });
    if (!f.episodes.length) box.append(el("p", { text: "none" }));
    box.append(ol);
    return box;
  }
  function eventLog(e) {
    const d = el("details", { class: "log" }, el("summary", { text: `Engine events (${e.log.length}) in the shown range` }));
    const pre = el("pre");
    d.append(pre);
    const fill = () => {
      const r = view.range || [-Infinity, Infinity];
      const lines = [];
      for (let i = 0; i < e.log.length && lines.length < 2000; i++)
        if (e.log_t[i] >= r[0] && e.log_t[i] <= r[1]) lines.push(`${fmt(e.log_t[i], 3)} ms  ${e.log[i]}`);
      pre.textContent = lines.join("\n");
    };
    d.addEventListener("toggle", fill);
    window.addEventListener("gentle-range", () => d.open && fill());
    return d;
  }

  window.gentleView = { D, plots, view, setRange, zoomTo, timing, thin };
  window.gentleViewParts = { el, fmt, flowPanel, addPlot, draw, tsgSeries, fullRange, byId, CONFIG };
})();
