//! `gentle analyze` from Python: one capture's JSON document ([`analyze`]), and the
//! pieces of a many-capture run that the Ray backend spreads over a cluster: the
//! checks and the captures in path order ([`analyze_plan`], on the driver), each
//! capture's part of the tables ([`analyze_parts`], in a task), and the parts
//! gathered in path order into the same tables and report as `gentle analyze`
//! writes on one machine ([`AnalyzeGather`], on the driver).

use std::path::PathBuf;

use gentle_lab::LabError;
use gentle_lab::analyze::gather::{Gather, Part};
use gentle_lab::analyze::{Args, many};
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use super::{interruptible, to_py};

/// The analysis options of the keyword arguments `server`, `server_port`,
/// `client_side`.
fn options(
    py: Python<'_>,
    server: Option<String>,
    server_port: Option<u16>,
    client_side: bool,
) -> PyResult<gentle_analyze::Options> {
    let server = match server.map(|s| s.parse::<std::net::IpAddr>().map_err(|e| (s, e))) {
        None => None,
        Some(Ok(a)) => Some(a),
        Some(Err((s, e))) => {
            return Err(to_py(
                py,
                LabError::Input(format!("server={s:?}: not an IP address ({e})")),
            ));
        }
    };
    Ok(gentle_analyze::Options {
        server,
        server_port,
        point: if client_side {
            gentle_analyze::CapturePoint::Client
        } else {
            gentle_analyze::CapturePoint::Server
        },
        keep_retransmissions: false,
        no_fack: false,
    })
}

/// Analyses a capture: `gentle analyze --json`'s document.
#[pyfunction]
#[pyo3(signature = (path, server=None, server_port=None, client_side=false))]
pub fn analyze(
    py: Python<'_>,
    path: PathBuf,
    server: Option<String>,
    server_port: Option<u16>,
    client_side: bool,
) -> PyResult<String> {
    let opts = options(py, server, server_port, client_side)?;
    let doc =
        interruptible(py, || gentle_lab::api::analyze(&path, opts))?.map_err(|e| to_py(py, e))?;
    Ok(doc.to_string())
}

/// Checks a many-capture run as `gentle analyze CAPTURE|DIR... [--parquet DIR]`
/// does before any work; the captures, in path order.
#[pyfunction]
#[pyo3(signature = (paths, parquet=None, force=false, slow_ms=None))]
pub fn analyze_plan(
    py: Python<'_>,
    paths: Vec<PathBuf>,
    parquet: Option<PathBuf>,
    force: bool,
    slow_ms: Option<f64>,
) -> PyResult<Vec<String>> {
    let args = Args {
        captures: paths,
        opts: gentle_analyze::Options::default(),
        json: false,
        tags: None,
        targets: None,
        out: None,
        force,
        flows: 0,
        parquet,
        threads: None,
        slow_ms,
        ray: None,
    };
    let files = many::plan(&args).map_err(|e| to_py(py, e))?;
    Ok(files.iter().map(|f| f.display().to_string()).collect())
}

/// Analyses captures (a task's share, on one thread): each one's part, as bytes for
/// [`AnalyzeGather::add`]. `paths` are read, `names` (the paths the run was given)
/// name them in the rows.
#[pyfunction]
#[pyo3(signature = (paths, names, server=None, server_port=None, client_side=false))]
pub fn analyze_parts<'py>(
    py: Python<'py>,
    paths: Vec<PathBuf>,
    names: Vec<String>,
    server: Option<String>,
    server_port: Option<u16>,
    client_side: bool,
) -> PyResult<Vec<Bound<'py, PyBytes>>> {
    let opts = options(py, server, server_port, client_side)?;
    let parts = interruptible(py, || {
        paths
            .iter()
            .zip(&names)
            .map(|(p, n)| Part::of(p, n, &opts).and_then(Part::to_bytes))
            .collect::<Result<Vec<_>, LabError>>()
    })?
    .map_err(|e| to_py(py, e))?;
    Ok(parts.iter().map(|b| PyBytes::new(py, b)).collect())
}

/// The parts of a many-capture run, gathered in path order.
#[pyclass(module = "gentle._gentle")]
pub struct AnalyzeGather {
    gather: Option<Gather>,
}

#[pymethods]
impl AnalyzeGather {
    /// Gathers parts, and their tables if `tables` (for `--parquet`).
    #[new]
    fn new(py: Python<'_>, tables: bool) -> PyResult<Self> {
        let gather = Gather::new(tables).map_err(|e| to_py(py, e))?;
        Ok(AnalyzeGather {
            gather: Some(gather),
        })
    }

    /// Adds capture `path`'s part (from [`analyze_parts`]), the next in path order;
    /// the warning to print if it was skipped.
    fn add(&mut self, py: Python<'_>, path: PathBuf, part: &[u8]) -> PyResult<Option<String>> {
        let g = self
            .gather
            .as_mut()
            .ok_or_else(|| PyRuntimeError::new_err("the run is finished"))?;
        Part::from_bytes(part)
            .and_then(|p| g.add(&path, p))
            .map_err(|e| to_py(py, e))
    }

    /// Writes the tables into `parquet` (if gathered); the report of a run that took
    /// `seconds` on `ran_on` (with `json`, as the JSON document).
    #[pyo3(signature = (parquet, slow_ms, seconds, ran_on, json = false))]
    fn finish(
        &mut self,
        py: Python<'_>,
        parquet: Option<PathBuf>,
        slow_ms: Option<f64>,
        seconds: f64,
        ran_on: &str,
        json: bool,
    ) -> PyResult<String> {
        let g = self
            .gather
            .take()
            .ok_or_else(|| PyRuntimeError::new_err("the run is finished"))?;
        g.finish(parquet.as_deref(), slow_ms, seconds, ran_on, json)
            .map_err(|e| to_py(py, e))
    }
}
