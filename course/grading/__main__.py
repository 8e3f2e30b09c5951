"""``python -m course.grading``: see :mod:`course.grading.cli`."""
import sys

from course.grading.cli import main

if __name__ == "__main__":
    sys.exit(main())
