//! `gentle calibrate` on a Ray cluster. `python -m gentle calibrate` runs the
//! command here ([`calibrate_command`]) with a Python callable that runs a
//! candidate as a Ray task; the search hands it a generation's candidates at once,
//! each on a thread of its own that takes the GIL only to make the call (Ray's
//! `get` lets it go while it waits). A task runs [`calibrate_measure`]: the
//! candidate's trials on the worker's one CPU.

use std::path::PathBuf;

use gentle_lab::LabError;
use gentle_lab::calibrate::command::{Backend, CalibrateArgs, command_with};
use gentle_lab::calibrate::{Evaluator, Local};
use gentle_lab::scenario::calibrate::Calibratable;
use gentle_lab::scenario::targets::parse_targets;
use pyo3::prelude::*;

use super::{interruptible, rayon_pool, to_py};

/// Candidates through a Python callable `evaluate(values, trials, seed)`.
struct PyEvaluator {
    evaluate: Py<PyAny>,
}

impl Evaluator for PyEvaluator {
    fn measure(
        &self,
        values: &[f64],
        trials: u64,
        seed: u64,
    ) -> Result<Vec<Option<f64>>, LabError> {
        Python::attach(|py| {
            self.evaluate
                .call1(py, (values.to_vec(), trials, seed))
                .and_then(|r| r.extract::<Vec<Option<f64>>>(py))
                .map_err(|e| LabError::Run(format!("a candidate on Ray failed: {e}")))
        })
    }
    fn parallel(&self) -> bool {
        true
    }
}

/// `gentle calibrate` with its candidates run by `evaluate` on `concurrency`
/// threads (the cluster's CPUs); prints what the command prints and returns its
/// exit status.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
#[pyo3(signature = (scenario, targets, out, evaluate, concurrency, force=false, candidates=None, trials=None, seed=None, only=None, json=false))]
pub fn calibrate_command(
    py: Python<'_>,
    scenario: PathBuf,
    targets: PathBuf,
    out: PathBuf,
    evaluate: Py<PyAny>,
    concurrency: usize,
    force: bool,
    candidates: Option<u64>,
    trials: Option<u64>,
    seed: Option<u64>,
    only: Option<Vec<String>>,
    json: bool,
) -> PyResult<u8> {
    let args = CalibrateArgs {
        scenario,
        targets,
        out: Some(out),
        force,
        candidates,
        trials,
        seed,
        threads: None,
        json,
        backend: Backend::Ray,
        address: None,
        only: only.unwrap_or_default(),
    };
    let eval = PyEvaluator { evaluate };
    interruptible(py, || {
        command_with(args, Some((&eval as &dyn Evaluator, concurrency.max(1))))
    })
}

/// A Ray task: the statistics of one candidate of the calibration of `scenario`
/// (its path and text) against `targets` (likewise), `trials` trials from `seed`
/// on one thread.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
#[pyo3(signature = (scenario, text, targets, targets_text, values, trials, seed, only=None))]
pub fn calibrate_measure(
    py: Python<'_>,
    scenario: &str,
    text: &str,
    targets: &str,
    targets_text: &str,
    values: Vec<f64>,
    trials: u64,
    seed: u64,
    only: Option<Vec<String>>,
) -> PyResult<Vec<Option<f64>>> {
    let run = || -> Result<Vec<Option<f64>>, LabError> {
        let mut c = Calibratable::parse(scenario, text).map_err(LabError::Scenario)?;
        if let Some(only) = only.filter(|o| !o.is_empty()) {
            c.restrict(&only).map_err(LabError::Input)?;
        }
        let names = gentle_lab::calibrate::stats::counter_names();
        let t = parse_targets(targets, targets_text, &names).map_err(LabError::Scenario)?;
        let local = Local { c: &c, targets: &t };
        rayon_pool(1)?.install(|| local.measure(&values, trials, seed))
    };
    interruptible(py, run)?.map_err(|e| to_py(py, e))
}
