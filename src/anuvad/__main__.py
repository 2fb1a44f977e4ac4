"""``python -m anuvad``: the ``anuvad`` command."""

from anuvad.cli.main import main

raise SystemExit(main())
