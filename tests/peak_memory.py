"""Running code in a fresh process and reading its peak resident memory, for tests that prove a refusal
allocates nothing for what it refuses.

The code runs in a grandchild started by a small launcher process of its own, which then reads
``getrusage(RUSAGE_CHILDREN).ru_maxrss``: the peak of that one grandchild, never of another process the
test run started before.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
_LAUNCHER = """
import json, resource, subprocess, sys
done = subprocess.run([sys.executable, "-c", sys.argv[1], *sys.argv[2:]], capture_output=True, text=True)
print(json.dumps({
    "code": done.returncode, "stdout": done.stdout, "stderr": done.stderr,
    "peak_kib": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss,
}))
"""


@dataclass(frozen=True)
class Measured:
    """How the code ended: its exit code, its output and its peak resident memory in bytes."""

    code: int
    stdout: str
    stderr: str
    peak_bytes: int

    @property
    def peak_mib(self) -> float:
        return self.peak_bytes / 2**20


def run_measured(code: str, *args: str, timeout: float = 120) -> Measured:
    """Run ``code`` (Python, with ``args`` as ``sys.argv[1:]``) in a fresh process of the repository."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    launched = subprocess.run(
        [sys.executable, "-c", _LAUNCHER, code, *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        cwd=REPO,
        check=True,
    )
    found = json.loads(launched.stdout)
    return Measured(found["code"], found["stdout"], found["stderr"], int(found["peak_kib"]) * 1024)
