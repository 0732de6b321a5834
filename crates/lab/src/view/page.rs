//! The page `gentle view` writes: one HTML file holding plotly.js (as the `plotly`
//! crate ships it, so that the page opens offline), the page's own script and style,
//! and the data as JSON (columns, not objects per packet).

use serde::Serialize;

use super::capture::Capture;
use super::dirs::Results;
use super::flow::FlowData;

const GRAPHS_JS: &str = include_str!("graphs.js");
const PAGE_JS: &str = include_str!("page.js");
const APP_CSS: &str = include_str!("app.css");

/// Two flows to set side by side.
#[derive(Debug, Serialize)]
pub struct Pair {
    pub title: String,
    pub a: String,
    pub b: String,
}

/// A capture's flow table.
#[derive(Serialize)]
pub struct Table<'a> {
    pub source: &'a str,
    pub flows: &'a [gentle_analyze::FlowReport],
    /// The ids of the flows drawn, by flow number.
    pub drawn: Vec<(u32, String)>,
}

/// Everything the page shows.
#[derive(Serialize)]
pub struct Data<'a> {
    pub title: String,
    pub causes: &'static [&'static str],
    pub flows: &'a [FlowData],
    pub tables: Vec<Table<'a>>,
    pub results: &'a [Results],
    pub pairs: &'a [Pair],
}

impl<'a> Data<'a> {
    pub fn tables(captures: &'a [Capture]) -> Vec<Table<'a>> {
        captures
            .iter()
            .map(|c| Table {
                source: &c.source,
                flows: &c.table,
                drawn: c
                    .flows
                    .iter()
                    .filter_map(|f| Some((f.number?, f.id.clone())))
                    .collect(),
            })
            .collect()
    }
}

/// plotly.js itself: the first script of what the crate embeds (the second is
/// MathJax, which the page does not use).
fn plotly_js() -> String {
    let all = plotly::Plot::offline_js_sources();
    let start = all.find('>').map_or(0, |i| i + 1);
    let end = all.find("</script>").unwrap_or(all.len());
    all[start..end].to_string()
}

fn escape_html(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// The page.
pub fn html(d: &Data) -> String {
    // `</` inside a script element would end it; `<\/` is the same JSON.
    let json = serde_json::to_string(d)
        .expect("the page's data serialises")
        .replace("</", "<\\/");
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <title>{title} — gentle view</title>\n<style>{APP_CSS}</style>\n\
         <script>{plotly}</script>\n</head>\n<body>\n<div id=\"app\"></div>\n\
         <script type=\"application/json\" id=\"gentle-data\">{json}</script>\n\
         <script>{GRAPHS_JS}</script>\n<script>{PAGE_JS}</script>\n</body>\n</html>\n",
        title = escape_html(&d.title),
        plotly = plotly_js(),
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn plotly_is_embedded_without_mathjax() {
        let js = super::plotly_js();
        assert!(js.contains("plotly.js v"), "{}", &js[..200]);
        assert!(js.len() > 1_000_000);
    }
}
