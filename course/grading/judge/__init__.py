"""The judge: hidden tests as probe + verdict (:mod:`.verdicts`), the reference's results for each student's seed
(:mod:`.references`), and a failing answer matched to a known mistake (:mod:`.diagnosis`) among the exercises' known answers
(:mod:`.answers`: mutants and alternatives).

A chapter's ``source/<chapter>/judge.py`` imports what it is written with from here, ``from course.grading.judge
import Judge, visible``; the instructor's side imports the module it uses."""
from course.grading.judge.verdicts import Judge, visible

__all__ = ["Judge", "visible"]
