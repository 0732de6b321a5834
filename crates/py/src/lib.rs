//! `gentle._gentle`: the Rust side of gentle's Python package. It calls the
//! `gentle` crate directly (no subprocess): runs release the GIL and run on a
//! thread of their own while the calling thread watches for Ctrl-C, which stops the
//! run between waves of trials and raises `KeyboardInterrupt`. Errors become the
//! package's exceptions with the command's message and exit status. The Python
//! modules in `python/gentle/` wrap these calls in the documented API.

mod analyze;
mod calibrate;

use std::path::PathBuf;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use gentle_lab::LabError;
use gentle_lab::sweeping::store::Store;
use gentle_lab::sweeping::{Job, JobSpec, PointOutput, local};
use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyKeyboardInterrupt, PyRuntimeError};
use pyo3::prelude::*;
use pyo3::types::PyBytes;

/// Trials build and drop many small objects: mimalloc serves them faster than the
/// system allocator (as in the `gentle` command). Only Rust's allocations use it;
/// what Python receives is copied into Python's own objects.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

create_exception!(
    _gentle,
    GentleError,
    PyException,
    "A gentle error; `exit_code` is the status the command exits with."
);
create_exception!(
    _gentle,
    ScenarioError,
    GentleError,
    "A scenario that does not read: `file`, `line`, `column` say where (exit status 2)."
);
create_exception!(
    _gentle,
    InputError,
    GentleError,
    "Bad input other than a scenario's text: an argument, a file, a directory (exit status 2)."
);
create_exception!(
    _gentle,
    RunError,
    GentleError,
    "A run that went wrong, or results that could not be written (exit status 1)."
);

/// A message of the command line's, in the words of the Python API: its flags
/// become the keyword arguments of the same names.
fn python_words(m: &str) -> String {
    const FLAGS: [(&str, &str); 8] = [
        ("--trials ", "trials="),
        ("--seed ", "seed="),
        ("--threads ", "threads="),
        ("--point:", "point:"),
        ("--point ", "point="),
        ("--resume", "resume=True"),
        ("--force", "force=True"),
        ("--quick", "quick=True"),
    ];
    let mut out = m.to_string();
    for (flag, arg) in FLAGS {
        out = out.replace(flag, arg);
    }
    out
}

/// The Python exception of a job error.
fn to_py(py: Python<'_>, e: LabError) -> PyErr {
    let code = e.exit_code();
    let err = match &e {
        LabError::Scenario(s) => {
            let err = ScenarioError::new_err(s.to_string());
            let v = err.value(py);
            let _ = v.setattr("file", s.file.clone());
            let _ = v.setattr("line", s.line);
            let _ = v.setattr("column", s.column);
            let _ = v.setattr("message", s.message.clone());
            err
        }
        LabError::Input(m) => InputError::new_err(python_words(m)),
        LabError::Run(m) => RunError::new_err(python_words(m)),
        LabError::Interrupted => return PyKeyboardInterrupt::new_err("interrupted"),
    };
    let _ = err.value(py).setattr("exit_code", code);
    err
}

/// How often a run's caller looks for Ctrl-C: soon enough to feel immediate.
const SIGNAL_POLL: Duration = Duration::from_millis(20);

/// Runs `f` on a thread of its own without the GIL; on Ctrl-C (a pending Python
/// signal) asks gentle to stop, waits for it, and raises the signal's exception.
fn interruptible<T: Send>(py: Python<'_>, f: impl FnOnce() -> T + Send) -> PyResult<T> {
    gentle_lab::interrupt::reset();
    let mut signal: Option<PyErr> = None;
    let joined = py.detach(|| {
        std::thread::scope(|s| {
            // The run says when it ends (or its sender drops, if it panics): the
            // call returns at once instead of at the next look for signals.
            let (done, ended) = mpsc::channel::<()>();
            let h = s.spawn(move || {
                let out = f();
                let _ = done.send(());
                out
            });
            while let Err(RecvTimeoutError::Timeout) = ended.recv_timeout(SIGNAL_POLL) {
                if signal.is_none()
                    && let Err(e) = Python::attach(|py| py.check_signals())
                {
                    gentle_lab::interrupt::request();
                    signal = Some(e);
                }
            }
            h.join()
        })
    });
    gentle_lab::interrupt::reset();
    if let Some(e) = signal {
        return Err(e);
    }
    joined.map_err(|_| PyRuntimeError::new_err("gentle panicked (a bug: please report it)"))
}

