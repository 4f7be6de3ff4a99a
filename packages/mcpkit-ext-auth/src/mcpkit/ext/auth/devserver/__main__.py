"""``python -m mcpkit.ext.auth.devserver``: see :mod:`mcpkit.ext.auth.devserver.cli`."""

from mcpkit.ext.auth.devserver.cli import main

raise SystemExit(main())
