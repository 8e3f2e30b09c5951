"""nbgrader integration: the one wrapper around nbgrader's environment, command line and hooks (:mod:`.wrapper`)
and the preprocessors ``nbgrader_config.py`` installs (:mod:`.preprocessors`). The in-kernel hidden tests of stock
``nbgrader autograde`` keep the name the grade cells call, :mod:`course.grading.inkernel`."""
