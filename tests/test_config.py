"""The grading limits are written once (in Limits); the traits an instructor sets map onto them by unit."""
from traitlets.config import Config

from course.grading.run import wire
from course.grading.config import GiB, KiB, MiB, GradingLimits, Limits, _field, limits


def test_traits_default_to_limits():
    assert GradingLimits().limits() == Limits()
    assert wire.MAX_RESULT_BYTES == Limits().probe_result_bytes


def test_every_trait_names_a_field():
    fields = set(Limits.__dataclass_fields__)
    for trait in GradingLimits.class_trait_names(config=True):
        assert _field(trait)[0] in fields, trait


def test_units_and_overrides():
    c = Config()
    c.GradingLimits.memory_gib = 3
    c.GradingLimits.cell_output_kib = 10
    c.GradingLimits.intake_file_mib = 1.5
    c.GradingLimits.intake_files = 7
    got = limits(config=c, wall_seconds=42.0, probe_seconds=None)
    assert got.memory_bytes == 3 * GiB and got.cell_output_bytes == 10 * KiB
    assert got.intake_file_bytes == int(1.5 * MiB) and got.intake_files == 7
    assert got.wall_seconds == 42.0 and got.probe_seconds == Limits().probe_seconds
    assert isinstance(got.memory_bytes, int) and isinstance(got.intake_files, int)
