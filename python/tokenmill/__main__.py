"""``python -m tokenmill`` runs the ``tokenmill`` command."""

import sys

from tokenmill.cli import main

sys.exit(main())
