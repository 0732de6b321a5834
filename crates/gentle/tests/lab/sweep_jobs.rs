//! Sweeps as jobs (`gentle_lab::sweeping`): a point's file is a pure function of the
//! scenario and the point, on any thread pool; tasks cover the pending points once,
//! in order, with the work the Ray backend asks of each; the store writes files
//! whole, resumes only the same job, and gathers the summaries.

use crate::common;

use gentle_lab::LabError;
use gentle_lab::sweeping::store::Store;
use gentle_lab::sweeping::{Job, JobSpec, SUMMARY_KEY};
use gentle_lab::table;

const SWEEP: &str = r#"
name = "jobs"
seed = 3
trials = 30
[[link]]
a = "server"
b = "client"
rate = "10Mbit/s"
delay = "20ms"
a_to_b = { loss = { model = "tail-drop" } }
[[workload]]
client = "client"
server = "server"
request = "100B"
response = "14480B"
[[variant]]
name = "tlp"
profile = "linux-3.10"
[[variant]]
name = "plain"
profile = "plain"
[sweep.drops]
link.a_to_b.loss.n = [0, 1, 2, 3, 4]
[sweep.rtt]
link.delay = ["5ms", "50ms"]
"#;

fn job(point: Option<&str>) -> Job {
    Job::new(JobSpec {
        file: "jobs.toml".into(),
        text: SWEEP.into(),
        point: point.map(str::to_string),
        ..Default::default()
    })
    .expect("a valid sweep")
}

#[test]
fn a_points_file_does_not_depend_on_the_thread_pool_or_the_other_points() {
    let all = job(None);
    assert_eq!(all.selected, (0..10).collect::<Vec<_>>());
    let one = all.run_points(&[7], Some(1)).unwrap().remove(0);
    let two = all.run_points(&[7], Some(2)).unwrap().remove(0);
    assert_eq!(one.parquet, two.parquet);
    let alone = job(Some("drops=3,rtt=50ms"));
    assert_eq!(alone.selected, vec![7]);
    assert_eq!(alone.run_point(7).unwrap().parquet, one.parquet);
    // The summary travels in the file, without the wall-clock time.
    let (s, rows) = table::read_metadata(one.parquet.clone(), SUMMARY_KEY).unwrap();
    let s: serde_json::Value = serde_json::from_str(&s.unwrap()).unwrap();
    assert_eq!(s, one.summary);
    assert!(s.get("wall_seconds").is_none());
    assert_eq!(s["point_index"], 7);
    assert_eq!(s["point"]["drops"], "3");
    // One exchange per trial and variant.
    assert_eq!(rows, 30 * 2);
}

#[test]
fn tasks_cover_the_pending_points_once_in_order() {
    let j = job(None);
    let pending: Vec<usize> = (0..10).filter(|i| i % 3 != 0).collect();
    for (target, min_tasks) in [(1, 1), (60, 4), (61, 8), (1000, 2), (59, 100)] {
        let chunks = j.chunks(&pending, target, min_tasks);
        let flat: Vec<usize> = chunks.iter().flatten().copied().collect();
        assert_eq!(flat, pending, "target {target}, min_tasks {min_tasks}");
        // Every task but the last has at least the target's work.
        for c in &chunks[..chunks.len() - 1] {
            let work: u64 = c.iter().map(|&i| j.work(i)).sum();
            assert!(work >= target, "{c:?}: {work} < {target}");
        }
    }
    // Each point is 60 trial runs: with many workers, a target of one point's work
    // makes a task per point; with one, a single task takes everything.
    assert_eq!(j.chunks(&pending, 60, 100).len(), pending.len());
    assert_eq!(j.chunks(&pending, 60, 1).len(), 1);
    // Spread over at least 3 tasks when the work allows.
    assert!(j.chunks(&pending, 1, 3).len() >= 3);
    // Equal shares: six equal points over three tasks are two each (cutting at the
    // first task's target alone would leave a short last task or too few tasks).
    let sizes = |c: Vec<Vec<usize>>| c.iter().map(Vec::len).collect::<Vec<_>>();
    assert_eq!(sizes(j.chunks(&pending, 100, 3)), [2, 2, 2]);
    assert_eq!(sizes(j.chunks(&pending, 130, 3)), [3, 3]);
    // Never more than 60 targets' work a task.
    let big = j.chunks(&pending, 1, 1);
    assert!(
        big.iter()
            .all(|c| c.iter().map(|&i| j.work(i)).sum::<u64>() <= 60 + 59)
    );
}

#[test]
fn the_store_writes_whole_files_and_resumes_only_the_same_job() {
    let scratch = common::scratch("sweep-jobs");
    // The store makes its directory.
    let dir = scratch.join("sweep");
    let j = job(None);
    let mut st = Store::open(&dir, &j, false, false).unwrap();
    for out in j.run_points(&[0, 1, 2], None).unwrap() {
        st.commit(&out).unwrap();
    }
    assert_eq!(st.pending(&j), (3..10).collect::<Vec<_>>());
    // A file cut short is removed on resume, and its point runs again.
    std::fs::write(dir.join("records/point-000003.tmp"), b"PAR1").unwrap();
    let mut st = Store::open(&dir, &j, true, false).unwrap();
    assert!(!dir.join("records/point-000003.tmp").exists());
    assert_eq!(st.done(), 3);
    for out in j.run_points(&st.pending(&j), None).unwrap() {
        st.commit(&out).unwrap();
    }
    let summaries = st.finish(&j).unwrap();
    assert_eq!(summaries.len(), 10);
    assert!(dir.join("points.parquet").exists());
    // Another seed is another job: no resume, and its results are not committed here.
    let other = Job::new(JobSpec {
        seed: Some(9),
        ..j.spec.clone()
    })
    .unwrap();
    assert!(matches!(
        Store::open(&dir, &other, true, false),
        Err(LabError::Input(m)) if m.contains("another sweep")
    ));
    let foreign = other.run_point(4).unwrap();
    assert!(matches!(st.commit(&foreign), Err(LabError::Run(m)) if m.contains("another sweep")));
    assert!(matches!(
        Store::open(&dir, &j, false, false),
        Err(LabError::Input(m)) if m.contains("not empty")
    ));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bad_sweeps_are_refused_before_anything_runs() {
    let bad = |text: &str, point: Option<&str>| {
        Job::new(JobSpec {
            file: "x.toml".into(),
            text: text.into(),
            point: point.map(str::to_string),
            ..Default::default()
        })
        .err()
        .expect("refused")
    };
    let e = bad(&SWEEP.replace("[0, 1, 2, 3, 4]", "[0, \"many\"]"), None);
    assert!(matches!(&e, LabError::Scenario(s) if s.line > 0), "{e}");
    assert_eq!(e.exit_code(), 2);
    let e = bad(SWEEP, Some("drops=9"));
    assert!(
        matches!(&e, LabError::Input(m) if m.contains("no value `9`")),
        "{e}"
    );
    let e = bad(&SWEEP.replace("[sweep.rtt]", "[sweep.variant]"), None);
    assert!(
        matches!(&e, LabError::Input(m) if m.contains("column")),
        "{e}"
    );
}
