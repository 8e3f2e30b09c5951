"""Intake: every file of a submission is checked here before the instructor's side copies, decodes or renders it
(:mod:`.files`); a damaged notebook is rebuilt from the release (:mod:`.repair`)."""
