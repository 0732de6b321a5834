//! `gentle view`: its bad input refused before any work, and its pages opened in
//! headless Chromium (Debian's `chromium`, driven over the DevTools protocol) and
//! checked as a person would: no console error, the expected number of marks,
//! an episode's click zooming every graph to its retransmissions, a hover showing a
//! packet's tags, the flow table sorting, two flows side by side; and a
//! 100,000-packet trace opening in under two seconds.
//!
//! Without Chromium these tests fail, saying so, unless `GENTLE_SKIP_BROWSER=1`
//! asks to skip them knowingly. `GENTLE_VIEW_SCREENSHOTS=DIR` saves screenshots of
//! the main views into DIR (the README's come from there).

use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use headless_chrome::protocol::cdp::Page::CaptureScreenshotFormatOption;
use headless_chrome::protocol::cdp::types::Event;
use headless_chrome::{Browser, LaunchOptions, Tab, browser::tab::point::Point};
use serde_json::Value;

use crate::common::root;
use crate::common::scratch;

fn gentle(args: &[&str]) -> Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_gentle"))
        .args(args)
        .output()
        .expect("gentle runs")
}

fn ok(o: Output) -> Output {
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    o
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// The tlp-study's mobile network with five drops: one trial's trace, three
/// variants (a timeout, probes, early retransmits).
fn tlp_trace(dir: &Path) -> PathBuf {
    let t = dir.join("t.jsonl");
    let example = root().join("examples/tlp-study.toml");
    ok(gentle(&[
        "run",
        s(&example),
        "--point",
        "network=mobile,drops=5",
        "--trials",
        "1",
        "--trace",
        s(&t),
    ]));
    t
}

// ---- bad input --------------------------------------------------------------

#[test]
fn view_refuses_bad_input_before_any_work() {
    let dir = scratch("view-bad");
    let trace = tlp_trace(&dir);
    let out = dir.join("v.html");
    let junk = dir.join("junk.txt");
    std::fs::write(&junk, "hello\n").unwrap();
    let empty = dir.join("empty");
    std::fs::create_dir(&empty).unwrap();
    let missing = dir.join("missing.jsonl");
    for (args, names) in [
        (vec![s(&trace), s(&junk)], s(&junk)),
        (vec![s(&missing)], s(&missing)),
        (vec![s(&empty)], s(&empty)),
    ] {
        let mut a = vec!["view"];
        a.extend(&args);
        a.extend(["--out", s(&out)]);
        let o = gentle(&a);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(names), "{err}");
        assert!(!out.exists(), "nothing is written on bad input");
    }
    ok(gentle(&["view", s(&trace), "--out", s(&out)]));
    let o = gentle(&["view", s(&trace), "--out", s(&out)]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--force"));
    ok(gentle(&["view", s(&trace), "--out", s(&out), "--force"]));
    // One file, nothing fetched when it opens.
    let html = std::fs::read_to_string(&out).unwrap();
    assert!(
        !html.contains("<script src") && !html.contains("<link "),
        "self-contained"
    );
    assert!(html.contains("plotly.js v"));
}

/// The page's data, as embedded.
fn page_data(html: &Path) -> Value {
    let text = std::fs::read_to_string(html).unwrap();
    let start = text.find("id=\"gentle-data\">").unwrap() + "id=\"gentle-data\">".len();
    let end = start + text[start..].find("</script>").unwrap();
    serde_json::from_str(&text[start..end]).unwrap()
}

#[test]
fn view_reads_a_reproduction_of_several_experiments() {
    let dir = scratch("view-reproduce");
    let out = dir.join("results");
    ok(gentle(&[
        "reproduce",
        "demo-tail-loss",
        "tlp-study",
        "--quick",
        "--out",
        s(&out),
    ]));
    let html = dir.join("results.html");
    ok(gentle(&["view", s(&out), "--out", s(&html)]));
    let d = page_data(&html);
    let r = d["results"].as_array().unwrap();
    let titles: Vec<&str> = r.iter().map(|x| x["title"].as_str().unwrap()).collect();
    assert_eq!(titles, ["demo-tail-loss", "tlp-study"]);
    // Each experiment with its own files: the scenario's summary and CDF, the
    // program's table and figures.
    assert_eq!(r[0]["summary"]["scenario"], "demo-tail-loss");
    assert_eq!(r[0]["cdf"].as_array().unwrap().len(), 3);
    let figures = |x: &Value| -> Vec<String> {
        x["figures"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f[0].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(figures(&r[0]), ["demo-tail-loss-cdf.svg"]);
    assert_eq!(figures(&r[1]), ["tlp-study-fig4.svg", "tlp-study-fig5.svg"]);
    assert_eq!(r[1]["texts"][0][0], "tlp-study.txt");
    assert!(r[1]["summary"].is_null());
}

// ---- the browser ------------------------------------------------------------

/// One browser test at a time (each is timed, and Chromium wants the cores).
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// Headless Chromium (with the lock of [`ONE_AT_A_TIME`]), or `None` when
/// `GENTLE_SKIP_BROWSER` asks to skip; missing otherwise is a failure that says
/// what to install.
fn browser() -> Option<(std::sync::MutexGuard<'static, ()>, Browser)> {
    let path = std::env::var_os("GENTLE_CHROMIUM")
        .map(PathBuf::from)
        .or_else(|| {
            ["chromium", "chromium-browser", "google-chrome"]
                .iter()
                .find_map(|n| which(n))
        });
    let Some(path) = path else {
        if std::env::var_os("GENTLE_SKIP_BROWSER").is_some() {
            eprintln!("skipped (GENTLE_SKIP_BROWSER): no chromium on the PATH");
            return None;
        }
        panic!(
            "the browser tests of gentle view need Chromium: `apt-get install chromium` \
             (or GENTLE_CHROMIUM=PATH); GENTLE_SKIP_BROWSER=1 skips them"
        );
    };
    let args: Vec<&std::ffi::OsStr> = ["--allow-file-access-from-files", "--disable-gpu"]
        .iter()
        .map(std::ffi::OsStr::new)
        .collect();
    let opts = LaunchOptions {
        path: Some(path),
        headless: true,
        sandbox: false,
        window_size: Some((1400, 1000)),
        idle_browser_timeout: Duration::from_secs(300),
        args,
        ..LaunchOptions::default()
    };
    let lock = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    Some((lock, Browser::new(opts).expect("chromium starts")))
}

fn which(name: &str) -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|p| {
        std::env::split_paths(&p)
            .map(|d| d.join(name))
            .find(|f| f.is_file())
    })
}

/// An open page, with the console errors and exceptions it has shown.
struct Page {
    tab: Arc<Tab>,
    errors: Arc<Mutex<Vec<String>>>,
}

impl Page {
    fn open(b: &Browser, html: &Path) -> Page {
        let tab = b.new_tab().expect("a tab");
        tab.set_default_timeout(Duration::from_secs(60));
        let errors = Arc::new(Mutex::new(Vec::new()));
        let e = errors.clone();
        tab.add_event_listener(Arc::new(move |ev: &Event| {
            let msg = match ev {
                Event::RuntimeExceptionThrown(x) => Some(format!("{:?}", x.params.exception_details)),
                Event::RuntimeConsoleAPICalled(x)
                    if matches!(
                        x.params.Type,
                        headless_chrome::protocol::cdp::Runtime::ConsoleAPICalledEventTypeOption::Error
                    ) =>
                {
                    Some(format!("{:?}", x.params.args))
                }
                Event::LogEntryAdded(x)
                    if matches!(
                        x.params.entry.level,
                        headless_chrome::protocol::cdp::Log::LogEntryLevel::Error
                    ) =>
                {
                    Some(x.params.entry.text.clone())
                }
                _ => None,
            };
            if let Some(m) = msg {
                e.lock().unwrap().push(m);
            }
        }))
        .unwrap();
        tab.enable_runtime().unwrap();
        tab.enable_log().unwrap();
        let url = format!("file://{}", html.canonicalize().unwrap().display());
        tab.navigate_to(&url)
            .unwrap()
            .wait_until_navigated()
            .unwrap();
        let p = Page { tab, errors };
        p.wait("document.body.dataset.ready === '1'");
        p
    }

    /// The value of a JavaScript expression (promises awaited).
    fn eval(&self, js: &str) -> Value {
        let wrapped = format!("(async () => JSON.stringify(await (async () => {{ {js} }})()))()");
        let r = self
            .tab
            .evaluate(&wrapped, true)
            .unwrap_or_else(|e| panic!("{js}: {e}"));
        match r.value {
            Some(Value::String(s)) => serde_json::from_str(&s).unwrap_or(Value::Null),
            _ => Value::Null,
        }
    }

    fn wait(&self, cond: &str) {
        let start = Instant::now();
        while self.eval(&format!("return !!({cond});")) != Value::Bool(true) {
            assert!(
                start.elapsed() < Duration::from_secs(60),
                "waited for {cond}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// A mouse wheel turned by `delta_y` over the point (x, y) of the viewport.
    fn wheel(&self, x: f64, y: f64, delta_y: f64) {
        self.tab
            .call_method(headless_chrome::protocol::cdp::Input::DispatchMouseEvent {
                Type:
                    headless_chrome::protocol::cdp::Input::DispatchMouseEventTypeOption::MouseWheel,
                x,
                y,
                delta_x: Some(0.0),
                delta_y: Some(delta_y),
                modifiers: None,
                timestamp: None,
                button: None,
                buttons: None,
                click_count: None,
                force: None,
                tangential_pressure: None,
                tilt_x: None,
                tilt_y: None,
                twist: None,
                pointer_Type: None,
            })
            .unwrap();
    }

    fn no_errors(&self) {
        let e = self.errors.lock().unwrap();
        assert!(e.is_empty(), "console errors: {e:?}");
    }

    fn screenshot(&self, name: &str) {
        let Some(dir) = std::env::var_os("GENTLE_VIEW_SCREENSHOTS") else {
            return;
        };
        let png = self
            .tab
            .capture_screenshot(CaptureScreenshotFormatOption::Png, None, None, true)
            .unwrap();
        std::fs::write(Path::new(&dir).join(name), png).unwrap();
    }

    /// Marks drawn per trace of a graph, name → count, read from the SVG: a
    /// marker is a point's path; a bar or a line piece is a subpath of the
    /// trace's line (tcptrace's bars are one path with gaps).
    fn marks(&self, plot: &str) -> Vec<(String, u64)> {
        let v = self.eval(&format!(
            "const gd = document.getElementById('{plot}');
             const layers = gd.querySelectorAll('.scatterlayer .trace');
             return gd._fullData.map((t, i) => {{
                 const l = layers[i];
                 if (!l) return [t.name, 0];
                 if (t.mode.includes('markers')) return [t.name, l.querySelectorAll('.points path').length];
                 const d = Array.from(l.querySelectorAll('path.js-line')).map((p) => p.getAttribute('d')).join('');
                 return [t.name, (d.match(/M/g) || []).length];
             }});"
        ));
        v.as_array()
            .unwrap()
            .iter()
            .map(|x| (x[0].as_str().unwrap().to_string(), x[1].as_u64().unwrap()))
            .collect()
    }

    /// Moves the mouse onto point `k` of the trace named `trace` in `plot`, as a
    /// person would, and returns the tooltip's text.
    fn hover(&self, plot: &str, trace: &str, k: usize) -> String {
        let xy = self.eval(&format!(
            "const gd = document.getElementById('{plot}');
             const i = gd._fullData.findIndex((t) => t.name === '{trace}');
             const L = gd._fullLayout, r = gd.getBoundingClientRect();
             const x = gd.data[i].x[{k}], y = gd.data[i].y[{k}];
             return [r.left + L._size.l + L.xaxis.l2p(x), r.top + L._size.t + L.yaxis.l2p(y)];"
        ));
        let (x, y) = (xy[0].as_f64().unwrap(), xy[1].as_f64().unwrap());
        self.tab
            .move_mouse_to_point(Point { x: x - 3.0, y })
            .unwrap();
        self.tab.move_mouse_to_point(Point { x, y }).unwrap();
        self.wait("document.getElementById('tip') && !document.getElementById('tip').hidden");
        self.eval("return document.getElementById('tip').textContent;")
            .as_str()
            .unwrap()
            .to_string()
    }
}

/// What the trace itself says of variant `v`'s data sender: retransmissions by
/// cause (engine events) and original data segments.
fn trace_counts(trace: &Path, variant: &str) -> (Vec<(String, u64)>, u64) {
    let text = std::fs::read_to_string(trace).unwrap();
    let mut by: Vec<(String, u64)> = Vec::new();
    let mut sent: std::collections::HashMap<String, u64> = Default::default();
    for l in text.lines() {
        let v: Value = serde_json::from_str(l).unwrap();
        if v["variant"] != variant {
            continue;
        }
        if v["event"] == "retransmit" {
            let k = v["kind"].as_str().unwrap().to_string();
            match by.iter_mut().find(|x| x.0 == k) {
                Some(x) => x.1 += 1,
                None => by.push((k, 1)),
            }
        }
        if v["what"] == "send" && v["packet"]["len"].as_u64().unwrap_or(0) > 0 {
            *sent
                .entry(v["node"].as_str().unwrap().to_string())
                .or_default() += 1;
        }
    }
    let total: u64 = sent.values().copied().max().unwrap_or(0);
    let retx: u64 = by.iter().map(|x| x.1).sum();
    (by, total - retx)
}

fn count(marks: &[(String, u64)], name: &str) -> u64 {
    marks.iter().filter(|m| m.0 == name).map(|m| m.1).sum()
}

#[test]
fn view_of_a_trace_in_the_browser() {
    let Some((_one, b)) = browser() else {
        return;
    };
    let dir = scratch("view-trace");
    let trace = tlp_trace(&dir);
    let html = dir.join("trace.html");
    ok(gentle(&["view", s(&trace), "--out", s(&html)]));
    let p = Page::open(&b, &html);
    assert_eq!(
        p.eval("return document.querySelectorAll('#flow-select option').length;"),
        3
    );
    // The first variant (plain): every segment and retransmission of the trace drawn.
    let id = p.eval("return gentleView.D.flows[0].id;");
    let id = id.as_str().unwrap();
    let tsg = format!("tsg-{id}");
    let marks = p.marks(&tsg);
    let (retx, originals) = trace_counts(&trace, "plain");
    assert!(!retx.is_empty());
    for (cause, n) in &retx {
        assert_eq!(
            count(&marks, &format!("retransmission: {cause}")),
            *n,
            "{marks:?}"
        );
    }
    assert_eq!(count(&marks, "original"), originals, "{marks:?}");
    assert_eq!(count(&marks, "ACK (snd.una)"), 1, "one line: {marks:?}");
    assert!(
        count(&marks, "dropped") >= 5,
        "the trace's drops: {marks:?}"
    );

    // A click on the first recovery episode zooms every graph to it, and its
    // retransmissions are in view.
    let ep = p.eval(
        "const e = gentleView.D.flows[0].episodes[0]; return [e.start, e.end, e.retransmissions];",
    );
    let (start, end) = (ep[0].as_f64().unwrap(), ep[1].as_f64().unwrap());
    p.tab
        .find_element(&format!("button.episode[data-flow='{id}'][data-i='0']"))
        .unwrap()
        .click()
        .unwrap();
    p.wait(&format!(
        "document.getElementById('{tsg}').layout.xaxis.range[0] < {start}"
    ));
    let ranges = p.eval(&format!(
        "return ['tsg', 'window', 'rtt', 'ca'].map((k) =>
             document.getElementById(k + '-{id}').layout.xaxis.range);"
    ));
    let r0 = ranges[0].clone();
    assert!(
        r0[0].as_f64().unwrap() < start && r0[1].as_f64().unwrap() > end,
        "{r0}"
    );
    for r in ranges.as_array().unwrap() {
        assert_eq!(r, &r0, "linked views: every graph shows the same range");
    }
    let inside = p.eval(&format!(
        "const gd = document.getElementById('{tsg}'), r = gd.layout.xaxis.range;
         return gd.data.filter((t) => t.name.startsWith('retransmission'))
             .reduce((n, t) => n + t.x.filter((x) => x >= r[0] && x <= r[1]).length, 0);"
    ));
    assert!(
        inside.as_u64().unwrap() >= ep[2].as_u64().unwrap(),
        "{inside} {ep}"
    );
    p.screenshot("view-trace-episode.png");

    // Hovering a retransmission shows its header and tags.
    let first = format!("retransmission: {}", retx[0].0);
    let text = p.hover(&tsg, &first, 0);
    assert!(text.contains(&format!("cause: {}", retx[0].0)), "{text}");
    assert!(text.contains("tags: retransmission"), "{text}");
    assert!(text.contains("seq") && text.contains("TS val"), "{text}");
    p.screenshot("view-trace-hover.png");
    p.no_errors();
}

#[test]
fn view_of_a_capture_in_the_browser() {
    let Some((_one, b)) = browser() else {
        return;
    };
    let dir = scratch("view-capture");
    let example = root().join("examples/analyze-frontend.toml");
    ok(gentle(&[
        "run",
        s(&example),
        "--trials",
        "1",
        "--pcap",
        "0",
        "--out",
        s(&dir),
    ]));
    let cap = dir.join("analyze-frontend-trial0-linux-3.10.pcap");
    let json = ok(gentle(&["analyze", s(&cap), "--json"]));
    let a: Value = serde_json::from_slice(&json.stdout).unwrap();
    let flows = a["flows"].as_array().unwrap();
    let html = dir.join("capture.html");
    ok(gentle(&["view", s(&cap), "--out", s(&html)]));
    let p = Page::open(&b, &html);
    // The busiest flow is drawn first: its data packets are its marks.
    let busiest = flows
        .iter()
        .filter(|f| f["data_packets"].as_u64().unwrap() > 0)
        .max_by_key(|f| {
            let r = &f["retransmissions"];
            let total: u64 = ["fast", "early", "timeout", "slow-start", "probe"]
                .iter()
                .map(|k| r[*k].as_u64().unwrap())
                .sum();
            (
                total,
                f["packets"].as_u64().unwrap(),
                std::cmp::Reverse(f["id"].as_u64().unwrap()),
            )
        })
        .unwrap();
    let id = p.eval("return gentleView.D.flows[0].id;");
    let marks = p.marks(&format!("tsg-{}", id.as_str().unwrap()));
    let data: u64 = marks
        .iter()
        .filter(|m| {
            ["original", "FIN"].contains(&m.0.as_str())
                || (m.0.starts_with("retransmission:") && !m.0.ends_with("(bar)"))
        })
        .map(|m| m.1)
        .sum();
    assert_eq!(data, busiest["data_packets"].as_u64().unwrap(), "{marks:?}");
    p.screenshot("view-capture.png");
    // The flow table lists every flow and sorts by a click on a column.
    p.tab
        .find_element("#tabbtn-tables")
        .unwrap()
        .click()
        .unwrap();
    let rows = p.eval("return document.querySelectorAll('#flow-table-0 tr').length - 1;");
    assert_eq!(rows.as_u64().unwrap(), flows.len() as u64);
    let col = "Array.from(document.querySelectorAll('#flow-table-0 tr')).slice(1)
               .map((tr) => Number(tr.children[3].textContent))";
    p.tab
        .find_element("#flow-table-0 th:nth-child(4)")
        .unwrap()
        .click()
        .unwrap();
    let packets = p.eval(&format!("return {col};"));
    let v: Vec<u64> = packets
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_u64().unwrap())
        .collect();
    let mut sorted = v.clone();
    sorted.sort_by(|a, b| b.cmp(a));
    assert_eq!(v, sorted, "sorted by packets, most first");
    p.screenshot("view-capture-table.png");
    // A drawn flow's row opens its graphs.
    p.tab
        .find_element("#flow-table-0 tr.drawn")
        .unwrap()
        .click()
        .unwrap();
    p.wait("!document.getElementById('tab-flows').hidden");
    p.no_errors();
}

#[test]
fn view_side_by_side_and_results_in_the_browser() {
    let Some((_one, b)) = browser() else {
        return;
    };
    let dir = scratch("view-side");
    let trace = tlp_trace(&dir);
    let run = dir.join("run");
    let example = root().join("examples/demo-tail-loss.toml");
    ok(gentle(&[
        "run",
        s(&example),
        "--trials",
        "200",
        "--out",
        s(&run),
    ]));
    let sweep = dir.join("sweep");
    let tlp = root().join("examples/tlp-study.toml");
    ok(gentle(&[
        "sweep",
        s(&tlp),
        "--out",
        s(&sweep),
        "--point",
        "network=mobile",
        "--trials",
        "5",
    ]));
    let html = dir.join("side.html");
    ok(gentle(&[
        "view",
        s(&run),
        s(&sweep),
        s(&trace),
        "--out",
        s(&html),
    ]));
    let p = Page::open(&b, &html);
    // Results: a CDF per variant, the differences with their intervals.
    p.tab
        .find_element("#tabbtn-results")
        .unwrap()
        .click()
        .unwrap();
    p.wait("document.querySelector('#cdf-0 .scatterlayer')");
    assert_eq!(p.marks("cdf-0").len(), 3);
    assert!(p.eval("return document.querySelectorAll('table.summary tr').length;") == 4);
    // The sweep: a line per variant over its 21 points, and a row per point and variant.
    p.wait("document.querySelector('.sweep-chart .scatterlayer')");
    let lines = p.eval(
        "return Array.from(document.querySelector('.sweep-chart').data).map((t) => t.x.length);",
    );
    assert_eq!(lines, serde_json::json!([21, 21, 21]));
    let rows = p.eval("return document.querySelectorAll('table.points tr').length - 1;");
    assert_eq!(rows, 63);
    p.screenshot("view-results.png");
    // Side by side: plain and TLP of the same trial on one graph, differences listed.
    p.tab
        .find_element("#tabbtn-compare")
        .unwrap()
        .click()
        .unwrap();
    p.wait("document.querySelector('#cmp-tsg .scatterlayer')");
    p.eval("document.querySelectorAll('button.pair')[1].click();");
    p.wait("document.querySelector('#cmp-b').selectedOptions[0].textContent.endsWith('TLP')");
    let names: Vec<String> = p.marks("cmp-tsg").into_iter().map(|m| m.0).collect();
    assert!(
        names.iter().any(|n| n.starts_with("A: retransmission")),
        "{names:?}"
    );
    assert!(
        names.iter().any(|n| n.starts_with("B: retransmission")),
        "{names:?}"
    );
    let differ = p.eval("return document.querySelectorAll('#cmp-diffs tr.differs').length;");
    assert!(differ.as_u64().unwrap() > 0);
    p.screenshot("view-side-by-side.png");
    // A wheel over one graph zooms it, and the flow graphs follow (linked views).
    let c = p.eval(
        "document.getElementById('cmp-tsg').scrollIntoView();
         const r = document.getElementById('cmp-tsg').getBoundingClientRect();
         return [r.left + r.width / 2, r.top + r.height / 2];",
    );
    let before = p.eval("return document.getElementById('cmp-tsg').layout.xaxis.range.slice();");
    p.wheel(c[0].as_f64().unwrap(), c[1].as_f64().unwrap(), -400.0);
    p.wait("gentleView.view.range !== null");
    let after = p.eval("return document.getElementById('cmp-tsg').layout.xaxis.range.slice();");
    let (w0, w1) = (
        before[1].as_f64().unwrap() - before[0].as_f64().unwrap(),
        after[1].as_f64().unwrap() - after[0].as_f64().unwrap(),
    );
    assert!(w1 < w0 * 0.97, "zoomed in: {before} → {after}");
    p.tab
        .find_element("#tabbtn-flows")
        .unwrap()
        .click()
        .unwrap();
    let id = p.eval("return gentleView.D.flows[0].id;");
    p.wait(&format!(
        "Math.abs(document.getElementById('tsg-{}').layout.xaxis.range[0] - gentleView.view.range[0]) < 1e-6",
        id.as_str().unwrap()
    ));
    p.no_errors();
}

/// One bulk transfer whose sender sees about 100,000 packets (data and ACKs),
/// with random losses to recover from.
const BULK: &str = r#"
name = "bulk-100k"
seed = 1
trials = 1
time_limit = "600s"

[[link]]
a = "server"
b = "client"
rate = "100Mbit/s"
delay = "10ms"
queue = "200pkt"
loss = { model = "bernoulli", p = 0.002 }

[[workload]]
name = "bulk"
kind = "bulk"
client = "client"
server = "server"
bytes = "96MB"

[[variant]]
name = "linux-6"
profile = "linux-6"
"#;

/// Timed, so not part of the suite (a wall-clock time depends on the machine's
/// load): run it alone on an idle machine, `cargo test --profile ci -p gentle --test
/// lab view_of_100k -- --ignored --nocapture`.
#[test]
#[ignore = "timed: run alone on an idle machine"]
fn view_of_100k_packets_opens_in_under_two_seconds() {
    let Some((_one, b)) = browser() else {
        return;
    };
    let dir = scratch("view-100k");
    let scn = dir.join("bulk.toml");
    std::fs::write(&scn, BULK).unwrap();
    let trace = dir.join("bulk.jsonl");
    ok(gentle(&["run", s(&scn), "--trace", s(&trace)]));
    let html = dir.join("bulk.html");
    ok(gentle(&["view", s(&trace), "--out", s(&html)]));
    // From navigation to the first graph drawn, as the page measured it: the best of
    // five loads at most (other tests may be busy on the same cores).
    let mut load = f64::INFINITY;
    let mut p = Page::open(&b, &html);
    for i in 0..5 {
        if i > 0 {
            p = Page::open(&b, &html);
        }
        let t = p
            .eval("return gentleView.timing.firstRender;")
            .as_f64()
            .unwrap();
        load = load.min(t);
        if load < 2000.0 {
            break;
        }
    }
    let n = p
        .eval("return gentleView.D.flows[0].pk.t.length;")
        .as_u64()
        .unwrap();
    assert!(n >= 100_000, "{n} packets");
    // A zoom into the middle, then back out to the whole flow.
    let zoom = p.eval(
        "const f = gentleView.D.flows[0], end = f.pk.t[f.pk.t.length - 1];
         let t = performance.now(); await gentleView.setRange([end * 0.4, end * 0.45]);
         const zin = performance.now() - t;
         t = performance.now(); await gentleView.setRange(null);
         return [zin, performance.now() - t];",
    );
    let (zin, zout) = (zoom[0].as_f64().unwrap(), zoom[1].as_f64().unwrap());
    eprintln!(
        "gentle view, {n} packets: opened (load to first render) in {load:.0} ms; \
         zoom in {zin:.0} ms, out {zout:.0} ms"
    );
    let marks: u64 = p
        .marks(&format!(
            "tsg-{}",
            p.eval("return gentleView.D.flows[0].id;").as_str().unwrap()
        ))
        .iter()
        .map(|m| m.1)
        .sum();
    assert!(marks < 30_000, "thinned to what the screen shows: {marks}");
    assert!(load < 2000.0, "opened in {load:.0} ms");
    assert!(
        zin < 1000.0 && zout < 1000.0,
        "zoom {zin:.0} ms, {zout:.0} ms"
    );
    p.no_errors();
}

#[test]
fn view_of_an_emulate_directory_sets_its_variants_side_by_side() {
    let Some((_one, b)) = browser() else {
        return;
    };
    let dir = scratch("view-emulate");
    let run = dir.join("run");
    let example = root().join("examples/tlp-study.toml");
    ok(gentle(&[
        "run",
        s(&example),
        "--point",
        "network=mobile,drops=5",
        "--trials",
        "1",
        "--pcap",
        "0",
        "--out",
        s(&run),
    ]));
    // The captures as `gentle emulate --out` names them: VARIANT-trialK-END.pcap
    // (taken in order of name).
    let emu = dir.join("emulate");
    std::fs::create_dir(&emu).unwrap();
    for v in ["plain", "TLP"] {
        std::fs::copy(
            run.join(format!("tlp-study_network_mobile_drops_5-trial0-{v}.pcap")),
            emu.join(format!("{v}-trial0-server.pcap")),
        )
        .unwrap();
    }
    let html = dir.join("emulate.html");
    ok(gentle(&["view", s(&emu), "--out", s(&html)]));
    let p = Page::open(&b, &html);
    p.tab
        .find_element("#tabbtn-compare")
        .unwrap()
        .click()
        .unwrap();
    p.wait("document.querySelector('#cmp-tsg .scatterlayer')");
    let pair = p.eval(
        "return [document.querySelector('#cmp-a').selectedOptions[0].textContent,
                 document.querySelector('#cmp-b').selectedOptions[0].textContent];",
    );
    assert_eq!(
        pair,
        serde_json::json!(["TLP-trial0-server", "plain-trial0-server"])
    );
    let marks = p.marks("cmp-tsg");
    assert!(
        count(&marks, "A: original") > 50 && count(&marks, "B: original") > 50,
        "{marks:?}"
    );
    assert!(count(&marks, "A: retransmission: probe") == 1, "{marks:?}");
    let differ = p.eval("return document.querySelectorAll('#cmp-diffs tr.differs').length;");
    assert!(differ.as_u64().unwrap() > 0);
    p.no_errors();
}
