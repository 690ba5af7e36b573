"""A Sphinx extension that keeps the built book free of external references.

It drops the Thebe scripts that sphinx-thebe writes into every page (MathJax is served locally by
sphinx-mathjax-offline). The design page of the book has the details.
"""


def _is_thebe(js) -> bool:
    name = str(getattr(js, "filename", js) or "")
    body = str(getattr(js, "attributes", {}).get("body", "")) if hasattr(js, "attributes") else ""
    return "thebe" in name.lower() or "THEBE_JS_URL" in body


def drop_external_scripts(app, pagename, templatename, context, doctree):
    files = context.get("script_files")
    if files:
        context["script_files"] = [js for js in files if not _is_thebe(js)]


def setup(app):
    app.connect("html-page-context", drop_external_scripts, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
