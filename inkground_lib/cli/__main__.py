"""``python -m inkground_lib.cli``: the ``inkground`` command."""

import sys

from inkground_lib.cli import main

sys.exit(main())
