"""``python -m scheduler``: the same CLI as the ``yunikorn-fsm`` command."""

from __future__ import annotations

from .cli import main

raise SystemExit(main())
