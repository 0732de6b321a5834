//! Anonymous network namespaces, each held by one thread.
//!
//! `unshare(CLONE_NEWNET)` moves only the calling thread into a new namespace, and
//! what that thread creates — sockets, TUN devices, the threads it spawns — belongs
//! to it for good. So a namespace here is a thread that unshared and then runs the
//! jobs it is given: create a TUN, write a sysctl, open a listening socket. The
//! namespace has no name, so nothing outlives gentle: when the thread ends and the
//! last socket and TUN descriptor close, the kernel frees the namespace and its
//! devices (`../../shared/notes` measured named namespaces outliving a crash).

use std::io;
use std::sync::mpsc;
use std::thread::JoinHandle;

use nix::sched::{CloneFlags, unshare};

type Job = Box<dyn FnOnce() + Send>;

/// A network namespace of its own, with its loopback up.
pub struct Netns {
    name: String,
    jobs: Option<mpsc::Sender<Job>>,
    thread: Option<JoinHandle<()>>,
}

impl Netns {
    /// Creates a namespace; `name` names its thread (for debugging and errors).
    pub fn new(name: &str) -> io::Result<Netns> {
        let (jobs, rx) = mpsc::channel::<Job>();
        let (ready_tx, ready) = mpsc::channel::<io::Result<()>>();
        let thread = std::thread::Builder::new()
            .name(format!("netns-{name}"))
            .spawn(move || {
                let made = unshare(CloneFlags::CLONE_NEWNET)
                    .map_err(io::Error::from)
                    .and_then(|()| crate::tun::set_up("lo"));
                let ok = made.is_ok();
                let _ = ready_tx.send(made);
                if ok {
                    for job in rx {
                        job();
                    }
                }
            })?;
        match ready.recv() {
            Ok(Ok(())) => Ok(Netns {
                name: name.to_string(),
                jobs: Some(jobs),
                thread: Some(thread),
            }),
            Ok(Err(e)) => {
                let _ = thread.join();
                Err(io::Error::new(
                    e.kind(),
                    format!("cannot create network namespace {name}: {e}"),
                ))
            }
            Err(_) => Err(io::Error::other(format!(
                "network namespace {name}: its thread ended"
            ))),
        }
    }

    /// The namespace's name in gentle's output.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Runs `f` inside the namespace and returns what it returns. Threads `f`
    /// spawns are inside the namespace too.
    pub fn run<R: Send + 'static>(&self, f: impl FnOnce() -> R + Send + 'static) -> R {
        let (tx, rx) = mpsc::sync_channel(1);
        let job: Job = Box::new(move || {
            let _ = tx.send(f());
        });
        self.jobs
            .as_ref()
            .expect("namespace thread running")
            .send(job)
            .expect("namespace thread alive");
        rx.recv().expect("namespace job finished (it panicked?)")
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        self.jobs.take();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
