// gentle view: the page around the graphs (graphs.js) — the toolbar with the
// range box, the tabs (flows, side by side, flow tables, results), the comparison
// of two flows with their differences, the sortable flow tables of captures, and the
// results of run, reproduce and sweep directories.
"use strict";
(function () {
  const G = window.gentleView, P = window.gentleViewParts, D = G.D;
  const { el, fmt, byId } = P;
  const app = document.getElementById("app");
  const shown = {}; // flow id -> its panel, once built

  // ---- toolbar: range box, drag mode, reset -----------------------------------
  function toolbar() {
    const lo = el("input", { class: "lo", type: "number", step: "any", placeholder: "from ms" });
    const hi = el("input", { class: "hi", type: "number", step: "any", placeholder: "to ms" });
    const go = () => {
      const a = parseFloat(lo.value), b = parseFloat(hi.value);
      if (a < b) G.setRange([a, b]);
    };
    [lo, hi].forEach((i) => i.addEventListener("keydown", (e) => e.key === "Enter" && go()));
    const drag = el("select", { id: "drag-mode" }, el("option", { value: "zoom", text: "drag: zoom box" }),
      el("option", { value: "pan", text: "drag: pan" }));
    drag.addEventListener("change", () => {
      G.view.drag = drag.value;
      G.plots.forEach((p) => p.div.layout && Plotly.relayout(p.div, { dragmode: drag.value }));
    });
    return el("div", { id: "range-box", class: "toolbar" },
      el("span", { text: "time range (ms, every graph): " }), lo, el("span", { text: " to " }), hi,
      el("button", { id: "range-go", onclick: go, text: "show" }),
      el("button", { id: "range-reset", onclick: () => G.setRange(null), text: "whole flow" }), drag,
      el("span", { class: "hint", text: " wheel zooms, drag zooms or pans, double-click resets" }));
  }

  // ---- tabs ----------------------------------------------------------------------
  const tabs = [];
  function tab(name, id, build) {
    const sec = el("section", { class: "tab", id: "tab-" + id });
    sec.hidden = true;
    tabs.push({ name, id, sec, build, built: false });
  }
  function showTab(id) {
    const box = document.getElementById("range-box");
    if (box) box.hidden = !["flows", "compare"].includes(id);
    tabs.forEach((t) => {
      t.sec.hidden = t.id !== id;
      document.getElementById("tabbtn-" + t.id).classList.toggle("on", t.id === id);
      if (t.id === id && !t.built) { t.built = true; t.done = t.build(t.sec); }
    });
    const t = tabs.find((x) => x.id === id);
    return Promise.all([t && t.done, redrawStale()]);
  }
  // Draws the shown graphs not drawn yet (or drawn for another range): the first
  // at once, each next one a frame later, so that the page shows the first graph
  // without waiting for the rest.
  function redrawStale() {
    const todo = G.plots.filter((p) => (p.stale || !p.drawn) && p.div.offsetParent !== null);
    todo.forEach((p) => { p.stale = false; p.drawn = true; });
    let chain = Promise.resolve();
    todo.forEach((p, i) => {
      chain = chain.then(() => P.draw(p)).then(() => {
        if (i === 0 && G.timing.firstRender == null) G.timing.firstRender = performance.now();
        return new Promise((r) => setTimeout(r, 0));
      });
    });
    return chain;
  }

  // ---- flows ---------------------------------------------------------------------
  function flowsTab(sec) {
    const pick = el("select", { id: "flow-select" });
    D.flows.forEach((f) => pick.append(el("option", { value: f.id, text: f.name })));
    const holder = el("div");
    sec.append(el("label", { text: "flow: " }, pick), holder);
    pick.addEventListener("change", () => selectFlow(pick.value));
    G.selectFlow = selectFlow;
    function selectFlow(id) {
      pick.value = id;
      Object.values(shown).forEach((p) => (p.hidden = true));
      if (!shown[id]) { shown[id] = P.flowPanel(byId[id]); holder.append(shown[id]); }
      shown[id].hidden = false;
      return redrawStale();
    }
    return D.flows.length ? selectFlow(D.flows[0].id) : null;
  }

  // ---- side by side ----------------------------------------------------------------
  function compareTab(sec) {
    const a = el("select", { id: "cmp-a" }), b = el("select", { id: "cmp-b" });
    D.flows.forEach((f) => { a.append(el("option", { value: f.id, text: f.name })); b.append(el("option", { value: f.id, text: f.name })); });
    const presets = el("div", { class: "presets" });
    D.pairs.forEach((p) => presets.append(el("button", { class: "pair", text: p.title, onclick: () => set(p.a, p.b) })));
    const graphs = el("div"), diffs = el("div", { id: "cmp-diffs" });
    sec.append(presets, el("label", { text: "A: " }, a), el("label", { text: " B: " }, b), graphs, diffs);
    const plot = P.addPlot(graphs, { id: "cmp-tsg", kind: "compare", title: "A and B on the same axes",
      ytitle: "sequence (bytes from the ISN)", height: 520, fitY: true, series: [] });
    const seriesOf = (f, tag) => P.tsgSeries(f).map((s) => {
      const c = Object.assign({}, s, { name: tag + ": " + s.name, flow: f });
      c.style = JSON.parse(JSON.stringify(s.style));
      if (tag === "B") {
        if (c.style.marker) { c.style.marker.opacity = 0.6; if (s.cause === 0) c.style.marker.color = "#1f77b4"; if (s.cause > 0) c.style.marker.symbol = "triangle-down"; }
        if (c.style.line) c.style.line.dash = "dash";
      }
      return c;
    });
    function set(x, y) {
      a.value = x; b.value = y;
      const fa = byId[x], fb = byId[y];
      plot.series = [...seriesOf(fa, "A"), ...seriesOf(fb, "B")];
      plot.full = P.fullRange([fa, fb]);
      plot.flowOf = (s) => s.flow;
      diffs.replaceChildren(differences(fa, fb));
      return P.draw(plot);
    }
    G.compare = set;
    [a, b].forEach((s) => s.addEventListener("change", () => set(a.value, b.value)));
    const first = D.pairs[0] || { a: D.flows[0].id, b: (D.flows[1] || D.flows[0]).id };
    set(first.a, first.b);
  }
  function differences(fa, fb) {
    const rows = [];
    const add = (what, x, y, show) => rows.push([what, show ? show(x) : x, show ? show(y) : y]);
    const s = fa.summary, t = fb.summary;
    add("packets (data)", `${s.packets} (${s.data_packets})`, `${t.packets} (${t.data_packets})`);
    s.retransmissions.forEach((r, i) => add("retransmissions: " + (r[0] === "retransmission" ? "cause unknown" : r[0]), r[1], t.retransmissions[i][1]));
    add("spurious retransmissions", s.spurious, t.spurious);
    add("drops", s.drops, t.drops);
    add("recovery episodes", s.episodes, t.episodes);
    const times = (f) => f.episodes.map((e) => `${e.label}@${fmt(e.start, 0)}`).join(" ") || "none";
    add("episodes (cause@ms)", times(fa), times(fb));
    add("last byte acknowledged, ms", s.last_ack_ms, t.last_ack_ms, (v) => fmt(v));
    add("SRTT at the end, ms", s.srtt_ms, t.srtt_ms, (v) => fmt(v));
    const table = el("table", { class: "diff" }, el("tr", {}, el("th", { text: "" }), el("th", { text: "A: " + fa.name }), el("th", { text: "B: " + fb.name })));
    rows.forEach(([w, x, y]) => table.append(el("tr", { class: String(x) === String(y) ? "same" : "differs" },
      el("td", { text: w }), el("td", { text: String(x) }), el("td", { text: String(y) }))));
    const n = rows.filter(([, x, y]) => String(x) !== String(y)).length;
    return el("div", {}, el("h4", { text: `Differences: ${n} of ${rows.length} rows differ` }), table);
  }

  // ---- flow tables of captures --------------------------------------------------
  const COLUMNS = [
    ["flow", (r) => r.id], ["server", (r) => r.server], ["client", (r) => r.client],
    ["packets", (r) => r.packets], ["data packets", (r) => r.data_packets],
    ["duration ms", (r) => r.duration_ms], ["SRTT ms", (r) => r.srtt_ms],
    ["retransmissions", (r) => Object.entries(r.retransmissions).filter(([k]) => k !== "spurious").reduce((a, [, v]) => a + v, 0)],
    ["fast", (r) => r.retransmissions.fast], ["early", (r) => r.retransmissions.early],
    ["timeout", (r) => r.retransmissions.timeout], ["slow start", (r) => r.retransmissions["slow-start"]],
    ["probe", (r) => r.retransmissions.probe], ["spurious", (r) => r.retransmissions.spurious],
    ["recoveries", (r) => r.recoveries.length],
    ["signatures", (r) => signatures(r)],
    ["response ms (median)", (r) => median(r.exchanges.map((e) => e.response_ms).filter((x) => x != null))],
  ];
  function signatures(r) {
    const s = [];
    if (r.tail_losses) s.push(`tail loss ×${r.tail_losses}`);
    if (r.lossy_bursts) s.push(`lossy bursts ×${r.lossy_bursts}`);
    if (r.reordering_events) s.push(`reordering ×${r.reordering_events}`);
    if (r.bufferbloat) s.push("bufferbloat");
    if (r.policed_kbps != null) s.push(`policed ${fmt(r.policed_kbps, 0)} kbit/s`);
    if (r.zero_windows) s.push(`zero window ×${r.zero_windows}`);
    if (r.capture_gaps) s.push(`capture gaps ×${r.capture_gaps}`);
    return s.join(", ");
  }
  function median(xs) {
    if (!xs.length) return null;
    xs.sort((a, b) => a - b);
    return xs[Math.floor(xs.length / 2)];
  }
  const ROWS = 2000; // rows of a flow table in the page at once
  function tablesTab(sec) {
    D.tables.forEach((t, ti) => {
      const drawn = new Map(t.drawn);
      const table = el("table", { class: "flows sortable", id: "flow-table-" + ti });
      const head = el("tr");
      let rows = t.flows.slice(), key = 7, desc = true;
      const note = el("p", { class: "meta" });
      COLUMNS.forEach(([name], ci) => head.append(el("th", { text: name, onclick: () => {
        desc = key === ci ? !desc : true; key = ci; fill();
      } })));
      function fill() {
        const get = COLUMNS[key][1];
        rows.sort((a, b) => {
          const x = get(a), y = get(b);
          const c = typeof x === "number" || typeof y === "number" ? (x ?? -1) - (y ?? -1) : String(x).localeCompare(String(y));
          return desc ? -c : c;
        });
        table.replaceChildren(head);
        head.querySelectorAll("th").forEach((th, i) => th.className = i === key ? (desc ? "desc" : "asc") : "");
        note.textContent = rows.length > ROWS ? `the first ${ROWS} of ${rows.length} rows in this order` : "";
        rows.slice(0, ROWS).forEach((r) => {
          const tr = el("tr", { class: drawn.has(r.id) ? "drawn" : "" });
          COLUMNS.forEach(([, get]) => {
            const v = get(r);
            tr.append(el("td", { text: v == null ? "–" : typeof v === "number" && !Number.isInteger(v) ? fmt(v) : String(v) }));
          });
          if (drawn.has(r.id)) tr.addEventListener("click", () => { showTab("flows"); G.selectFlow(drawn.get(r.id)); });
          table.append(tr);
        });
      }
      fill();
      sec.append(el("h3", { text: t.source }), el("p", { class: "meta",
        text: `${t.flows.length} flows; the ${drawn.size} with the most server retransmissions are drawn (click a row to see one). Click a column to sort.` }), note, table);
    });
  }

  // ---- results of run, reproduce and sweep ------------------------------------
  function resultsTab(sec) {
    D.results.forEach((r, i) => {
      const box = el("div", { class: "results" }, el("h3", { text: r.title }), el("p", { class: "meta", text: r.source }));
      sec.append(box);
      if (r.summary) box.append(summaryTable(r.summary));
      if (r.cdf.length) {
        const d = el("div", { class: "plot", id: "cdf-" + i });
        box.append(d);
        Plotly.newPlot(d, r.cdf.map(([name, xs]) => ({ type: "scatter", mode: "lines", name,
          x: xs, y: xs.map((_, k) => (k + 0.5) / xs.length) })), { title: { text: `CDF of ${r.summary ? r.summary.metric : "the metric"} time${r.records_cut ? " (first records)" : ""}` },
          xaxis: { type: "log", title: { text: "ms" } }, yaxis: { title: { text: "fraction of exchanges" } }, height: 360 }, P.CONFIG);
      }
      if (r.summary && r.summary.variants.some((v) => v.ci95)) {
        const d = el("div", { class: "plot", id: "ci-" + i });
        box.append(d);
        const stats = ["p25", "p50", "p90", "p99", "mean"];
        Plotly.newPlot(d, r.summary.variants.filter((v) => v.ci95).map((v) => ({ type: "scatter", mode: "markers", name: v.name,
          x: stats, y: stats.map((s) => v.delta_ms[s]),
          error_y: { type: "data", symmetric: false, array: stats.map((s) => v.ci95.delta_ms[s].hi - v.delta_ms[s]),
            arrayminus: stats.map((s) => v.delta_ms[s] - v.ci95.delta_ms[s].lo) } })),
          { title: { text: "Difference from the baseline, ms, with its 95% confidence interval" }, height: 320 }, P.CONFIG);
      }
      r.texts.forEach(([n, t]) => box.append(el("h4", { text: n }), el("pre", { text: t })));
      r.figures.forEach(([n, svg]) => { const f = el("figure", {}, el("figcaption", { text: n })); const d = el("div"); d.innerHTML = svg; f.append(d); box.append(f); });
      if (r.points.length) box.append(pointsTable(r.points));
    });
  }
  function summaryTable(s) {
    const t = el("table", { class: "summary" });
    t.append(el("tr", {}, ...["variant", "exchanges", "p25", "p50", "p90", "p99", "mean", "Δ mean ms [95% CI]", "fast", "timeouts", "slow start", "probes"].map((h) => el("th", { text: h }))));
    s.variants.forEach((v, i) => {
      const c = v.counters || {}, l = v.latency_ms || {};
      const ci = v.ci95 ? ` [${fmt(v.ci95.delta_ms.mean.lo)}, ${fmt(v.ci95.delta_ms.mean.hi)}]` : "";
      t.append(el("tr", {}, ...[v.name, v.exchanges, fmt(l.p25), fmt(l.p50), fmt(l.p90), fmt(l.p99), fmt(l.mean),
        i === 0 ? "baseline" : v.delta_ms ? fmt(v.delta_ms.mean) + ci : "–", c.TCPFastRetrans, c.TCPTimeouts, c.TCPSlowStartRetrans, c.TCPLossProbes]
        .map((x) => el("td", { text: x == null ? "–" : String(x) }))));
    });
    return t;
  }
  // A sweep's results per point: the sweep's axes are the columns that are not
  // results.
  const RESULT = /^(ci95|counters|links|recovery|latency_ms|delta_ms|corrupt_bytes|exchanges|incomplete|samples|seed|sim_events|sim_packets|trials|with_loss|with_retransmission|timed_out_trials|point|variant)(\.|$)/;
  function pointsTable(points) {
    const flat = points.map((p) => flatten(p, ""));
    const all = [...new Set(flat.flatMap((r) => Object.keys(r)))];
    const axes = all.filter((c) => !RESULT.test(c));
    const first = ["point", ...axes, "variant"].filter((c) => all.includes(c));
    const lat = all.filter((c) => /^(latency_ms|delta_ms)\./.test(c));
    const rest = all.filter((c) => !first.includes(c) && !lat.includes(c));
    const cols = [...first, ...lat, ...rest.filter((c) => !c.startsWith("ci95")), ...rest.filter((c) => c.startsWith("ci95"))];
    const t = el("table", { class: "points" }, el("tr", {}, ...cols.map((c) => el("th", { text: c }))));
    flat.slice(0, 1000).forEach((r) => t.append(el("tr", {}, ...cols.map((c) => {
      const v = r[c];
      return el("td", { text: v == null ? "" : typeof v === "number" && !Number.isInteger(v) ? fmt(v, 2) : String(v) });
    }))));
    const box = el("div", {}, el("h4", { text: `Sweep points (${points.length} rows${points.length > 1000 ? ", first 1000 shown" : ""})` }));
    if (lat.length) box.append(pointsChart(flat, axes, lat));
    box.append(el("div", { class: "scroll" }, t));
    return box;
  }
  // One line per variant: a chosen statistic at every point of the sweep.
  function pointsChart(flat, axes, stats) {
    const pick = el("select", { class: "stat" });
    stats.forEach((c) => pick.append(el("option", { value: c, text: c })));
    pick.value = stats.includes("latency_ms.p50") ? "latency_ms.p50" : stats[0];
    const d = el("div", { class: "plot sweep-chart" });
    const label = (r) => axes.map((a) => `${a}=${r[a]}`).join(" ") || String(r.point);
    const draw = () => {
      const variants = [...new Set(flat.map((r) => r.variant))];
      Plotly.react(d, variants.map((v) => {
        const rows = flat.filter((r) => r.variant === v);
        return { type: "scatter", mode: "lines+markers", name: String(v), x: rows.map(label), y: rows.map((r) => r[pick.value]) };
      }), { title: { text: pick.value + " at each point" }, height: 380, xaxis: { type: "category" }, margin: { b: 120 } }, P.CONFIG);
    };
    pick.addEventListener("change", draw);
    setTimeout(draw, 0);
    return el("div", {}, el("label", { text: "statistic: " }, pick), d);
  }
  function flatten(o, pre) {
    const out = {};
    Object.entries(o || {}).forEach(([k, v]) => {
      if (v && typeof v === "object" && !Array.isArray(v)) Object.assign(out, flatten(v, pre + k + "."));
      else out[pre + k] = v;
    });
    return out;
  }

  // ---- the page ------------------------------------------------------------------
  app.append(el("header", {}, el("h1", { text: "gentle view" }), el("p", { class: "meta", text: D.title })));
  if (D.flows.length) tab(`Flows (${D.flows.length})`, "flows", flowsTab);
  if (D.flows.length > 1) tab("Side by side", "compare", compareTab);
  if (D.tables.length) tab("Flow tables", "tables", tablesTab);
  if (D.results.length) tab(`Results (${D.results.length})`, "results", resultsTab);
  const nav = el("nav", {});
  tabs.forEach((t) => nav.append(el("button", { id: "tabbtn-" + t.id, class: "tabbtn", text: t.name, onclick: () => showTab(t.id) })));
  app.append(nav);
  if (D.flows.length) app.append(toolbar());
  tabs.forEach((t) => app.append(t.sec));
  G.showTab = showTab;
  const first = tabs.length ? showTab(tabs[0].id) : Promise.resolve();
  first.then(() => {
    G.timing.allDrawn = performance.now();
    G.ready = true;
    document.body.setAttribute("data-ready", "1");
  });
})();
