//! Sweeps as jobs (`gentle sweep`, `gentle.sweep` in Python): every point of a
//! scenario's [`[sweep]`](crate::scenario::Sweep) grid is an independent job, run
//! from the scenario text and the point's index alone, with the seed its
//! coordinates give it. A point's result therefore does not depend on where, when or
//! next to which others it ran: on this machine's cores ([`local`]) or as a task on a
//! Ray cluster (the Python package, which calls [`Job::run_points`] in its tasks).
//!
//! A point's result is a Parquet file of its records (one row per exchange, with the
//! point's coordinates) whose metadata holds the point's summary; the [`store`]
//! writes each file whole, resumes from those already written, and gathers the
//! summaries into one table at the end.

pub mod command;
pub mod local;
pub mod records;
pub mod store;

use serde::{Deserialize, Serialize};

use crate::LabError;
use crate::checks;
use crate::runner::{self, RunOptions};
use crate::scenario::{Scenario, Sweep};

/// Metadata key of a point file's summary (the `--json` document of the point,
/// without its wall-clock time).
pub const SUMMARY_KEY: &str = "gentle.summary";
/// Metadata key of the job's fingerprint, which `--resume` checks.
pub const JOB_KEY: &str = "gentle.job";

/// A task's work, at most, in multiples of the smallest (see [`Job::chunks`]).
pub const MAX_TASK_TARGETS: u64 = 60;

/// Everything a worker needs to run any point of a sweep: the scenario's text and
/// the flags that change what runs. It travels as JSON.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct JobSpec {
    /// Where the text came from, for errors (`examples/tlp-study.toml`, `<string>`).
    pub file: String,
    pub text: String,
    /// `--point`: only the matching points.
    pub point: Option<String>,
    /// `--seed`: the sweep's seed, from which the points derive theirs.
    pub seed: Option<u64>,
    /// `--trials`: every point's trial count.
    pub trials: Option<u64>,
    /// `--quick`: every point's `quick_trials`.
    pub quick: bool,
}

/// A sweep ready to run: the whole grid, and the points chosen.
pub struct Job {
    pub spec: JobSpec,
    pub sweep: Sweep,
    /// Indices into `sweep.points` of the points to run, in grid order.
    pub selected: Vec<usize>,
}

/// One point's result.
#[derive(Clone, Debug)]
pub struct PointOutput {
    /// The point's index in the grid.
    pub index: usize,
    /// Its records, as a Parquet file with the summary in its metadata.
    pub parquet: Vec<u8>,
    /// The summary: `gentle run --json`'s document of the point, with `point_index`
    /// and without `wall_seconds`.
    pub summary: serde_json::Value,
    /// Wall-clock seconds the point took (not part of the result).
    pub seconds: f64,
}

impl Job {
    /// Reads and checks the scenario and the flags; nothing runs yet.
    pub fn new(spec: JobSpec) -> Result<Job, LabError> {
        let mut sweep = Sweep::parse(&spec.file, &spec.text).map_err(LabError::Scenario)?;
        if let Some(seed) = spec.seed {
            if sweep.axes.is_empty() {
                for p in &mut sweep.points {
                    p.scenario.seed = seed;
                }
            } else {
                sweep.reseed(seed);
            }
        }
        let selected: Vec<usize> = match &spec.point {
            None => (0..sweep.points.len()).collect(),
            Some(s) => {
                let mut chosen = sweep.clone();
                chosen
                    .select(s)
                    .map_err(|e| LabError::Input(format!("--point: {e}")))?;
                (0..sweep.points.len())
                    .filter(|&i| {
                        chosen
                            .points
                            .iter()
                            .any(|p| p.coords == sweep.points[i].coords)
                    })
                    .collect()
            }
        };
        for axis in &sweep.axes {
            if axis.name == "point" || records::RECORD_COLUMNS.contains(&axis.name.as_str()) {
                return Err(LabError::Input(format!(
                    "the sweep's axis `{}` has the name of a column of the records table; \
                     give the axis another name",
                    axis.name
                )));
            }
        }
        let scns: Vec<Scenario> = selected
            .iter()
            .map(|&i| sweep.points[i].scenario.clone())
            .collect();
        let flags = checks::RunFlags {
            trials: spec.trials,
            seed: spec.seed,
            ..Default::default()
        };
        checks::run_args(&scns, &flags, spec.quick).map_err(LabError::Input)?;
        Ok(Job {
            spec,
            sweep,
            selected,
        })
    }

    /// The scenario of point `i` of the grid.
    pub fn scenario(&self, i: usize) -> &Scenario {
        &self.sweep.points[i].scenario
    }

    /// The trials point `i` runs (of every variant).
    pub fn trials(&self, i: usize) -> u64 {
        let s = self.scenario(i);
        self.spec.trials.unwrap_or(if self.spec.quick {
            s.quick_trials
        } else {
            s.trials
        })
    }

    /// Trial runs (trials × variants) of point `i`: its share of the work.
    pub fn work(&self, i: usize) -> u64 {
        self.trials(i) * self.scenario(i).variants.len() as u64
    }

