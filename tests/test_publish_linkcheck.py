"""The HTML works under a subpath: a site served under a prefix on loopback, every link and asset followed
(issue 35). The built book itself is checked in test_book.py."""
from inkground_lib.publish import linkcheck


def _site(root):
    (root / "book").mkdir(parents=True)
    (root / "_static").mkdir()
    (root / "index.html").write_text('<meta http-equiv="Refresh" content="0; url=book/intro.html" />')
    (root / "book" / "intro.html").write_text(
        '<link rel="stylesheet" href="../_static/a.css"><script src="../_static/a.js"></script>'
        '<a href="two.html#part">two</a><img src="../_static/i.png" alt="i"><a href="https://example.org/">out</a>')
    (root / "book" / "two.html").write_text('<h2 id="part">Part</h2><a href="intro.html">back</a>')
    (root / "_static" / "a.css").write_text("@font-face { src: url('f.woff2') }")
    for f in ("a.js", "f.woff2", "i.png"):
        (root / "_static" / f).write_bytes(b"x")
    return root


def test_a_sound_site_has_no_broken_link(tmp_path):
    rep = linkcheck.check(_site(tmp_path), "/inkground/")
    assert rep.broken == [] and rep.pages == 3 and rep.fetched == 7
    assert rep.external == {"https://example.org/"}


def test_root_absolute_missing_file_and_missing_anchor_are_broken(tmp_path):
    root = _site(tmp_path)
    two = root / "book" / "two.html"
    two.write_text(two.read_text() + '<a href="/_static/a.js">abs</a><img src="gone.png" alt="">'
                                      '<a href="intro.html#nowhere">x</a>')
    (root / "_static" / "a.css").write_text("@font-face { src: url('missing.woff2') }")
    broken = linkcheck.check(root, "/inkground/").broken
    assert len(broken) == 4, broken
    text = "\n".join(broken)
    assert "/_static/a.js leaves the prefix /inkground/" in text and "gone.png: HTTP 404" in text
    assert "#nowhere is not an anchor" in text and "missing.woff2: HTTP 404" in text
    # served at the root, the root-absolute link works: the prefix is what finds it
    assert len(linkcheck.check(root, "/").broken) == 3


def test_command_exit_status(tmp_path, capsys):
    assert linkcheck.main([str(_site(tmp_path)), "--prefix", "/x/"]) == 0
    assert "0 broken" in capsys.readouterr().out
    assert linkcheck.main([str(tmp_path / "nothing")]) == 2
