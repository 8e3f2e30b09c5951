"""pyproject.toml is the one source of truth for the pins; environment.yml must agree."""
import re
import tomllib
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]


def parse(req: str) -> tuple[str, str]:
    name, version = re.split(r"==", req.strip(), maxsplit=1)
    return name.strip().lower().replace("_", "-"), version.split("+")[0].strip()


def test_environment_yml_matches_pyproject():
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    pins = dict(parse(r) for r in project["dependencies"])
    env = yaml.safe_load((REPO / "environment.yml").read_text())
    pip_section = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict) and "pip" in d)
    env_pins = dict(parse(r) for r in pip_section if "==" in r)
    assert env_pins == pins, f"environment.yml differs from pyproject.toml: {set(env_pins.items()) ^ set(pins.items())}"
    assert "python=3.11" in env["dependencies"]
    for req in project["dependencies"] + project["optional-dependencies"]["test"] + \
            project["optional-dependencies"]["class"]:
        assert "==" in req, f"{req} is not pinned"


def test_required_pins():
    deps = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dependencies"]
    pins = dict(parse(r) for r in deps)
    assert pins["torch"] == "2.14.1" and pins["torchvision"] == "0.29.1"
    assert pins["nbgrader"] == "0.9.6" and pins["jupyterlab"].startswith("4.6.")
    assert pins["ipywidgets"].startswith("8.1.") and pins["timm"].startswith("1.0.")