/// Runs `f` on `threads` threads (all cores without).
fn on_threads<T: Send>(
    threads: Option<usize>,
    f: impl FnOnce() -> Result<T, LabError> + Send,
) -> Result<T, LabError> {
    gentle_lab::checks::threads("threads=", threads).map_err(LabError::Input)?;
    match threads {
        None => f(),
        Some(t) => rayon_pool(t)?.install(f),
    }
}

fn rayon_pool(t: usize) -> Result<rayon::ThreadPool, LabError> {
    rayon::ThreadPoolBuilder::new()
        .num_threads(t)
        .build()
        .map_err(|e| LabError::Run(format!("cannot start {t} threads: {e}")))
}

/// A scenario's TOML text from a dict of the file's keys (as JSON text).
#[pyfunction]
fn dict_to_toml(py: Python<'_>, json: &str) -> PyResult<String> {
    let v: serde_json::Value = serde_json::from_str(json)
        .map_err(|e| to_py(py, LabError::Input(format!("scenario dict: {e}"))))?;
    if !v.is_object() {
        return Err(to_py(
            py,
            LabError::Input("a scenario dict must be a mapping of the file's keys".into()),
        ));
    }
    toml::to_string(&v).map_err(|e| {
        to_py(
            py,
            LabError::Input(format!("the scenario dict has no TOML form: {e}")),
        )
    })
}

fn spec(
    file: String,
    text: String,
    point: Option<String>,
    seed: Option<u64>,
    trials: Option<u64>,
    quick: bool,
) -> JobSpec {
    JobSpec {
        file,
        text,
        point,
        seed,
        trials,
        quick,
    }
}

/// Runs a scenario: (summary JSON, records as Parquet bytes or None, report text).
#[pyfunction]
#[pyo3(signature = (text, file, point=None, seed=None, trials=None, quick=false, threads=None, records=true, out=None, force=false))]
#[allow(clippy::too_many_arguments)]
fn run<'py>(
    py: Python<'py>,
    text: String,
    file: String,
    point: Option<String>,
    seed: Option<u64>,
    trials: Option<u64>,
    quick: bool,
    threads: Option<usize>,
    records: bool,
    out: Option<PathBuf>,
    force: bool,
) -> PyResult<(String, Option<Bound<'py, PyBytes>>, String)> {
    let s = spec(file, text, point, seed, trials, quick);
    let r = interruptible(py, || {
        on_threads(threads, || {
            gentle_lab::api::run(s, records, out.as_deref().map(|d| (d, force)))
        })
    })?
    .map_err(|e| to_py(py, e))?;
    Ok((
        r.summary.to_string(),
        r.records.map(|b| PyBytes::new(py, &b)),
        r.text,
    ))
}

/// Runs a built-in experiment: (report text, JSON document).
#[pyfunction]
#[pyo3(signature = (name, quick=false, threads=None, out=None, force=false))]
fn reproduce(
    py: Python<'_>,
    name: String,
    quick: bool,
    threads: Option<usize>,
    out: Option<PathBuf>,
    force: bool,
) -> PyResult<(String, String)> {
    let (text, json) = interruptible(py, || {
        on_threads(threads, || {
            gentle_lab::api::reproduce(&name, quick, out.as_deref().map(|d| (d, force)))
        })
    })?
    .map_err(|e| to_py(py, e))?;
    Ok((text, json.to_string()))
}

/// The built-in experiments: (name, summary, kind) in `reproduce --list` order.
#[pyfunction]
fn experiments() -> Vec<(String, String, String)> {
    gentle_lab::api::experiments()
        .into_iter()
        .map(|e| (e.name.into(), e.summary.into(), e.kind.into()))
        .collect()
}

/// A built-in scenario's (file, text), if `name` is one.
#[pyfunction]
fn builtin_scenario(name: &str) -> Option<(String, String)> {
    gentle_lab::api::builtin_scenario(name).map(|(f, t)| (f, t.to_string()))
}

