"""A class: the grading pipeline (:mod:`.pipeline`, which calls, in order, :mod:`.stage`, :mod:`.task` through
:mod:`.pools` (local processes or Dask), :mod:`.gradebook`, then :mod:`.tables`, :mod:`.feedback` and
:mod:`.analysis`), and grading on Dask safely (:mod:`.dask_tls`)."""
