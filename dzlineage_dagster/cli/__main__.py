import sys

from dzlineage_dagster.cli import main

sys.exit(main())
