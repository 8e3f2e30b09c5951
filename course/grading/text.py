"""Student-controlled text, made safe for where it is shown: a terminal, HTML, markdown.

Everything a submission can put into a string (an exception message, a
``repr``, a file name, a printed line) passes through here before the
instructor's side prints or renders it:

* :func:`printable` for a terminal or a log: control characters (ANSI escape
  sequences, carriage returns, the bell, OSC window-title and clipboard
  sequences, C1 controls) and bidirectional overrides are removed, and the
  text is capped.
* :func:`cap` for any message: at most a few hundred characters, with the
  cut said.
* :func:`markdown_block` for markdown that a renderer turns into HTML (the
  gradebook comment that ``generate_feedback`` renders, ``grader.md``): the text
  becomes an indented code block, where neither HTML nor markdown syntax is
  interpreted, and line breaks survive.
* :func:`fenced` for a fenced code block whose fence is longer than any run of
  backticks in the text.
"""
from __future__ import annotations

import html
import re
import unicodedata

STUDENT_TEXT_CHARS = 300  # an exception text or a repr from a submission, as shown to anyone

# C0 controls except tab and newline, DEL, C1 controls, and the bidirectional embedding/override/isolate marks.
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")
# Whole escape sequences first (CSI ... final byte; OSC ... BEL or ST), so their parameters do not survive.
_ESCAPES = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]|\x9b[0-?]*[ -/]*[@-~]")


def cap(text: object, limit: int = STUDENT_TEXT_CHARS) -> str:
    """``str(text)`` cut to ``limit`` characters, saying how much was cut."""
    s = text if isinstance(text, str) else str(text)
    if len(s) <= limit:
        return s
    return s[:limit] + f" [... {len(s) - limit} more characters not shown]"


def printable(text: object, limit: int | None = 2000, keep_newlines: bool = True) -> str:
    """``text`` with escape sequences and control characters removed (safe to print to a terminal), capped."""
    s = text if isinstance(text, str) else str(text)
    if limit is not None and len(s) > 4 * limit:  # don't scan megabytes to show a few hundred characters
        s = s[:4 * limit]
    s = _ESCAPES.sub("", s)
    s = s.replace("\r\n", "\n").replace("\r", "\n")
    s = _CONTROL.sub("", s)
    if not keep_newlines:
        s = s.replace("\n", " ").replace("\t", " ")
    s = "".join(ch for ch in s if unicodedata.category(ch) not in ("Cs", "Co"))
    return cap(s, limit) if limit is not None else s


def one_line(text: object, limit: int = STUDENT_TEXT_CHARS) -> str:
    """A single printable line (for a table cell or a log line)."""
    return printable(text, limit, keep_newlines=False)


def markdown_block(text: object, limit: int | None = 4000) -> str:
    """``text`` as an indented markdown code block: rendered verbatim (no HTML, links or emphasis), lines kept."""
    s = printable(text, limit)
    return "\n".join("    " + line for line in s.split("\n"))


