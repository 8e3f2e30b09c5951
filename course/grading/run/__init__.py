"""Running a submission: the sandbox (:mod:`.sandbox`), the student's kernel inside it and the probes sent to it
(:mod:`.worker`), the plain-data format results come back in (:mod:`.wire`, imported inside students' kernels: this
file imports nothing), the grader's private scratch (:mod:`.scratch`) and the saved runs (:mod:`.saved`)."""