/// A sweep: its points, where its results go, and the calls that run it locally or
/// hand its points to other workers (the Ray backend).
#[pyclass(module = "gentle._gentle")]
struct SweepJob {
    job: Job,
    store: Option<Store>,
    out: Option<PathBuf>,
}

impl SweepJob {
    fn store(&mut self) -> PyResult<&mut Store> {
        self.store
            .as_mut()
            .ok_or_else(|| PyRuntimeError::new_err("open() the sweep's directory first"))
    }
}

#[pymethods]
impl SweepJob {
    #[new]
    #[pyo3(signature = (text, file, point=None, seed=None, trials=None, quick=false))]
    fn new(
        py: Python<'_>,
        text: String,
        file: String,
        point: Option<String>,
        seed: Option<u64>,
        trials: Option<u64>,
        quick: bool,
    ) -> PyResult<SweepJob> {
        let job =
            Job::new(spec(file, text, point, seed, trials, quick)).map_err(|e| to_py(py, e))?;
        Ok(SweepJob {
            job,
            store: None,
            out: None,
        })
    }

    /// What a worker needs to run any point (JSON).
    fn spec(&self) -> String {
        serde_json::to_string(&self.job.spec).expect("serialisable")
    }

    /// The scenario's name.
    #[getter]
    fn name(&self) -> String {
        self.job.sweep.name.clone()
    }

    /// The axes' names.
    #[getter]
    fn axes(&self) -> Vec<String> {
        self.job.sweep.axes.iter().map(|a| a.name.clone()).collect()
    }

    /// The chosen points' grid indices.
    #[getter]
    fn selected(&self) -> Vec<usize> {
        self.job.selected.clone()
    }

    /// Point `i`'s coordinates.
    fn coords(&self, i: usize) -> Vec<(String, String)> {
        self.job
            .sweep
            .points
            .get(i)
            .map(|p| p.coords.clone())
            .unwrap_or_default()
    }

    /// Trial runs (trials × variants) of point `i`.
    fn work(&self, i: usize) -> u64 {
        self.job.work(i)
    }

    /// Opens the output directory (`resume` keeps the points it holds).
    #[pyo3(signature = (out, resume=false, force=false))]
    fn open(&mut self, py: Python<'_>, out: PathBuf, resume: bool, force: bool) -> PyResult<()> {
        let st = Store::open(&out, &self.job, resume, force).map_err(|e| to_py(py, e))?;
        self.store = Some(st);
        self.out = Some(out);
        Ok(())
    }

    /// The chosen points not written yet.
    fn pending(&mut self, py: Python<'_>) -> PyResult<Vec<usize>> {
        let job = &self.job;
        let st = self
            .store
            .as_ref()
            .ok_or_else(|| PyRuntimeError::new_err("open() the sweep's directory first"))?;
        let _ = py;
        Ok(st.pending(job))
    }

    /// Points written so far.
    fn done(&self) -> usize {
        self.store.as_ref().map_or(0, Store::done)
    }

    /// `pending` cut into tasks of about `target` trial runs, at least `min_tasks`.
    fn chunks(&self, pending: Vec<usize>, target: u64, min_tasks: usize) -> Vec<Vec<usize>> {
        self.job.chunks(&pending, target, min_tasks)
    }

    /// Seconds one trial run takes here, measured on up to `trials` trials of every
    /// variant of point `i` (a calibration: nothing is kept).
    fn calibrate(&self, py: Python<'_>, i: usize, trials: u64) -> PyResult<f64> {
        let job = &self.job;
        interruptible(py, || job.calibrate(i, trials))
    }

    /// Writes a point file made by `run_points` (anywhere) into the directory.
    fn commit(&mut self, py: Python<'_>, index: usize, data: &[u8]) -> PyResult<()> {
        let out = PointOutput {
            index,
            parquet: data.to_vec(),
            summary: serde_json::Value::Null,
            seconds: 0.0,
        };
        self.store()?.commit(&out).map_err(|e| to_py(py, e))
    }

