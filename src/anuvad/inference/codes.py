"""Format placeholders and markup written as text: what a translation of a UI string or a
template must copy as written (:mod:`anuvad.inference.verbatim`, kind ``code``).

"Hello {name}, you have {count} new messages." came back as "हो सकता है, आपके पास नए संदेश {C},
नए संदेश हैं।", "Delete %s files?" as "फ़ाइल मिटाएँ?" and "Use the <div> element." as "तत्त्व का
प्रयोग करें।": a small model drops or rewrites what it has never seen. Found here:

* Python / .NET / ICU format fields: ``{}``, ``{0}``, ``{name}``, ``{count:d}``, ``{x!r}``;
* template variables: ``{{user}}``, ``{{ count }}`` (Jinja, Mustache, Angular), ``${var}``;
* printf conversions: ``%s``, ``%d``, ``%.2f``, ``%(name)s``, ``%1$s`` (not a per cent sign
  after a number, "45%", nor "%" before a word, "50 % discount");
* a tag written as text, standing as a word: ``<div>``, ``</b>``, ``<br/>``, ``<a href="x">``
  (in an HTML document, text that the page shows as a tag: ``&lt;div&gt;``); not one glued to
  a word ("<b>Note:</b>", markup a plain text carries, whose words are the model's);
* inline code between backticks, as Markdown, chat and commit messages write it ("Run `pip
  install anuvad` to install it." came back "… 'िपिप' की स्थापना …").
"""

from __future__ import annotations

import re

__all__ = ["CODE"]

CODE = re.compile(
    r"\{\{\s*[\w.|: -]{1,40}?\s*\}\}"  # {{user}}, {{ count }}
    r"|\$\{[\w.-]{1,40}\}"  # ${var}
    r"|\{[\w.-]{0,40}(?:[:!][^{}\s]{0,20})?\}"  # {}, {0}, {name}, {count:d}, {x!r}
    r"|(?<![\w%])%(?:\([\w.-]{1,40}\)|\d\$)?[-+#0]*(?:\d+|\*)?(?:\.\d+)?[sdifuxXeEgGc]"
    r"(?![A-Za-z])"  # %s, %d, %.2f, %(name)s, %1$s
    r"|(?<!\S)</?[A-Za-z][\w-]{0,20}(?:\s[^<>]{0,80})?/?>(?!\w)"  # <div>, <br/> as a word
    r"|(?<!`)`[^`\n]{1,200}`(?!`)"  # `inline code`
)
