"""Binder: the badge for this repository, and what repo2docker will build from it (read statically).

``python tools/binder.py`` prints the badge for the git remote ``origin`` (a
fork gets its own), and a summary of the image: the buildpack repo2docker
picks, the files it reads, whether the environment is CPU-only, and an
estimate of its size. Building the image for real needs Docker and the
conda channels, neither of which this machine has.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
REPO2DOCKER_VERSION = "2026.4.0"
URLPATH = "lab/tree/my_work/index.ipynb"  # the student's copy (postBuild makes it), not release/


def repo_slug(root: Path = REPO) -> str | None:
    """``owner/name`` of the GitHub remote ``origin``, or ``None`` without one."""
    try:
        url = subprocess.run(["git", "-C", str(root), "remote", "get-url", "origin"], capture_output=True,
                             text=True, check=True).stdout.strip()
    except (subprocess.CalledProcessError, FileNotFoundError):
        return None
    m = re.search(r"github\.com[:/]+([^/]+)/([^/]+?)(?:\.git)?/?$", url)
    return f"{m.group(1)}/{m.group(2)}" if m else None


def badge(slug: str | None, ref: str = "main") -> str:
    """The Binder badge markdown for ``slug`` (``OWNER/REPO`` when there is no remote)."""
    slug = slug or "OWNER/REPO"
    return (f"[![Binder](https://mybinder.org/badge_logo.svg)]"
            f"(https://mybinder.org/v2/gh/{slug}/{ref}?urlpath={URLPATH})")


@contextmanager
def _cwd(path: Path):
    old = os.getcwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(old)


def buildpack(root: Path = REPO):
    """The repo2docker buildpack that would build this repository (its detection, run here without Docker)."""
    from repo2docker.app import Repo2Docker

    app = Repo2Docker()
    with _cwd(root):
        for cls in app.buildpacks:
            bp = cls(base_image=app.base_image)
            bp.platform = "linux/amd64"
            if bp.detect():
                return bp
        bp = app.default_buildpack(base_image=app.base_image)
        bp.platform = "linux/amd64"
        return bp


def dockerfile(root: Path = REPO) -> str:
    """The Dockerfile repo2docker would build (rendered without Docker)."""
    bp = buildpack(root)
    with _cwd(root):
        return bp.render()


def files_read(root: Path = REPO) -> list[str]:
    """The repository's files that the rendered Dockerfile copies in by name or runs (the build's inputs)."""
    d = dockerfile(root)
    files = re.findall(r"COPY\s+(?:--\S+\s+)*src/([\w.\-]+)\s", d)
    for script in ("postBuild", "start"):
        if f"./{script}" in d and script not in files:
            files.append(script)
    return files


def estimated_image_gib(root: Path = REPO) -> float:
    """A rough size of the image: repo2docker's base (about 1.3 GiB with conda) plus the CPU-only packages.

    The packages' size is what this venv holds for them, without the CUDA libraries (torch's
    ``*cuda*``/``*cudnn*``/``nccl`` libraries and the ``nvidia-*``/``triton`` distributions), which
    the CPU wheels do not contain.
    """
    import importlib.metadata as md

    skip = re.compile(r"(^nvidia|^triton|^cuda)", re.I)
    total = 0
    for dist in md.distributions():
        name = dist.metadata["Name"] or ""
        if skip.search(name):
            continue
        for f in dist.files or []:
            s = str(f)
            if name.lower() == "torch" and re.search(r"cuda|cudnn|nccl|cublas|cusparse|cufft|nvrtc", s):
                continue
            try:
                total += (Path(dist.locate_file(f))).stat().st_size
            except OSError:
                continue
    return 1.3 + total / 2 ** 30


def main() -> int:
    print(badge(repo_slug()))
    if repo_slug() is None:
        print("(no git remote 'origin': replace OWNER/REPO with your GitHub path)")
    bp = buildpack()
    print(f"repo2docker {REPO2DOCKER_VERSION}: {type(bp).__name__}, reading {', '.join(files_read())}")
    print(f"estimated image size: {estimated_image_gib():.1f} GiB (CPU-only)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
