"""Student text made safe: printable for a terminal, capped, and rendered as text (never as HTML) in markdown."""
from __future__ import annotations

from nbconvert.filters.markdown import markdown2html

from course.grading import text


def test_printable_removes_escape_sequences_and_controls():
    hostile = "ok\x1b]0;pwned\x07\x1b]52;c;cHduZWQ=\x07\x1b[2K\rforged\x1b[31m red\x9b1m\u202eevil\x00"
    out = text.printable(hostile)
    for bad in ("\x1b", "\x07", "\x9b", "\x00", "\u202e", "\r"):
        assert bad not in out
    assert "ok" in out and "forged" in out and "red" in out and "pwned" not in out
    assert "\n" in text.printable("a\nb") and "\n" not in text.one_line("a\nb")


def test_cap_says_what_it_cut():
    assert text.cap("x" * 1000, 300).endswith("[... 700 more characters not shown]")
    assert text.cap("short") == "short"
    assert len(text.printable("y" * 10 ** 7, 500)) < 600


def test_a_markdown_block_renders_as_text_with_its_line_breaks():
    comment = ("Grader (outside the kernel):\ntest_a: passed\ntest_b: FAILED - got <img src=x onerror=alert(1)>"
               "\n[click](javascript:alert(2)) **bold** <script>alert(3)</script>")
    html = markdown2html(text.markdown_block(comment))
    assert "<pre><code>" in html
    assert "<img" not in html and "<script" not in html and 'href="javascript' not in html
    assert "&lt;img src=x onerror=alert(1)&gt;" in html and "**bold**" in html
    assert "test_a: passed\ntest_b: FAILED" in html  # the line breaks survive


def test_fenced_blocks_cannot_be_closed_from_inside():
    inner = "```\n</pre><script>x</script>\n````"
    block = text.fenced(inner)
    fence = block.split("\n", 1)[0]
    assert len(fence) == 5 and block.endswith("\n" + fence)
    html = markdown2html(block)
    assert "<script" not in html
