import sys

from ondol.cli import main

sys.exit(main())
