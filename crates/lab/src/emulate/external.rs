//! External commands as the endpoints of a real-mode trial: a client (`curl`, say)
//! against gentle's engine or an external server, and a server (any program that
//! listens on 10.77.0.1:80). Each runs with `sh -c` in its namespace — a child
//! process inherits the network namespace of the thread that starts it — with
//! `GENTLE_SERVER=10.77.0.1:80` in its environment. Output is read on threads of
//! its own, so a chatty command never blocks; every command is bounded by the
//! trial's deadline and killed when the trial ends. Each runs in a process group
//! of its own, and the whole group is killed: what `sh` started in the background
//! would otherwise keep the output pipes open, and the trial waiting on them.

use std::io::Read;
use std::net::{SocketAddrV4, TcpStream};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

use gentle_real::endpoints::now_ns;
use gentle_real::topology::SERVER_ADDR;
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use serde::Serialize;

use super::HTTP_PORT;

/// What an external command did.
#[derive(Clone, Debug, Default, Serialize)]
pub struct PeerRun {
    pub command: String,
    /// Its exit status; `None` when it was killed (at the deadline, or as a
    /// server when the trial ended).
    pub status: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

/// A running command.
pub struct Proc {
    run: PeerRun,
    child: Option<Child>,
    out: Option<(JoinHandle<String>, JoinHandle<String>)>,
}

fn reader(r: Option<impl Read + Send + 'static>) -> JoinHandle<String> {
    std::thread::spawn(move || {
        let mut b = Vec::new();
        if let Some(mut r) = r {
            let _ = r.read_to_end(&mut b);
        }
        String::from_utf8_lossy(&b).into_owned()
    })
}

/// Starts `cmd` in the calling thread's namespace.
pub fn spawn(cmd: &str) -> Proc {
    let mut run = PeerRun {
        command: cmd.to_string(),
        ..Default::default()
    };
    let child = Command::new("sh")
        .arg("-c")
        .arg(cmd)
        .env("GENTLE_SERVER", format!("{SERVER_ADDR}:{HTTP_PORT}"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn();
    match child {
        Ok(mut c) => {
            let out = (reader(c.stdout.take()), reader(c.stderr.take()));
            Proc {
                run,
                child: Some(c),
                out: Some(out),
            }
        }
        Err(e) => {
            run.stderr = format!("cannot run sh -c {cmd:?}: {e}");
            Proc {
                run,
                child: None,
                out: None,
            }
        }
    }
}

impl Proc {
    /// Waits for the command to exit, killing it at `deadline` or on `stop`.
    pub fn wait(mut self, deadline: u64, stop: &AtomicBool) -> PeerRun {
        if let Some(c) = self.child.as_mut() {
            loop {
                match c.try_wait() {
                    Ok(Some(st)) => {
                        self.run.status = st.code();
                        break;
                    }
                    Ok(None) if now_ns() < deadline && !stop.load(Ordering::Relaxed) => {
                        std::thread::sleep(Duration::from_millis(5));
                    }
                    _ => break,
                }
            }
        }
        self.kill()
    }

    /// Whether the command has ended (or never started).
    pub fn exited(&mut self) -> bool {
        self.child
            .as_mut()
            .is_none_or(|c| !matches!(c.try_wait(), Ok(None)))
    }

    /// Ends the command (if it still runs) and all it started, then collects its
    /// output.
    pub fn kill(mut self) -> PeerRun {
        if let Some(mut c) = self.child.take() {
            if let Ok(Some(st)) = c.try_wait() {
                self.run.status = st.code();
            }
            // The group's id is `sh`'s pid, not reused while the group has a member.
            let _ = killpg(Pid::from_raw(c.id() as i32), Signal::SIGKILL);
            let _ = c.wait();
        }
        if let Some((so, se)) = self.out.take() {
            self.run.stdout = so.join().unwrap_or_default();
            self.run.stderr.push_str(&se.join().unwrap_or_default());
        }
        self.run
    }
}

/// Whether something accepts connections on `addr` in the calling thread's
/// namespace (one try, 100 ms at most).
pub fn listening(addr: SocketAddrV4) -> bool {
    TcpStream::connect_timeout(&addr.into(), Duration::from_millis(100)).is_ok()
}
