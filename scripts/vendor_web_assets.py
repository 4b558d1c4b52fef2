"""Copy the page's front-end library from the locked npm install into the package.

``cd clients/web && npm ci`` installs ``@dagrejs/dagre`` at the version
``package-lock.json`` pins; this script copies its built file and licence into
``scheduler/rest/assets/``, where the page inlines them. The copy is committed so
that ``pip install`` alone serves the page (no Node.js at run time);
``tests/test_web_page.py`` checks it is byte-identical to the locked package
whenever ``clients/web/node_modules`` is there (as in CI).
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "clients" / "web" / "node_modules" / "@dagrejs" / "dagre"
ASSETS = ROOT / "scheduler" / "rest" / "assets"
FILES = {"dist/dagre.min.js": "dagre.min.js", "LICENSE": "dagre.LICENSE"}


def main() -> int:
    if not PACKAGE.is_dir():
        print(f"{PACKAGE} is missing: run `npm ci` in clients/web first", file=sys.stderr)
        return 2
    for source, target in FILES.items():
        shutil.copyfile(PACKAGE / source, ASSETS / target)
        print(ASSETS / target)
    return 0


if __name__ == "__main__":
    sys.exit(main())
