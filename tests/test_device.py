import pytest
import torch

from course import device


@pytest.fixture(autouse=True)
def clean_env(monkeypatch):
    monkeypatch.delenv("COURSE_DEVICE", raising=False)
    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)


def test_pick_device_without_cuda_is_cpu(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert device.pick_device() == torch.device("cpu")


def test_pick_device_prefers_cuda_when_available(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert device.pick_device() == torch.device("cuda")


def test_override_and_fallback(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setenv("COURSE_DEVICE", "cuda")
    assert device.pick_device() == torch.device("cpu"), "asking for CUDA without one must fall back"
    monkeypatch.setenv("COURSE_DEVICE", "meta")
    assert device.pick_device() == torch.device("meta")
    assert device.pick_device(prefer="cpu") == torch.device("cpu")


def test_choose_by_device_and_grading(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert device.choose(cpu=1, cuda=2, grading=0) == 1
    assert device.choose(cpu=1, cuda=2, grading=0, device=torch.device("cuda")) == 2
    assert device.choose(cpu=1) == 1
    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")
    assert device.grading_mode() == "autograde"
    assert device.choose(cpu=1, cuda=2, grading=0) == 0
    assert device.choose(cpu=1, cuda=2) == 1, "without a grading config, grading uses the CPU config"


def test_describe_and_report(monkeypatch, capsys):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    line = device.describe({"n": 3}, cpu_note="small", cuda_note="ResNet-18")
    assert "cpu" in line and "no CUDA" in line and "ResNet-18" in line and "{'n': 3}" in line
    monkeypatch.setenv("COURSE_DEVICE", "cuda")
    assert "not available" in device.describe()
    monkeypatch.setenv("NBGRADER_EXECUTION", "validate")
    assert "grading mode (validate)" in device.describe()
    assert device.report() == torch.device("cpu")
    out = capsys.readouterr().out
    assert "torch" in out and "device: cpu" in out
    device.report(libraries=("torchvision", "Pillow", "no-such-distribution-xyz"))
    out = capsys.readouterr().out
    from importlib.metadata import version
    assert f"torchvision {version('torchvision')}" in out and f"Pillow {version('Pillow')}" in out
    assert "no-such-distribution-xyz not installed" in out
    monkeypatch.delenv("COURSE_DEVICE")
    monkeypatch.delenv("NBGRADER_EXECUTION")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert "ResNet-18" in device.describe(cuda_note="ResNet-18")
