"""pywb, the web archive replay tool, in a virtual environment of its own.

pywb pins versions the crawler's environment must stay free of (redis 2.10.6,
Werkzeug 3.1.7, fakeredis < 1), so the replay test runs it from a separate
environment, made once from the pins in pywb_requirements.txt and kept
outside the repository, in ~/.cache/bfs-crawler/pywb-<pins' hash> (or under
$XDG_CACHE_HOME). Changing a pin makes a new one. Safe when two test runs
ask at once (a lock file), and a half-made environment (a killed install)
is made again.

    python tests/pywb_env.py        # make it now (.ci/run does, before the tests)
"""
from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

PINS = Path(__file__).with_name("pywb_requirements.txt")
_READY = "ready"  # written last: the environment is whole


def environment() -> Path:
    """The environment's folder, made first if it is missing or half made."""
    home = _cache_home() / f"pywb-{hashlib.sha256(PINS.read_bytes()).hexdigest()[:12]}"
    home.parent.mkdir(parents=True, exist_ok=True)
    with open(home.parent / f"{home.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (home / _READY).exists():
            _make(home)
    return home


def command(name: str) -> Path:
    """Path of one of pywb's commands (``wayback``, ``cdx-indexer``)."""
    return environment() / "bin" / name


def _make(home: Path) -> None:
    shutil.rmtree(home, ignore_errors=True)
    subprocess.run([sys.executable, "-m", "venv", str(home)], check=True)
    subprocess.run([str(home / "bin" / "python"), "-m", "pip", "install", "--quiet",
                    "--disable-pip-version-check", "-r", str(PINS)], check=True)
    (home / _READY).write_text(PINS.read_text())


def _cache_home() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "bfs-crawler"


if __name__ == "__main__":
    print(command("wayback"))
