"""One home for the grading limits: traitlets configuration that ``nbgrader_config.py`` can set.

Every cap the instructor's side applies to a submission is a trait of
:class:`GradingLimits`::

    # nbgrader_config.py
    c.GradingLimits.memory_gib = 8        # a bigger sandbox for a heavier course
    c.GradingLimits.intake_files = 100

:func:`limits` reads them (from ``nbgrader_config.py`` in the course root,
then command-line overrides) into a frozen :class:`Limits`, which is what the
intake, the sandbox, the worker, the wire and the judge receive. Nothing else
writes a default.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from pathlib import Path

from traitlets import Bool, Float, Integer
from traitlets.config import Configurable

GiB = 2 ** 30
MiB = 2 ** 20
KiB = 2 ** 10


@dataclass(frozen=True)
class Limits:
    """Per-submission limits, in bytes and seconds (see :class:`GradingLimits` for what each means)."""

    # the sandbox
    memory_bytes: int = 6 * GiB
    processes: int = 256
    wall_seconds: float = 900.0
    probe_seconds: float = 60.0
    cell_seconds: float = 120.0
    file_bytes: int = 2 * GiB
    open_files: int = 4096
    tmpfs_bytes: int = 1 * GiB
    disk_bytes: int = 1 * GiB
    # the grading processes outside the sandbox
    judge_memory_bytes: int = 4 * GiB
    # the intake
    intake_files: int = 500
    intake_bytes: int = 200 * MiB
    intake_file_bytes: int = 100 * MiB
    intake_depth: int = 12
    intake_folders: int = 100
    intake_entries: int = 2000
    # the wire
    probe_result_bytes: int = 32 * MiB
    submission_results_bytes: int = 128 * MiB
    # outputs
    message_bytes: int = 16 * MiB
    cell_output_bytes: int = 1 * MiB
    notebook_output_bytes: int = 16 * MiB
    # the run
    run_every_cell: bool = False  # False: skip the demonstrations nothing graded reads (course.grading.run.needed)

    def as_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "Limits":
        return cls(**{k: v for k, v in d.items() if k in cls.__dataclass_fields__})

    def replace(self, **kw) -> "Limits":
        return replace(self, **kw)


_D = Limits()  # the defaults, written once above; the traits below show them in the units an instructor sets
_UNITS = {"_gib": GiB, "_mib": MiB, "_kib": KiB}


def _field(trait: str) -> tuple[str, int]:
    """A trait's :class:`Limits` field and the bytes in one of its units: ``memory_gib`` -> (``memory_bytes``, GiB)."""
    for suffix, unit in _UNITS.items():
        if trait.endswith(suffix):
            return trait[: -len(suffix)] + "_bytes", unit
    return trait, 1


class GradingLimits(Configurable):
    """The caps applied to every submission (set them in ``nbgrader_config.py`` as ``c.GradingLimits.NAME``).

    A trait named ``*_gib``, ``*_mib`` or ``*_kib`` sets the :class:`Limits` field ``*_bytes`` in that unit; any
    other trait sets the field of its own name. Each default is :class:`Limits`'s.
    """

    memory_gib = Float(_D.memory_bytes / GiB, help="Memory of one submission's sandboxed processes (GiB).").tag(config=True)
    processes = Integer(_D.processes, help="Processes one submission may run at once.").tag(config=True)
    wall_seconds = Float(_D.wall_seconds, help="Total time of one submission (s).").tag(config=True)
    probe_seconds = Float(_D.probe_seconds, help="Time of one hidden test (s).").tag(config=True)
    cell_seconds = Float(_D.cell_seconds, help="Time of one notebook cell (s).").tag(config=True)
    disk_mib = Float(_D.disk_bytes / MiB, help="What one submission may write into its working folder (MiB): a "
                                               "size-capped tmpfs of its own, so a disk filler costs its own run, "
                                               "not a classmate's.").tag(config=True)
    judge_memory_gib = Float(_D.judge_memory_bytes / GiB, help="Memory of each grading process outside the sandbox "
                                                               "(GiB): a bug in the judge costs one submission, not "
                                                               "the class.").tag(config=True)
    intake_files = Integer(_D.intake_files, help="Files taken from one submission folder; the rest are dropped."
                           ).tag(config=True)
    intake_mib = Float(_D.intake_bytes / MiB, help="Bytes taken from one submission folder (MiB).").tag(config=True)
    intake_file_mib = Float(_D.intake_file_bytes / MiB, help="Largest single file taken (MiB).").tag(config=True)
    intake_depth = Integer(_D.intake_depth, help="Deepest sub-folder taken.").tag(config=True)
    intake_folders = Integer(_D.intake_folders, help="Folders taken from one submission folder (an empty folder "
                                                     "costs a disk block at every copy); the rest are dropped."
                             ).tag(config=True)
    intake_entries = Integer(_D.intake_entries, help="Entries looked at in one submission folder, taken or not "
                                                     "(files, folders, links, hidden ones); past it, the rest is not "
                                                     "even listed.").tag(config=True)
    probe_result_mib = Float(_D.probe_result_bytes / MiB, help="Largest result one hidden test may send back (MiB)."
                             ).tag(config=True)
    submission_results_mib = Float(_D.submission_results_bytes / MiB, help="All results of one submission together "
                                                                           "(MiB).").tag(config=True)
    message_mib = Float(_D.message_bytes / MiB, help="Largest message the kernel may send (MiB); a larger one is "
                                                     "refused.").tag(config=True)
    cell_output_kib = Integer(_D.cell_output_bytes // KiB, help="Outputs kept per cell (KiB); the rest is cut, and "
                                                                "says so.").tag(config=True)
    notebook_output_mib = Float(_D.notebook_output_bytes / MiB, help="Outputs kept per graded notebook (MiB)."
                                ).tag(config=True)
    run_every_cell = Bool(_D.run_every_cell, help="Run every cell of a submission, as stock nbgrader does. Off: the "
                                                   "demonstrations whose results no answer, test cell or hidden test "
                                                   "reads are not run (course/grading/run/needed.py), and each report "
                                                   "says how many.").tag(config=True)

    def limits(self) -> Limits:
        values = {}
        for trait in self.class_trait_names(config=True):
            field, unit = _field(trait)
            value = getattr(self, trait)
            values[field] = int(value * unit) if unit != 1 else value
        return Limits(**values)


def course_config(root: Path):
    """The traitlets config of ``<root>/nbgrader_config.py`` (empty if there is none)."""
    from traitlets.config import Config
    from traitlets.config.loader import PyFileConfigLoader

    path = Path(root) / "nbgrader_config.py"
    if not path.is_file():
        return Config()
    return PyFileConfigLoader(path.name, path=str(path.parent)).load_config()


def limits(root: Path | None = None, config=None, **overrides) -> Limits:
    """The course's limits: ``nbgrader_config.py`` (or ``config``), then ``overrides`` (trait names, None ignored)."""
    if config is None:
        config = course_config(root) if root is not None else None
    gl = GradingLimits(config=config) if config is not None else GradingLimits()
    for name, value in overrides.items():
        if value is not None:
            setattr(gl, name, value)
    return gl.limits()
