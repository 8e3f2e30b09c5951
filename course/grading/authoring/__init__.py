"""Writing and proving the course: known answers and the demo class (:mod:`.known`), the seed sweep and the
variants (:mod:`.sweep`), time estimates (:mod:`.estimates`), how much of an answer is on the page
(:mod:`.onpage`) and one exercise side by side (:mod:`.exercise`)."""
