"""Helpers shared by the monitor tests: run the CLI, parse its JSON lines."""

from __future__ import annotations

import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
CLI = os.path.join(HERE, "cli.py")


def env() -> dict:
    e = dict(os.environ)
    e["PYTHONPATH"] = os.path.join(REPO, "python") + os.pathsep + REPO + os.pathsep + e.get("PYTHONPATH", "")
    return e


def incastlab(*args: str, timeout: float = 120, prefix: tuple[str, ...] = ()) -> subprocess.CompletedProcess:
    return subprocess.run([*prefix, sys.executable, CLI, *args], capture_output=True, text=True,
                          timeout=timeout, env=env(), cwd=REPO)


def json_lines(stdout: str) -> tuple[list[dict], dict]:
    objs = [json.loads(line) for line in stdout.splitlines() if line.strip()]
    seconds = [o for o in objs if o.get("type") == "second"]
    summary = [o for o in objs if o.get("type") == "summary"]
    assert len(summary) == 1, stdout
    return seconds, summary[0]
