"""Math as MathML written at build time: the pages need no script and no network.

Sphinx's default HTML math renderer (MathJax) loads its script from a CDN, so an offline
reader sees raw ``\\(10^{5}\\)``. Here each ``$...$`` and ``$$...$$`` (MyST's dollarmath)
and ``{math}`` role or directive is converted by latex2mathml (pure Python, the ``docs``
extra) into MathML, which browsers render natively (Chromium 109+, Firefox, Safari).
"""

from __future__ import annotations

from docutils import nodes
from latex2mathml.converter import convert


def visit_inline(self, node: nodes.Element) -> None:
    self.body.append(f'<span class="math">{convert(node.astext())}</span>')
    raise nodes.SkipNode


def visit_block(self, node: nodes.Element) -> None:
    if node.get("label"):  # numbered equation: its anchor, as MathJax's renderer writes it
        self.body.append(f'<span class="eqno">({node["number"]})</span>')
    mathml = convert(node.astext(), display="block")
    self.body.append(f'<div class="math notranslate">{mathml}</div>')
    raise nodes.SkipNode


def setup(app):
    app.add_html_math_renderer("mathml", (visit_inline, None), (visit_block, None))
    return {"parallel_read_safe": True, "parallel_write_safe": True}