def fenced(text: object, info: str = "", limit: int | None = 4000) -> str:
    """``text`` in a fenced code block whose fence no run of backticks inside can close."""
    s = printable(text, limit)
    longest = max((len(m) for m in re.findall(r"`+", s)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{info}\n{s}\n{fence}"


def html_text(text: object, limit: int | None = 4000) -> str:
    """``text`` escaped for HTML (and made printable)."""
    return html.escape(printable(text, limit), quote=True)


# --- HTML from a student, as Formgrader and the feedback show it ------------------------------------
#
# nbconvert's templates put a markdown cell's HTML on the page as it is (the classic template cleans it only
# with ``sanitize_html``, which Formgrader and ``generate_feedback`` leave off), and ``SanitizeHTML`` cleans the
# markdown *source*: it never sees a markdown link ``[x](javascript:...)``, an autolink or a reference
# definition, and it escapes the course's own ``->`` and ``<details>``. So a student's markdown is rendered
# here first, by nbconvert's own renderer, and the HTML it makes is cleaned against an allow-list: tags for
# text, tables and images, every attribute quoted, links only to http(s), mailto or the same page,
# images only from the notebook's own PNG/JPEG data, no ``id``, ``name``, ``class`` or ``style`` (they could
# clobber or restyle Formgrader's own page), no event handler.

LINK_SCHEMES = frozenset({"http", "https", "mailto"})
_TAGS = frozenset({
    "a", "abbr", "acronym", "b", "blockquote", "br", "caption", "cite", "code", "col", "colgroup", "dd", "del",
    "details", "dfn", "div", "dl", "dt", "em", "h1", "h2", "h3", "h4", "h5", "h6", "hr", "i", "img", "ins", "kbd",
    "li", "mark", "ol", "p", "pre", "q", "s", "samp", "small", "span", "strong", "sub", "summary", "sup", "table",
    "tbody", "td", "tfoot", "th", "thead", "tr", "tt", "u", "ul", "var"})
# Browsers drop these anywhere in a URL (tab, newline) or around it (C0 controls, space); NBSP and friends,
# entities and upper case are normalised too, so `` jav&#x61;script:`` is seen as what it is.
_URL_NOISE = re.compile(r"[\x00-\x20\x7f-\xa0\u1680\u180e\u2000-\u200f\u2028\u2029\u202f\u205f\u3000\ufeff\ufffd]+")
_SCHEME = re.compile(r"([a-z][a-z0-9+.\-]*):")
# nbconvert's ``strip_files_prefix`` (the Formgrader template applies it after rendering) turns href="files/x"
# into href="x": the address is judged as it will be once that prefix is gone.
_FILES_PREFIX = re.compile(r"^(?:/?files/)+")
IMAGE_DATA = re.compile(r"data:image/(?:png|jpeg);base64,[A-Za-z0-9+/=]*\Z")
_NUMBER = re.compile(r"[0-9]{1,5}(?:\.[0-9]{1,3})?\Z")
_CODE_CLASS = re.compile(r"language-[A-Za-z0-9_+\-]{1,40}\Z")
STUDENT_HTML_CLASS = "student-text"  # the wrapper of a student's rendered markdown (see markdown_cell_html)
_WRAP = f'<div class="{STUDENT_HTML_CLASS}">'
_PRE = re.compile(r"(<pre>.*?</pre>)", re.S)


def url_scheme(value: str) -> str | None:
    """The scheme a browser would find in the attribute value ``value`` (lower case), or ``None`` for a relative one."""
    s = _URL_NOISE.sub("", html.unescape(html.unescape(value))).lower()
    s = _FILES_PREFIX.sub("", s)
    m = _SCHEME.match(s)
    return m.group(1) if m else None


def safe_link(value: str) -> bool:
    """Whether ``value`` may stay an ``href``: an http(s) or mailto address, or a place on the same page (``#x``).

    Never javascript:, data: or vbscript:, and no relative address: from Formgrader's page or the feedback a
    relative link reaches files served by the Jupyter server itself (``appendix.html``, ``../../submitted/``).
    """
    scheme = url_scheme(value)
    if scheme is not None:
        return scheme in LINK_SCHEMES
    s = _URL_NOISE.sub("", html.unescape(html.unescape(value)))
    return s.startswith("#")


def safe_image(value: str) -> bool:
    """Whether ``value`` may stay an ``<img src>``: only PNG or JPEG data carried in the page (no address: no beacon)."""
    s = _URL_NOISE.sub("", html.unescape(value))
    return bool(IMAGE_DATA.match(s)) and url_scheme(value) == "data"


def _attribute(tag: str, name: str, value: str) -> bool:
    if name in ("title", "alt"):
        return True
    if tag == "a" and name == "href":
        return safe_link(value)
    if tag == "img" and name == "src":
        return safe_image(value)
    if tag == "img" and name in ("width", "height"):
        return bool(_NUMBER.match(value.strip()))
    if tag in ("td", "th") and name in ("colspan", "rowspan"):
        return value.strip().isdigit() and len(value.strip()) < 4
    if tag in ("td", "th", "tr") and name == "align":
        return value.strip().lower() in ("left", "right", "center")
    if tag == "ol" and name == "start":
        return value.strip().isdigit() and len(value.strip()) < 7
    if tag == "details" and name == "open":
        return True
    if tag == "code" and name == "class":
        return bool(_CODE_CLASS.match(value))
    return tag == "div" and name == "class" and value == STUDENT_HTML_CLASS


def clean_html(fragment: str) -> str:
    """``fragment`` (HTML from a student) with only the allowed tags and attributes, every attribute quoted.

    Tags not allowed (``<script>``, ``<svg>``, ``<iframe>``, ``<style>``, forms ...) are escaped, so they show
    as text; attributes not allowed (event handlers, ``style``, ``id``) and links or images to addresses not
    allowed are dropped (a link then does nothing). Comments are removed.
    """
    from bleach.sanitizer import Cleaner

    # bleach checks URL protocols again after _attribute; "data" must pass there for the images _attribute allows
    cleaner = Cleaner(tags=_TAGS, attributes=_attribute, protocols=LINK_SCHEMES | {"data"}, strip=False,
                      strip_comments=True)
    return cleaner.clean(fragment if isinstance(fragment, str) else str(fragment))


class _Attachments(dict):
    """A cell's attachments for nbconvert's renderer: a missing one is empty (nbconvert would raise), not an error."""

    def __contains__(self, key: object) -> bool:
        return True

    def __missing__(self, key: str) -> dict:
        return {}


def markdown_html(source: str, attachments: dict | None = None) -> str:
    """A student's markdown rendered as nbconvert renders it, then cleaned by :func:`clean_html`.

    Attachments are used only as PNG or JPEG data; any other attachment, and a missing one, shows nothing.
    """
    from nbconvert.filters.markdown_mistune import IPythonRenderer, MarkdownWithMath

    images = _Attachments()
    for name, data in (attachments or {}).items():
        if isinstance(name, str) and isinstance(data, dict):
            images[name] = {k: v for k, v in data.items()
                            if k in ("image/png", "image/jpeg") and isinstance(v, str) and IMAGE_DATA.match(
                                f"data:{k};base64,{v}")}
    renderer = IPythonRenderer(escape=False, attachments=images)
    try:
        rendered = MarkdownWithMath(renderer=renderer).render(source)
    except Exception:  # noqa: BLE001 - a student's markdown that nbconvert cannot render is shown as text
        rendered = "<pre>" + html.escape(source) + "</pre>"
    return clean_html(rendered)


def markdown_cell_html(source: str, attachments: dict | None = None) -> str:
    """A student's markdown cell made into one line of clean HTML that renders the same and stays inert.

    The result is ``<div class="student-text">...</div>`` on a single line (line breaks inside ``<pre>`` become ``&#10;``), so
    the markdown renderer of nbconvert's template takes the whole cell as one raw HTML block: no markdown
    inside it is interpreted again (an escaped ``<script>`` line holding ``[x](javascript:...)`` does not
    become a link). A source already in this form is only cleaned again (the function is idempotent:
    Formgrader and ``generate_feedback`` render the graded notebook, which was already made safe).
    """
    s = source if isinstance(source, str) else "".join(source)
    if s.startswith(_WRAP) and "\n" not in s and s.endswith("</div>"):
        body = clean_html(s[len(_WRAP):-len("</div>")])
    else:
        body = markdown_html(s, attachments)
    # Inside <pre> a line break is kept as a character reference; elsewhere it is only white space (a space
    # keeps tables intact, where the parser would move a character reference out of the table).
    parts = _PRE.split(body.replace("\r\n", "\n").replace("\r", "\n"))
    body = "".join(p.replace("\n", "&#10;") if i % 2 else p.replace("\n", " ") for i, p in enumerate(parts))
    return f"{_WRAP}{body}</div>"
