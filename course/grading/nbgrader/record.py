"""The judge inside nbgrader, after ``SaveAutoGrades``:

:class:`JudgeRecord` (after ``SaveAutoGrades``) writes the judge's scores
and messages into the gradebook through nbgrader's ``Gradebook`` API. The
messages, which quote the student's output, go in as an indented code
block, so the markdown that ``generate_feedback`` renders shows them as
text, with their line breaks.
"""
from __future__ import annotations

from nbgrader.preprocessors import NbGraderPreprocessor

from course.grading.records import Report, exercise_of
from course.grading.text import markdown_block, one_line


class JudgeRecord(NbGraderPreprocessor):
    """nbgrader preprocessor (after ``SaveAutoGrades``): write the judge's scores and messages into the gradebook."""

    def preprocess(self, nb, resources):
        from nbgrader.api import Gradebook, MissingEntry

        from course.grading.judge import diagnosis

        judged = resources.get("judge")
        if not judged:
            return nb, resources
        report: Report = judged["report"]
        info = resources["nbgrader"]
        notebook, assignment, student = info["notebook"], info["assignment"], info["student"]
        exercise = exercise_of(nb)
        comments: dict[str, list[str]] = {}
        with Gradebook(info["db_url"]) as gb:
            for gid, c in report.cells.items():
                grade = gb.find_grade(gid, notebook, assignment, student)
                grade.auto_score = c.points
                grade.needs_manual_grade = grade.manual_score is not None
                if gid in exercise:
                    line = f"{gid}: {'passed' if c.judge == 'pass' else 'FAILED'}"
                    if c.judge != "pass":
                        line += f" - {one_line(c.message.splitlines()[0] if c.message else '', 300)}"
                    comments.setdefault(exercise[gid], []).append(line)
            for sol, lines in comments.items():
                try:
                    comment = gb.find_comment(sol, notebook, assignment, student)
                except MissingEntry:
                    continue
                text = "Grader (outside the kernel):\n" + "\n".join(lines)
                if sol in report.diagnoses:
                    text += f"\n{diagnosis.PREFIX}{report.diagnoses[sol]['note']}"
                if report.flags:
                    text += "\nFlags: " + "; ".join(report.flags)
                comment.auto_comment = markdown_block(text)
            gb.db.commit()
        return nb, resources