    /// Runs the pending points here (the local backend); returns the report.
    #[pyo3(signature = (threads=None, progress=true))]
    fn run_local(
        &mut self,
        py: Python<'_>,
        threads: Option<usize>,
        progress: bool,
    ) -> PyResult<String> {
        let job = &self.job;
        let out_dir = self.out.clone().unwrap_or_default();
        let st = self
            .store
            .as_mut()
            .ok_or_else(|| PyRuntimeError::new_err("open() the sweep's directory first"))?;
        let res = interruptible(py, || local::run(job, st, threads, progress))?;
        let outcome = res.map_err(|e| to_py(py, e))?;
        Ok(local::report(job, &outcome, &out_dir))
    }

    /// Once every point is written: the summary table; returns the report of a
    /// sweep that took `seconds` and ran `ran` points now.
    fn finish(&mut self, py: Python<'_>, ran: usize, seconds: f64) -> PyResult<String> {
        let job = &self.job;
        let out_dir = self.out.clone().unwrap_or_default();
        let st = self
            .store
            .as_mut()
            .ok_or_else(|| PyRuntimeError::new_err("open() the sweep's directory first"))?;
        let summaries = st.finish(job).map_err(|e| to_py(py, e))?;
        let outcome = local::Outcome {
            summaries,
            ran,
            kept: st.done().saturating_sub(ran),
            rows: st.rows(),
            seconds,
        };
        Ok(local::report(job, &outcome, &out_dir))
    }
}

/// The sweep a worker process ran last, by its spec's text. Reading a sweep builds
/// every point's scenario (2 ms for the 63 points of the TLP study), which
/// a worker then does once per sweep instead of once per task.
static WORKER_JOB: Mutex<Option<(String, Arc<Job>)>> = Mutex::new(None);

fn worker_job(spec: &str) -> Result<Arc<Job>, LabError> {
    let mut last = WORKER_JOB.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((text, job)) = last.as_ref()
        && text == spec
    {
        return Ok(job.clone());
    }
    let parsed: JobSpec =
        serde_json::from_str(spec).map_err(|e| LabError::Input(format!("a sweep's spec: {e}")))?;
    let job = Arc::new(Job::new(parsed)?);
    *last = Some((spec.to_string(), job.clone()));
    Ok(job)
}

/// Runs points of a sweep (a worker's task): [(index, Parquet bytes, seconds)].
#[pyfunction]
#[pyo3(signature = (spec, indices, threads=None))]
fn run_points<'py>(
    py: Python<'py>,
    spec: &str,
    indices: Vec<usize>,
    threads: Option<usize>,
) -> PyResult<Vec<(usize, Bound<'py, PyBytes>, f64)>> {
    let outs = interruptible(py, || {
        worker_job(spec).and_then(|job| job.run_points(&indices, threads))
    })?
    .map_err(|e| to_py(py, e))?;
    Ok(outs
        .into_iter()
        .map(|o| (o.index, PyBytes::new(py, &o.parquet), o.seconds))
        .collect())
}

#[pymodule]
fn _gentle(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("GentleError", py.get_type::<GentleError>())?;
    m.add("ScenarioError", py.get_type::<ScenarioError>())?;
    m.add("InputError", py.get_type::<InputError>())?;
    m.add("RunError", py.get_type::<RunError>())?;
    m.add_class::<SweepJob>()?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(reproduce, m)?)?;
    m.add_function(wrap_pyfunction!(experiments, m)?)?;
    m.add_function(wrap_pyfunction!(builtin_scenario, m)?)?;
    m.add_function(wrap_pyfunction!(analyze::analyze, m)?)?;
    m.add_function(wrap_pyfunction!(analyze::analyze_plan, m)?)?;
    m.add_function(wrap_pyfunction!(analyze::analyze_parts, m)?)?;
    m.add_class::<analyze::AnalyzeGather>()?;
    m.add_function(wrap_pyfunction!(dict_to_toml, m)?)?;
    m.add_function(wrap_pyfunction!(run_points, m)?)?;
    m.add_function(wrap_pyfunction!(calibrate::calibrate_command, m)?)?;
    m.add_function(wrap_pyfunction!(calibrate::calibrate_measure, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
