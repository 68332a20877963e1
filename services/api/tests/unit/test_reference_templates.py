"""The reference page and its start script are templates: the page autoescaped, the document's
address given to the script as a JSON string (no markup or quote in a value reaches either as code)."""

from __future__ import annotations

import json

from dps_api.resources.reference import _TEMPLATES


def test_the_page_escapes_what_it_is_given():
    page = _TEMPLATES.get_template("reference.html").render(page='/x"><script>alert(1)</script>')
    assert "<script>alert(1)" not in page and '/x&#34;&gt;&lt;script&gt;alert(1)&lt;/script&gt;/start.js' in page
    assert '<script src="/external/v1/docs/start.js"></script>' in _TEMPLATES.get_template("reference.html").render(
        page="/external/v1/docs")


def test_the_start_script_gets_the_address_as_a_string():
    address = '/a"});alert(1);</script>'
    script = _TEMPLATES.get_template("reference_start.js").render(document=address)
    literal = script.split("url: ", 1)[1].split(",\n", 1)[0]
    assert json.loads(literal) == address and "</script>" not in script  # one string: nothing breaks out
