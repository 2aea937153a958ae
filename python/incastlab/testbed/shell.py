"""Run iproute2 / ethtool / sysctl commands; failures become one clear line."""

from __future__ import annotations

import os
import shutil
import subprocess

from ..errors import EnvironmentProblem


def require_root() -> None:
    if os.geteuid() != 0:
        raise EnvironmentProblem("the testbed builds network namespaces and needs root (run it with sudo)")
    for tool in ("ip", "tc", "ethtool"):
        if shutil.which(tool) is None:
            raise EnvironmentProblem(f"{tool} is not installed (bash scripts/install.sh installs iproute2 and ethtool)")


def run(args: list[str], *, stdin: str | None = None, check: bool = True) -> str:
    """Run a command, return stdout; on failure raise EnvironmentProblem with its stderr."""
    p = subprocess.run(args, input=stdin, capture_output=True, text=True)
    if check and p.returncode != 0:
        what = " ".join(args[:6]) + (" ..." if len(args) > 6 else "")
        detail = (p.stderr or p.stdout).strip().splitlines()
        raise EnvironmentProblem(f"`{what}` failed: {detail[-1] if detail else 'exit status %d' % p.returncode}")
    return p.stdout


def ip_batch(lines: list[str], netns: str | None = None) -> None:
    """Many `ip` commands in one process (`ip -batch`), optionally inside a namespace."""
    if not lines:
        return
    args = ["ip"] + (["-n", netns] if netns else []) + ["-batch", "-"]
    run(args, stdin="\n".join(lines) + "\n")


def in_netns(netns: str, args: list[str], check: bool = True) -> str:
    return run(["ip", "netns", "exec", netns] + args, check=check)
