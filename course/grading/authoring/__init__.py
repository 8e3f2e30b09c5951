"""Writing and proving the course: the known answers (:mod:`course.grading.judge.answers`) and the attacks
(:mod:`.attacks`), graded for real in a scratch course (:mod:`.trial`), the demo class (:mod:`.demo`), the notebooks (:mod:`.notebooks`:
reading, running, releasing), the seed sweep and the variants (:mod:`.sweep`), time estimates
(:mod:`.estimates`), how much of an answer is on the page (:mod:`.onpage`) and one exercise side by side
(:mod:`.exercise`)."""
