"""The published site (publish.pages_site): main's book at the root and each pull request's under _preview/<N>/ on a
storage branch, pushed to a remote (a bare repository here), a closed pull request's preview removed, the pull
request's number accepted only for the commit that was built, one comment and one status with the link."""

import json
import subprocess

import pytest

from inkground_lib.publish import pages_site as ps


def _git(*args, cwd):
    return subprocess.run(["git", *map(str, args)], cwd=cwd, check=True, capture_output=True, text=True).stdout


def _book(folder, title):
    (folder / "_static").mkdir(parents=True)
    (folder / "index.html").write_text(f"<title>{title}</title>")
    (folder / "_static" / "a.css").write_text(title)
    return folder


@pytest.fixture
def repo(tmp_path):
    remote = tmp_path / "remote.git"
    _git("init", "-q", "--bare", remote, cwd=tmp_path)
    work = tmp_path / "work"
    _git("init", "-q", work, cwd=tmp_path)
    (work / "README").write_text("x")
    _git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init", "--allow-empty", cwd=work)
    _git("remote", "add", "origin", remote, cwd=work)
    return work, remote


def _publish(work, *args):
    proc = subprocess.run(["python3", "-m", "inkground_lib.publish.pages_site", *map(str, args)], cwd=work,
                          capture_output=True, text=True, env={"PATH": "/usr/bin:/bin",
                                                                "PYTHONPATH": str(ps.Path(ps.__file__).parents[2])})
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def _tree(remote):
    return sorted(_git("ls-tree", "-r", "--name-only", ps.BRANCH, cwd=remote).split())


def test_main_and_previews_live_side_by_side_and_a_closed_preview_goes(repo, tmp_path):
    work, remote = repo
    main1, pr7 = _book(tmp_path / "main1", "main 1"), _book(tmp_path / "pr7", "pr 7")
    assert "pushed" in _publish(work, "place", "--site", tmp_path / "s1", "--html", main1)
    assert _tree(remote) == [".nojekyll", "_static/a.css", "index.html"]
    _publish(work, "place", "--site", tmp_path / "s2", "--html", pr7, "--preview", "7")
    assert _tree(remote) == [".nojekyll", "_preview/7/_static/a.css", "_preview/7/index.html", "_static/a.css",
                             "index.html"]
    main2 = _book(tmp_path / "main2", "main 2")
    (main2 / "_static" / "a.css").unlink()  # a file the new book no longer has is removed from the root
    _publish(work, "place", "--site", tmp_path / "s3", "--html", main2)
    assert _tree(remote) == [".nojekyll", "_preview/7/_static/a.css", "_preview/7/index.html", "index.html"]
    assert "main 2" in _git("show", f"{ps.BRANCH}:index.html", cwd=remote)
    assert "pr 7" in _git("show", f"{ps.BRANCH}:_preview/7/index.html", cwd=remote)
    out = _publish(work, "drop", "--site", tmp_path / "s4", "--preview", "7")
    assert "pushed" in out and _tree(remote) == [".nojekyll", "index.html"]
    # the folder uploaded to Pages is the site as pushed
    assert sorted(p.name for p in (tmp_path / "s4").iterdir() if p.name != ".git") == [".nojekyll", "index.html"]


def test_bad_input_is_refused(tmp_path):
    with pytest.raises(ps.SiteError, match="no index.html"):
        ps.place(tmp_path, tmp_path / "missing")
    book = _book(tmp_path / "b", "b")
    for bad in ("../x", "7/../../etc", "0", "abc", " 7"):
        with pytest.raises(ps.SiteError, match="not a number"):
            ps.place(tmp_path / "site", book, bad)
    assert ps.preview_url("https://o.github.io/inkground/", 12) == "https://o.github.io/inkground/_preview/12/"


def test_the_pull_request_number_is_trusted_only_for_the_built_commit(tmp_path):
    (tmp_path / "pr.txt").write_text("12\n")
    calls = []

    def api(*args):
        calls.append(args)
        return json.dumps({"head": {"sha": "abc"}})
    assert ps.pr_number(tmp_path, "abc", "o/r", api) == "12" and calls == [("repos/o/r/pulls/12",)]
    with pytest.raises(ps.SiteError, match="its head is abc, the build was of def"):
        ps.pr_number(tmp_path, "def", "o/r", api)
    (tmp_path / "pr.txt").write_text("12; rm -rf /")
    with pytest.raises(ps.SiteError, match="not a number"):
        ps.pr_number(tmp_path, "abc", "o/r", api)


def test_one_comment_edited_after_and_a_status_with_the_link():
    posted = []
    existing = []

    def api(*args):
        posted.append(args)
        if "--paginate" in args:
            return json.dumps([existing])
        return "{}"
    assert ps.announce("o/r", "5", "f" * 40, "https://o.github.io/r/_preview/5/", api) == "created"
    post = next(a for a in posted if a[:3] == ("-X", "POST", "repos/o/r/issues/5/comments"))
    assert ps.MARKER in post[-1] and "https://o.github.io/r/_preview/5/" in post[-1]
    status = next(a for a in posted if a[2] == f"repos/o/r/statuses/{'f' * 40}")
    assert "target_url=https://o.github.io/r/_preview/5/" in status and "context=book preview" in status
    existing.append({"id": 99, "body": post[-1].removeprefix("body="), "user": {"login": "github-actions[bot]"}})
    existing.append({"id": 98, "body": ps.MARKER, "user": {"login": "someone"}})  # a quote by a person: left alone
    posted.clear()
    assert ps.announce("o/r", "5", "e" * 40, "https://o.github.io/r/_preview/5/", api) == "updated"
    assert any(a[:3] == ("-X", "PATCH", "repos/o/r/issues/comments/99") for a in posted)
    assert not any(a[:3] == ("-X", "POST", "repos/o/r/issues/5/comments") for a in posted)
