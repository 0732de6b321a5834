//! `gentle packetdrill --kernel`: the same scripts against the host's kernel TCP,
//! in a network namespace of its own over a TUN device, as packetdrill runs them.
//! The project's own scripts pass on both stacks; on the kernel a wrong
//! expectation fails with its line and both packets, a blocking call returns and
//! is timed when the script's data arrives, `%{ }%` blocks read the kernel's
//! `TCP_INFO`, `sysctl` lines set the namespace, and a command that fails fails
//! the script. Needs root and /dev/net/tun (see `common::skip_real`).

use std::path::Path;
use std::sync::{Mutex, MutexGuard};

use gentle_lab::packetdrill::{Outcome, kernel};
use gentle_tcp::Profile;
use serde_json::Value;

use crate::common::{self, gentle, root};

/// The kernel's runs are timed in real time: one at a time.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// The host's `tcp_allowed_congestion_control`, which a kernel run changes for
/// its time and must restore.
fn allowed_cc() -> String {
    std::fs::read_to_string("/proc/sys/net/ipv4/tcp_allowed_congestion_control").unwrap()
}

/// Whether to stand down (see `common::skip_real`); else the lock that keeps
/// the other kernel tests off the clock.
fn kernel_lock() -> Option<MutexGuard<'static, ()>> {
    if common::skip_real(kernel::check_environment()) {
        return None;
    }
    Some(ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner()))
}

/// The project's own scripts (`tests/packetdrill/*.pkt`).
fn own_scripts() -> Vec<String> {
    let mut v = Vec::new();
    for e in std::fs::read_dir(root().join("tests/packetdrill")).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "pkt") {
            v.push(p.display().to_string());
        }
    }
    v
}

fn on_kernel(src: &str) -> Outcome {
    kernel::run_source(Path::new("t.pkt"), src, &Profile::Linux6.config(), false)
}

/// A server connection after its handshake, as the kernel answers a SYN with
/// timestamps off.
const SERVER: &str = "`sysctl -q net.ipv4.tcp_timestamps=0`
    0 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3
   +0 setsockopt(3, SOL_SOCKET, SO_REUSEADDR, [1], 4) = 0
   +0 bind(3, ..., ...) = 0
   +0 listen(3, 1) = 0
   +0 < S 0:0(0) win 65535 <mss 1000,sackOK,nop,nop,nop,wscale 7>
   +0 > S. 0:0(0) ack 1 <mss 1460,nop,nop,sackOK,nop,wscale 7>
  +.1 < . 1:1(0) ack 1 win 512
   +0 accept(3, ..., ...) = 4
";

#[test]
fn own_scripts_pass_on_the_kernel_and_the_engine() {
    let Some(_one) = kernel_lock() else {
        return;
    };
    let before = allowed_cc();
    let mut args = vec![
        "packetdrill".to_string(),
        "--kernel".into(),
        "--json".into(),
    ];
    args.extend(own_scripts());
    let n = args.len() - 3;
    assert!(n >= 16, "only {n} scripts");
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let o = gentle(&args);
    let v: Value = serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!("{e}: {}", String::from_utf8_lossy(&o.stderr));
    });
    let failing: Vec<&Value> = v["scripts"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["status"] != "pass" || s["kernel"]["status"] != "pass")
        .collect();
    assert!(failing.is_empty(), "{failing:#?}");
    assert_eq!(v["passed"], n);
    assert_eq!(v["kernel"]["passed"], n);
    assert_eq!(v["kernel"]["same_verdict"], n);
    assert_eq!(o.status.code(), Some(0));
    // The host's setting is as it was.
    assert_eq!(allowed_cc(), before);
}

#[test]
fn a_wrong_sequence_number_fails_on_the_kernel_with_line_and_both_packets() {
    let Some(_one) = kernel_lock() else {
        return;
    };
    // At 100 ms of RTT the kernel sends the write as a TSO packet of two
    // segments and one of the third; the second line expects 3001 where the
    // second packet starts at 2001.
    let src = format!(
        "{SERVER}   +0 write(4, ..., 3000) = 3000\n   +0 > P. 1:2001(2000) ack 1\n   +0 > P. 3001:4001(1000) ack 1\n"
    );
    let Outcome::Fail(f) = on_kernel(&src) else {
        panic!("{:?}", on_kernel(&src))
    };
    assert_eq!(f.line, 12, "{f}");
    assert!(f.msg.contains("tcp_seq: expected: 3001"), "{}", f.msg);
    assert!(f.msg.contains("actual: 2001"), "{}", f.msg);
    let expected = f.expected.as_deref().unwrap();
    assert!(expected.ends_with("P. 3001:4001(1000) ack 1"), "{f:?}");
    assert!(
        f.actual.as_deref().unwrap().contains(" 2001:3001(1000)"),
        "{f:?}"
    );
}

