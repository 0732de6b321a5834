"""Shared fixtures: the repository, its examples and the gentle command."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import List

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"

#: Records columns, in order (after a sweep's point and axis columns).
RECORD_COLUMNS = [
    "variant",
    "trial",
    "workload",
    "index",
    "request_bytes",
    "response_bytes",
    "complete",
    "ranked",
    "metric_ms",
    "server_ms",
    "client_ms",
    "fin_ms",
    "t_recover_ms",
    "t_total_ms",
    "fast_retrans",
    "timeouts",
    "slow_start_retrans",
    "syn_retrans",
    "recoveries",
    "undos",
    "retrans_segs",
    "bytes_sent",
    "packets_dropped",
    "unfinished",
]

#: A small two-axis sweep: 2 networks x 3 drop counts, 3 variants, 40 trials.
SMALL_SWEEP = """
name = "small-sweep"
seed = 11
trials = 40
quick_trials = 8
metric = "server"

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
name = "linux"
profile = "linux-3.10"
tlp = "off"

[[variant]]
name = "tlp"
profile = "linux-3.10"

[[variant]]
name = "plain"
profile = "plain"

[sweep]
[sweep.network.fast]
link.delay = "5ms"

[sweep.network.slow]
link.delay = { uniform = ["45ms", "55ms"] }
trials = 30

[sweep.drops]
link.a_to_b.loss.n = [0, 1, 3]
"""


def gentle_bin() -> str:
    """The gentle command: $GENTLE_BIN (scripts/test sets it), else
    target/ci/gentle or target/release/gentle, or on the PATH. A test that needs it
    fails without it: it never passes by skipping."""
    env = os.environ.get("GENTLE_BIN")
    if env:
        if not Path(env).exists():
            pytest.fail(f"GENTLE_BIN={env} does not exist")
        return env
    for c in [ROOT / "target" / "ci" / "gentle", ROOT / "target" / "release" / "gentle"]:
        if c.exists():
            return str(c)
    found = shutil.which("gentle")
    if found is None:
        pytest.fail("the gentle command is not built (cargo build --profile ci, or scripts/test)")
    return found


def cli(args: List[str], **kw) -> subprocess.CompletedProcess:
    """Runs the gentle command in the repository."""
    return subprocess.run(
        [gentle_bin(), *args], cwd=ROOT, capture_output=True, text=True, timeout=600, **kw
    )


@pytest.fixture
def small_sweep(tmp_path: Path) -> Path:
    p = tmp_path / "small-sweep.toml"
    p.write_text(SMALL_SWEEP)
    return p


def tree_bytes(d: Path) -> dict:
    """Every file under a sweep's directory but sweep.json, with its bytes."""
    return {
        str(f.relative_to(d)): f.read_bytes()
        for f in sorted(d.rglob("*"))
        if f.is_file() and f.name != "sweep.json"
    }
