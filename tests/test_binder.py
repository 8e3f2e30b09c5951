"""Binder's build, read statically with repo2docker (no Docker, no conda channels here), and its badge."""
import re
import sys
import tomllib

import yaml

from conftest import REPO

sys.path.insert(0, str(REPO))
from tools import binder  # noqa: E402


def test_repo2docker_is_pinned_and_picks_the_conda_buildpack():
    test_deps = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"]["test"]
    assert f"jupyter-repo2docker=={binder.REPO2DOCKER_VERSION}" in test_deps
    import repo2docker
    assert repo2docker.__version__.startswith(binder.REPO2DOCKER_VERSION)
    assert type(binder.buildpack()).__name__ == "CondaBuildPack"


def test_the_build_installs_environment_yml_from_the_copied_repository_then_runs_postbuild():
    """environment.yml's pip section names a local file (``-r requirements-binder.lock``), so repo2docker copies the
    whole repository in first and runs the environment's install there (not in its cached pre-assemble step, which
    sees environment.yml alone and would not find the lock)."""
    assert binder.files_read() == ["postBuild"]
    d = binder.dockerfile()
    assert "./postBuild" in d
    copy = d.index("COPY --chown=1000:1000 src/ ${REPO_DIR}/")
    update = d.index('env update -p ${NB_PYTHON_PREFIX} --file "environment.yml"')
    assert copy < update < d.index("./postBuild"), "the lock must be in the image before the environment's install"
    assert (REPO / "requirements-binder.lock").is_file()
    for unwanted in ("requirements.txt", "apt.txt", "runtime.txt"):
        assert not (REPO / unwanted).exists(), f"{unwanted} would change what repo2docker does"
    post = (REPO / "postBuild").read_text()
    assert "python -m course.lab student ." in post, "postBuild must make the student's copy the badge opens"


def test_the_environment_is_cpu_only():
    env = yaml.safe_load((REPO / "environment.yml").read_text())
    pip = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict) and "pip" in d)
    assert "--extra-index-url https://download.pytorch.org/whl/cpu" in pip
    assert pip[-1] == "-r requirements-binder.lock", pip
    locked = [line for line in (REPO / "requirements-binder.lock").read_text().splitlines()
              if line and not line.startswith("#")]
    torch = [p for p in locked if p.startswith(("torch==", "torchvision=="))]
    assert len(torch) == 2 and all(p.endswith("+cpu") for p in torch), torch
    assert not any(re.match(r"(nvidia|cuda|triton)", str(p)) for p in pip + locked + env["dependencies"])
    assert all(re.fullmatch(r"[a-z0-9.-]+==\S+( ; [^;]+)?", p) for p in locked), "every package of Binder's image pinned"
    assert not any("linux" in p.split(";")[-1] for p in locked if ";" in p), "nothing Linux-only: Binder is CPU-only"


def test_estimated_image_size_is_reasonable():
    gib = binder.estimated_image_gib()
    print(f"estimated Binder image: {gib:.1f} GiB")
    assert 1.5 < gib < 6, gib


def test_badge_points_at_the_students_copy_of_this_repository():
    """The badge is in the student repository's README (make publish): Binder serves a whole repository, and this
    one holds the solutions and the hidden tests, so the instructor's README has no badge of its own."""
    readme = (REPO / "README.md").read_text()
    assert "mybinder.org/v2/gh" not in readme, "Binder would serve this repository, answers included"
    student_readme = (REPO / "course" / "serving" / "publish.py").read_text()
    assert binder.badge(None) in student_readme, "the student repository's README carries tools/binder.py's badge"
    assert "urlpath=lab/tree/my_work/index.ipynb" in binder.badge(None)
    assert binder.badge("me/fork") == ("[![Binder](https://mybinder.org/badge_logo.svg)](https://mybinder.org/v2/gh/"
                                       "me/fork/main?urlpath=lab/tree/my_work/index.ipynb)")


def test_repo_slug_parses_github_remotes(tmp_path):
    import subprocess
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    assert binder.repo_slug(tmp_path) is None
    for url in ("https://github.com/ada/course.git", "git@github.com:ada/course.git", "https://github.com/ada/course"):
        subprocess.run(["git", "-C", str(tmp_path), "remote", "remove", "origin"], capture_output=True)
        subprocess.run(["git", "-C", str(tmp_path), "remote", "add", "origin", url], check=True)
        assert binder.repo_slug(tmp_path) == "ada/course"
