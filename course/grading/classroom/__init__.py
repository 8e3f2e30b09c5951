"""A class: the grading pipeline (:mod:`.pipeline`: stage, run on local processes or Dask, record, report), grading
on Dask safely (:mod:`.dask_tls`) and the instructor's item analysis (:mod:`.analysis`)."""
