"""The cluster section's Markdown shows what ranks send as text (issue 21 items 5 and 7).

Red team, this round: a rank's error, versions, env values and host name are whatever that rank
sends, and the cluster section escaped only ``\\ < |``: a lying rank's
``[x](javascript:alert(1))`` became a link, ``![p](https://tracker/p.png)`` an image in rank 0's
Markdown report. Parsed here by a real CommonMark parser (markdown-it-py, which rich brings).
"""

from __future__ import annotations

from markdown_it import MarkdownIt
from test_merge import payload

from preflight.cluster.merge import merge
from preflight.cluster.view import render_section

HOSTILE = ("[x](javascript:alert(1)) ![p](https://tracker.example/p.png) <img src=x "
           "onerror=alert(1)> <https://evil.example/> `code` &#106;")


def _tokens(md: str) -> list:
    out = []
    for tok in MarkdownIt("commonmark").parse(md):
        out += [tok, *(tok.children or [])]
    return out


def test_what_a_rank_sends_is_text_in_the_markdown_section() -> None:
    facts = {"pkg.torch.version": "2.9.0", "gpu.names": ["H100"], "gpu.ccs": ["9.0"]}
    lying = dict(facts, **{"pkg.torch.version": HOSTILE, "gpu.names": [HOSTILE]})
    view = merge({0: payload(0, "a", 0, facts),
                  1: payload(1, HOSTILE, 0, lying, env={"NCCL_ALGO": HOSTILE}),
                  2: payload(2, "c", 0, error=HOSTILE)}, {}, world_size=3)
    for redact in (True, False):
        md = render_section(view, "markdown", redact=redact)
        assert "onerror" in md                          # shown, as text
        tokens = _tokens(md)
        assert not [t for t in tokens if t.type in ("link_open", "image", "html_inline",
                                                     "html_block")], md