    /// A fingerprint of what the job computes (FNV-1a over its spec), so that a
    /// resumed sweep adds only to results of the same job.
    pub fn fingerprint(&self) -> String {
        let spec = JobSpec {
            point: None, // the points chosen do not change any point's result
            ..self.spec.clone()
        };
        let text = serde_json::to_string(&spec).expect("serialisable");
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in text.bytes() {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
        format!("{h:016x}")
    }

    /// Runs point `i` of the grid on the current thread pool. An interruption
    /// (Ctrl-C) abandons it.
    pub fn run_point(&self, i: usize) -> Result<PointOutput, LabError> {
        let start = std::time::Instant::now();
        let scn = self.scenario(i);
        let trials = self.trials(i);
        let opts = RunOptions {
            trials,
            seed: scn.seed,
            keep_records: true,
            progress: false,
            observe: runner::Observe::default(),
        };
        let mut file = records::RecordsFile::new(scn, Some(i)).map_err(LabError::Run)?;
        let mut failed = None;
        let run = runner::run_streaming(scn, &opts, &mut |vi, recs| {
            if failed.is_none()
                && let Err(e) = file.push(scn, &scn.variants[vi].name, recs)
            {
                failed = Some(e);
            }
        });
        if crate::interrupt::requested() {
            return Err(LabError::Interrupted);
        }
        if let Some(e) = failed {
            return Err(LabError::Run(e));
        }
        if let Some(v) = run.variants.iter().find(|v| v.corrupt_bytes > 0) {
            return Err(LabError::Run(format!(
                "{}: variant {} delivered {} corrupted bytes",
                scn.name, v.name, v.corrupt_bytes
            )));
        }
        let summary = point_summary(scn, &run, trials, i);
        let parquet = file
            .finish(&[
                (SUMMARY_KEY, summary.to_string()),
                (JOB_KEY, self.fingerprint()),
            ])
            .map_err(LabError::Run)?;
        Ok(PointOutput {
            index: i,
            parquet,
            summary,
            seconds: start.elapsed().as_secs_f64(),
        })
    }

    /// Runs points `indices` one after another on a pool of `threads` threads (all
    /// cores without): a task's work, wherever it runs.
    pub fn run_points(
        &self,
        indices: &[usize],
        threads: Option<usize>,
    ) -> Result<Vec<PointOutput>, LabError> {
        if let Some(&bad) = indices.iter().find(|&&i| i >= self.sweep.points.len()) {
            return Err(LabError::Input(format!(
                "no point {bad}: the grid has {} points",
                self.sweep.points.len()
            )));
        }
        let work = || indices.iter().map(|&i| self.run_point(i)).collect();
        match threads {
            None => work(),
            Some(t) => rayon::ThreadPoolBuilder::new()
                .num_threads(t)
                .build()
                .map_err(|e| LabError::Run(format!("cannot start {t} threads: {e}")))?
                .install(work),
        }
    }

    /// Wall-clock seconds one trial run of point `i` takes on this thread pool,
    /// measured on up to `trials` trials of each of its variants (nothing is kept):
    /// what the Ray backend sizes its tasks by.
    pub fn calibrate(&self, i: usize, trials: u64) -> f64 {
        let scn = self.scenario(i);
        let n = trials.min(self.trials(i)).max(1);
        let opts = RunOptions {
            trials: n,
            seed: scn.seed,
            keep_records: false,
            progress: false,
            observe: runner::Observe::default(),
        };
        let start = std::time::Instant::now();
        runner::run(scn, &opts);
        start.elapsed().as_secs_f64() / (n * scn.variants.len() as u64) as f64
    }

    /// Cuts `pending` (grid indices, in order) into tasks of consecutive points (a
    /// point is never split). A task gets at least `target` trial runs, so that its
    /// fixed cost stays small beside its work; beyond that, the work is spread over
    /// `min_tasks` tasks (so every worker stays busy to the end), up to
    /// [`MAX_TASK_TARGETS`] times `target` a task (so an interrupted sweep loses little).
    /// The cuts fall where the running total of work crosses each task's equal share,
    /// so the tasks are about the same size and the last is not a small remainder
    /// (a sweep ends when its longest task does).
    pub fn chunks(&self, pending: &[usize], target: u64, min_tasks: usize) -> Vec<Vec<usize>> {
        let target = target.max(1);
        let total: u64 = pending.iter().map(|&i| self.work(i)).sum();
        let per_task = (total / min_tasks.max(1) as u64)
            .min(target.saturating_mul(MAX_TASK_TARGETS))
            .max(target);
        let tasks = (total / per_task).max(1);
        let mut out: Vec<Vec<usize>> = Vec::new();
        let mut cur = Vec::new();
        let (mut done, mut in_task) = (0u64, 0u64);
        for &i in pending {
            let w = self.work(i);
            cur.push(i);
            done += w;
            in_task += w;
            // Past the end of task k's share (k = tasks made + 1), and a target's work.
            let share_end = (out.len() as u128 + 1) * total as u128;
            if done as u128 * tasks as u128 >= share_end && in_task >= target {
                out.push(std::mem::take(&mut cur));
                in_task = 0;
            }
        }
        if !cur.is_empty() {
            out.push(cur);
        }
        out
    }
}

/// A point's summary: the `--json` document without its wall-clock time, which
/// would make equal results differ.
pub fn point_summary(
    scn: &Scenario,
    run: &runner::RunResult,
    trials: u64,
    index: usize,
) -> serde_json::Value {
    let mut j = crate::report::json(scn, run, trials, scn.seed);
    if let Some(o) = j.as_object_mut() {
        o.remove("wall_seconds");
        o.insert("point_index".into(), serde_json::json!(index));
    }
    j
}
