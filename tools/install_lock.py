"""Install a hashed lock file (``requirements.lock``) into a virtual environment with three pip processes at once.

``python tools/install_lock.py VENV_PYTHON requirements.lock``

One ``pip install --no-deps -r requirements.lock`` installs its 216 wheels one after another on one core: 102 s
here, half of the set-up's wall time on a two-core machine. Most of it is not the big wheels (torch, its CUDA
libraries, triton: 21 wheels, 5 GB unpacked) but unpacking, checking and compiling the other 195. The lock is
split into those 21 and two halves of the rest, each installed by its own pip, with the same flags, hashes and
``--no-deps``: 71 s here, and the same files (compared file by file with a one-pip install). The parts share no
distribution, so no two pips write one file; pip creates shared folders (``bin/``, ``site-packages/``) only where
they are missing.
"""
from __future__ import annotations

import re
import subprocess
import sys
import tempfile
from pathlib import Path

#: The large wheels, installed by a pip of their own: torch, its CUDA libraries, triton, torchvision.
HEAVY = re.compile(r"^(torch|torchvision|triton|nvidia-[\w.-]+|cuda-[\w.-]+)$")
PARTS = 3


def split(lock_text: str, parts: int = PARTS) -> list[list[str]]:
    """The lock's requirement blocks (a ``name==version`` line with its ``--hash`` lines) in ``parts`` groups: the
    heavy wheels in the first, the others dealt in turn to the rest. Comments are dropped."""
    groups: list[list[str]] = [[] for _ in range(parts)]
    current: list[str] | None = None
    dealt = 0
    for line in lock_text.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if not line[0].isspace():
            name = re.split(r"[=<>!~\[; ]", line, maxsplit=1)[0].lower()
            if HEAVY.match(name):
                current = groups[0]
            else:
                current = groups[1 + dealt % (parts - 1)]
                dealt += 1
        if current is None:
            raise SystemExit(f"install_lock: a line before the first requirement: {line!r}")
        current.append(line)
    return [g for g in groups if g]


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__.splitlines()[2].strip(), file=sys.stderr)
        return 2
    python, lock = argv
    groups = split(Path(lock).read_text())
    with tempfile.TemporaryDirectory(prefix="install-lock-") as tmp:
        procs = []
        for i, group in enumerate(groups):
            part = Path(tmp) / f"part{i}.txt"
            part.write_text("\n".join(group) + "\n")
            procs.append(subprocess.Popen([python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                                           "--no-deps", "-r", str(part)]))
        codes = [p.wait() for p in procs]
    if any(codes):
        print(f"install_lock: pip failed (exit codes {codes} for the parts of {lock})", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
