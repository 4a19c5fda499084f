"""``python -m tuna_tools`` is the ``tuna`` command."""
import sys

from tuna_tools.cli import main

sys.exit(main())
