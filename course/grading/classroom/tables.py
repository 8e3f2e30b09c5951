"""Phase 4 of :mod:`.pipeline`, for the instructor: the class table, the timing line and the problems, printable
(student ids, flags and errors are the students' text)."""
from __future__ import annotations

from course.grading.records import ClassResult
from course.grading.text import one_line, printable


def class_table(result: ClassResult, chapters: list[str]) -> str:
    """Per student: score per chapter, total, flags (printable: student ids and flags are the students')."""
    students = sorted({s for ch in chapters for s in result.reports.get(ch, {})})
    width = max([len(one_line(s, 40)) for s in students] + [8]) + 2
    head = f"{'student':<{width}}" + "".join(f"{ch[:16]:>18}" for ch in chapters) + f"{'total':>12}  flags"
    lines = [head, "-" * len(head)]
    for s in students:
        row, got, best, flags = f"{one_line(s, 40):<{width}}", 0.0, 0.0, []
        for ch in chapters:
            r = result.reports.get(ch, {}).get(s)
            if r is None:
                row += f"{'-':>18}"
                continue
            row += f"{r.score:>12g}/{r.max_score:<5g}"
            got += r.score
            best += r.max_score
            flags += [f"{ch[:2]}: {w}" for w in r.words()]
        lines.append(row + f"{got:>7g}/{best:<4g}  " + (one_line("; ".join(flags), 400) or "-"))
    return "\n".join(lines)


def summary_line(result: ClassResult) -> str:
    t = result.timing
    return (f"staging {t.get('stage', 0):.1f} s, references {t.get('references', 0):.1f} s (on local processes: "
            f"beside the submissions), submissions {t.get('workers', 0):.1f} s, gradebook {t.get('record', 0):.1f} s, "
            f"total {t.get('total', 0):.1f} s; "
            f"reports in .judge/reports/, item analysis in .judge/analysis/, scores in the gradebook, "
            f"graded notebooks in autograded/")


def problems_text(result: ClassResult) -> list[str]:
    return [f"PROBLEM: {one_line(ch, 40)}/{one_line(s, 64)}: {printable(why, 600)}" for ch, s, why in result.failures]
