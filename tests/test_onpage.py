"""course.grading.authoring.onpage: which lines of a reference a student can read on the page."""
from course.grading.authoring import onpage

REFERENCE = '''
def weighted(x, w=None):
    """Docstring lines never count, even long ones like this."""
    import torch
    # a comment that is long enough to count if comments counted
    total = (x * w).sum(dim=-1) / w.sum(dim=-1)
    if w is None and x.dim() > 1:
        return x
    return total.clamp(min=0.0).to(x.dtype)
'''


def test_code_lines_leave_out_signature_docstring_imports_comments_and_short_lines():
    assert onpage.code_lines(REFERENCE) == ["total = (x * w).sum(dim=-1) / w.sum(dim=-1)",
                                           "if w is None and x.dim() > 1:", "return total.clamp(min=0.0).to(x.dtype)"]


def test_code_lines_leave_out_idioms():
    common = {onpage._key("if w is None and x.dim() > 1:")}
    assert "if w is None and x.dim() > 1:" not in onpage.code_lines(REFERENCE, common)
    assert onpage._key("if mask is None and h.dim() > 1:") in common          # renamed: the same idiom


def test_renamed_keeps_meaningful_names_only():
    assert onpage.renamed("total = (x * w).sum(dim=-1)") == onpage.renamed("s = (a * b).sum(dim=-1)")
    assert onpage.renamed("total = (x * w).sum(dim=-1)") != onpage.renamed("s = (a * b).mean(dim=-1)")
    assert onpage.renamed("y = f(x, z, w)") is None             # nothing left that says what it does
    assert onpage.renamed("def (") is None                      # not a line of Python


def test_page_finds_verbatim_and_renamed_lines_with_their_place():
    page = onpage.Page()
    page.add("cell 3", "the sum is total=(x*w).sum(dim=-1)/w.sum(dim=-1) here", [])
    page.add("cell 7", "", ["out = y.clamp(min=0.0).to(y.dtype)"])
    assert page.find("total = (x * w).sum(dim=-1) / w.sum(dim=-1)") == "cell 3"
    assert page.find("return total.clamp(min=0.0).to(x.dtype)") is None    # 'return' is not on the page
    assert page.find("r = total.clamp(min=0.0).to(x.dtype)") == "cell 7"
    assert page.find("r = total.clamp(min=1.0).to(x.dtype)") is None


def test_markdown_code_reads_fences_code_tags_and_backticks():
    text = ("Use `x.sum(dim=-1)` then\n```python\ny = x &gt; 0\n```\n"
            "<details><code>w.clamp(min=0)</code></details>")
    assert onpage._markdown_code(text) == ["y = x > 0", "w.clamp(min=0)", "x.sum(dim=-1)"]


def test_share_counts_lines_seen():
    item = onpage.Share("01", "ex", (("a = 1", "cell 1"), ("b = 2", None), ("c = 3", None)))
    assert (item.seen, item.total) == (1, 3) and abs(item.share - 1 / 3) < 1e-12
    assert "cell 1: a = 1" in item.describe() and "OVER" not in item.describe()
