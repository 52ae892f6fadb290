"""Every internal link of the built site resolves: ``python docs/check_links.py docs/_build/html``.

Sphinx's ``-n`` checks cross-references it makes itself; this checks the HTML it wrote,
Markdown links of the pages included: each relative ``href`` or ``src`` must name a file
of the build and, with a ``#fragment``, an ``id`` in that file. External links (a scheme,
or ``//``) are not followed. Exit status 1 lists the broken links, page by page.
"""

from __future__ import annotations

import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit


class _Links(HTMLParser):
    def __init__(self):
        super().__init__()
        self.links: list[str] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if name == "id" and value:
                self.ids.add(value)
            elif name in ("href", "src") and value and tag in ("a", "img", "link", "script"):
                self.links.append(value)


def _parse(path: Path) -> _Links:
    parser = _Links()
    parser.feed(path.read_text(errors="replace"))
    return parser


def broken_links(site: Path) -> dict[str, list[str]]:
    """``{page: [broken link, ...]}`` over every HTML page under ``site``."""
    parsed: dict[Path, _Links] = {}

    def page(path: Path) -> _Links:
        if path not in parsed:
            parsed[path] = _parse(path)
        return parsed[path]

    broken: dict[str, list[str]] = {}
    for html in sorted(site.rglob("*.html")):
        for link in page(html).links:
            parts = urlsplit(link)
            if parts.scheme or link.startswith("//"):
                continue
            target = html if not parts.path else (html.parent / unquote(parts.path)).resolve()
            if target.is_dir():
                target = target / "index.html"
            ok = target.is_file() and site.resolve() in (
                target.resolve(),
                *target.resolve().parents,
            )
            if ok and parts.fragment and target.suffix == ".html":
                ok = unquote(parts.fragment) in page(target).ids
            if not ok:
                broken.setdefault(str(html.relative_to(site)), []).append(link)
    return broken


def main(argv: list[str]) -> int:
    if len(argv) != 1 or not Path(argv[0]).is_dir():
        print("usage: python docs/check_links.py BUILT_HTML_DIRECTORY", file=sys.stderr)
        return 2
    site = Path(argv[0])
    pages = len(list(site.rglob("*.html")))
    broken = broken_links(site)
    for page, links in broken.items():
        print(f"{page}: {len(links)} broken: {', '.join(sorted(set(links)))}")
    print(f"check_links: {pages} pages, {sum(map(len, broken.values()))} broken links")
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