#[test]
fn a_blocking_read_on_the_kernel_returns_when_data_arrives_and_is_timed() {
    let Some(_one) = kernel_lock() else {
        return;
    };
    let script = |end: &str| {
        format!(
            "{SERVER}   +0{end} read(4, ..., 1000) = 1000\n  +.1 < P. 1:1001(1000) ack 1 win 512\n   +0 > . 1:1(0) ack 1001\n"
        )
    };
    assert_eq!(on_kernel(&script("...0.100")), Outcome::Pass);
    let Outcome::Fail(f) = on_kernel(&script("...0.300")) else {
        panic!("{:?}", on_kernel(&script("...0.300")))
    };
    // Expected 0.3 s after the call began (0.1 s and the microseconds the
    // kernel's run is behind its script).
    assert!(
        f.msg.contains("expected system call return at 0.40"),
        "{}",
        f.msg
    );
}

#[test]
fn tcp_info_blocks_read_the_kernels_socket() {
    let Some(_one) = kernel_lock() else {
        return;
    };
    let script = |cond: &str| format!("{SERVER}   +0 %{{ assert {cond} }}%\n");
    assert_eq!(
        on_kernel(&script("tcpi_snd_cwnd == 10 and tcpi_state == 1")),
        Outcome::Pass
    );
    let Outcome::Fail(f) = on_kernel(&script("tcpi_snd_cwnd == 11")) else {
        panic!("{:?}", on_kernel(&script("tcpi_snd_cwnd == 11")))
    };
    assert!(f.msg.contains("tcpi_snd_cwnd = 10"), "{}", f.msg);
}

#[test]
fn sysctl_lines_set_the_namespace_and_a_failing_command_fails() {
    let Some(_one) = kernel_lock() else {
        return;
    };
    // With SACK off in the namespace the SYN-ACK offers no sackOK, and the
    // prologue's expectation of one fails.
    let no_sack = SERVER.replace(
        "net.ipv4.tcp_timestamps=0",
        "net.ipv4.tcp_timestamps=0 net.ipv4.tcp_sack=0",
    );
    let Outcome::Fail(f) = on_kernel(&no_sack) else {
        panic!("{:?}", on_kernel(&no_sack))
    };
    assert!(f.msg.contains("bad outbound TCP options"), "{}", f.msg);
    assert_eq!(on_kernel(SERVER), Outcome::Pass);
    let Outcome::Fail(f) = on_kernel(&format!("{SERVER}   +0 `false`\n")) else {
        panic!("a failing command passed")
    };
    assert!(f.msg.contains("command `false` failed"), "{}", f.msg);
}

#[test]
fn a_bad_script_stops_a_kernel_run_before_anything_runs() {
    let Some(_one) = kernel_lock() else {
        return;
    };
    let good = root().join("tests/packetdrill/nagle.pkt");
    let good = good.display().to_string();
    let o = gentle(&[
        "packetdrill",
        "--kernel",
        "--json",
        &good,
        "/nonexistent/x.pkt",
    ]);
    assert_eq!(o.status.code(), Some(2));
    let v: Value = serde_json::from_slice(&o.stdout).expect("one JSON document");
    // Only the bad script is reported: the good one was not run.
    assert_eq!(v["scripts"].as_array().unwrap().len(), 1, "{v}");
    assert_eq!(v["scripts"][0]["status"], "bad");
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("no script was run"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn an_interrupted_kernel_run_reports_what_ran_and_restores_the_host() {
    let Some(_one) = kernel_lock() else {
        return;
    };
    let before = allowed_cc();
    let scripts = own_scripts();
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_gentle"))
        .args(["packetdrill", "--kernel", "--json"])
        .args(&scripts)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // The 16 scripts take about 9 s; a second in, some have run.
    std::thread::sleep(std::time::Duration::from_millis(1500));
    let killed = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(130));
    let v: Value = serde_json::from_slice(&o.stdout).expect("one JSON document");
    let ran = v["scripts"].as_array().unwrap().len();
    assert!(ran > 0 && ran < scripts.len(), "{ran} of {}", scripts.len());
    assert!(String::from_utf8_lossy(&o.stderr).contains("scripts not run"));
    assert_eq!(allowed_cc(), before);
}
