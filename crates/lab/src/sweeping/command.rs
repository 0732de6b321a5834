//! `gentle sweep FILE.toml --out DIR`: the local backend in this process, or the
//! Ray backend through the Python package (Ray is a Python system; the package's
//! `python -m gentle sweep` drives it with the same jobs and the same store).

use std::path::PathBuf;
use std::process::Command;

use super::store::Store;
use super::{Job, JobSpec, LabError, local};

/// Where the points run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    /// This machine's cores.
    Local,
    /// A Ray cluster: a new local one, or the one at --address.
    Ray,
}

/// The arguments of `gentle sweep`.
#[derive(Clone, Debug)]
pub struct SweepArgs {
    /// The scenario file; its [sweep] grid gives the points (a file without one is a
    /// single point).
    pub scenario: PathBuf,
    /// Where the results go: DIR/points.parquet and DIR/records/point-NNNNNN.parquet.
    pub out: PathBuf,
    /// Run only the matching points: `AXIS=VALUE[,AXIS=VALUE...]`.
    pub point: Option<String>,
    /// Trials of every point.
    pub trials: Option<u64>,
    /// The sweep's seed: each point derives its own from it and its coordinates
    /// (0 to 2^63 − 1, as in a scenario file).
    pub seed: Option<u64>,
    /// Every point's smaller trial count (`quick_trials`).
    pub quick: bool,
    /// Go on with the sweep in DIR: run only the points it does not hold yet.
    pub resume: bool,
    /// Replace the results of an earlier sweep in DIR.
    pub force: bool,
    /// Where the points run.
    pub backend: Backend,
    /// The Ray cluster's address (`ray start --head` prints it); without it a
    /// local Ray instance is started. Implies --backend ray.
    pub address: Option<String>,
    /// Worker threads of the local backend (default: all cores).
    pub threads: Option<usize>,
}

/// The job of `gentle sweep`'s arguments.
pub fn job(a: &SweepArgs) -> Result<Job, LabError> {
    let text = std::fs::read_to_string(&a.scenario)
        .map_err(|e| LabError::Input(format!("cannot read {}: {e}", a.scenario.display())))?;
    crate::checks::threads("--threads ", a.threads).map_err(LabError::Input)?;
    Job::new(JobSpec {
        file: a.scenario.display().to_string(),
        text,
        point: a.point.clone(),
        seed: a.seed,
        trials: a.trials,
        quick: a.quick,
    })
}

/// Runs `gentle sweep`; the exit status.
pub fn command(a: SweepArgs) -> u8 {
    let ray = a.backend == Backend::Ray || a.address.is_some();
    let job = match job(&a) {
        Ok(j) => j,
        Err(e) => {
            eprintln!("{e}");
            return e.exit_code();
        }
    };
    if ray {
        return through_python(&a);
    }
    crate::interrupt::install();
    let res = Store::open(&a.out, &job, a.resume, a.force)
        .and_then(|mut store| local::run(&job, &mut store, a.threads, true));
    match res {
        Ok(out) => {
            println!("{}", local::report(&job, &out, &a.out));
            0
        }
        Err(LabError::Interrupted) => {
            eprintln!(
                "interrupted: the finished points are in {}; `--resume` runs the rest",
                a.out.display()
            );
            crate::interrupt::EXIT_INTERRUPTED
        }
        Err(e) => {
            eprintln!("{e}");
            e.exit_code()
        }
    }
}

/// The Ray backend: `python3 -m gentle sweep ...` with the same arguments.
fn through_python(a: &SweepArgs) -> u8 {
    let mut args: Vec<String> = vec![
        a.scenario.display().to_string(),
        "--out".into(),
        a.out.display().to_string(),
        "--backend".into(),
        "ray".into(),
    ];
    if let Some(p) = &a.point {
        args.extend(["--point".into(), p.clone()]);
    }
    if let Some(t) = a.trials {
        args.extend(["--trials".into(), t.to_string()]);
    }
    if let Some(s) = a.seed {
        args.extend(["--seed".into(), s.to_string()]);
    }
    if let Some(addr) = &a.address {
        args.extend(["--address".into(), addr.clone()]);
    }
    for (on, flag) in [
        (a.quick, "--quick"),
        (a.resume, "--resume"),
        (a.force, "--force"),
    ] {
        if on {
            args.push(flag.into());
        }
    }
    python_command("sweep", &args)
}

/// Runs `python3 -m gentle COMMAND ARGS...` (the interpreter from `GENTLE_PYTHON`,
/// else `python3`), after checking that it can import gentle and Ray; the exit
/// status.
pub(crate) fn python_command(command: &str, args: &[String]) -> u8 {
    let python = std::env::var("GENTLE_PYTHON").unwrap_or_else(|_| "python3".into());
    let probe = Command::new(&python)
        .args(["-c", "import gentle, ray"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status();
    if !probe.is_ok_and(|s| s.success()) {
        eprintln!(
            "error: --backend ray runs through gentle's Python package and Ray, which \
             `{python}` cannot import: `pip install ./python ray` (see the README), or \
             name another interpreter in GENTLE_PYTHON"
        );
        return 2;
    }
    let mut cmd = Command::new(&python);
    cmd.args(["-m", "gentle", command]).args(args);
    match cmd.status() {
        Ok(s) => s.code().map_or(1, |c| c.clamp(0, 255) as u8),
        Err(e) => {
            eprintln!("error: cannot run {python}: {e}");
            1
        }
    }
}
