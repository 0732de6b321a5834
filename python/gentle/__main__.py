"""``python -m gentle sweep FILE --out DIR [...]``: the command ``gentle sweep``
runs for ``--backend ray`` (its flags are the same)."""

from __future__ import annotations

import argparse
import sys
from typing import List, Optional

from . import GentleError, ScenarioError, sweep


def main(argv: Optional[List[str]] = None) -> int:
    p = argparse.ArgumentParser(prog="python -m gentle")
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("sweep", help="run every point of a scenario's [sweep]")
    s.add_argument("scenario")
    s.add_argument("--out", required=True)
    s.add_argument("--point")
    s.add_argument("--trials", type=int)
    s.add_argument("--seed", type=int)
    s.add_argument("--quick", action="store_true")
    s.add_argument("--resume", action="store_true")
    s.add_argument("--force", action="store_true")
    s.add_argument("--backend", choices=["local", "ray"], default="local")
    s.add_argument("--address")
    s.add_argument("--threads", type=int)
    a = p.parse_args(argv)
    try:
        r = sweep(
            a.scenario,
            a.out,
            backend=a.backend,
            address=a.address,
            point=a.point,
            trials=a.trials,
            seed=a.seed,
            quick=a.quick,
            resume=a.resume,
            force=a.force,
            threads=a.threads,
        )
    except GentleError as e:
        print(e if isinstance(e, ScenarioError) else f"error: {e}", file=sys.stderr)
        return int(getattr(e, "exit_code", 1))
    except KeyboardInterrupt:
        print(
            f"interrupted: the finished points are in {a.out}; `--resume` runs the rest",
            file=sys.stderr,
        )
        return 130
    print(r.text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
