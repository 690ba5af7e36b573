"""The published site: the book of main at the root, the book of each open pull request under ``_preview/<N>/``, as
Project Pythia's cookbooks publish theirs (ProjectPythia/cookbook-actions, deploy-book.yaml and preview-comment.yaml,
read 2026-12-06: previews under ``_preview/<PR>`` beside the book, a bot comment on the pull request with the link).
The site's files are kept on a storage branch (:data:`BRANCH`) and each version of it is deployed with GitHub's
Pages actions (upload-pages-artifact, deploy-pages; the repository's Pages source is "GitHub Actions"), so a
preview never replaces the book and the book never removes a preview.

    python -m inkground_lib.publish.pages_site place --site DIR --html DIR [--preview N]   # main's book, or PR N's
    python -m inkground_lib.publish.pages_site drop --site DIR --preview N                  # a closed PR's preview
    python -m inkground_lib.publish.pages_site pr-number --artifact DIR --sha SHA --repo OWNER/NAME
    python -m inkground_lib.publish.pages_site announce --repo OWNER/NAME --pr N --sha SHA --url URL

``place`` and ``drop`` check out the storage branch into ``--site`` (a git worktree of the repository the command
runs in; an orphan branch the first time), change it, commit and push it. ``pr-number`` reads the pull request's
number from the build's artifact and accepts it only when that pull request's head is the commit that was built
(the artifact comes from a build of untrusted code). ``announce`` writes the link into one comment on the pull
request (made once, edited after) and into a commit status, so the reviewer opens the preview with one click from
the pull request. The last two use the GitHub CLI ``gh`` (on GitHub's runners), nothing else of GitHub's.
Standard library only: it runs on a runner where the project is not installed.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

BRANCH = "pages-site"
"""The storage branch of the published site (never the branch Pages serves: Pages serves what deploy-pages
uploads)."""
PREVIEWS = "_preview"
MARKER = "<!-- inkground-book-preview -->"
"""Marks the one comment the preview writes on a pull request (found again and edited on later pushes)."""
STATUS_CONTEXT = "book preview"
BOT = {"user.name": "github-actions[bot]", "user.email": "41898282+github-actions[bot]@users.noreply.github.com"}


class SiteError(RuntimeError):
    """The site cannot be changed or published as asked."""


def _git(*args, cwd: Path, check: bool = True) -> subprocess.CompletedProcess:
    proc = subprocess.run(["git", *map(str, args)], cwd=cwd, capture_output=True, text=True)
    if check and proc.returncode != 0:
        raise SiteError(f"git {' '.join(map(str, args))} failed in {cwd}: {proc.stderr.strip()[-2000:]}")
    return proc


def checkout(site: Path, repo: Path = Path("."), branch: str = BRANCH, remote: str = "origin") -> Path:
    """The storage branch checked out at ``site`` (a worktree of ``repo``): its last commit from ``remote``, or a
    new orphan branch with no file when the remote has none."""
    site, repo = Path(site).absolute(), Path(repo).absolute()
    if site.exists():
        raise SiteError(f"{site} exists: the site is checked out into a new folder")
    if _git("fetch", "--depth", "1", remote, f"refs/heads/{branch}", cwd=repo, check=False).returncode == 0:
        _git("worktree", "add", "--detach", site, "FETCH_HEAD", cwd=repo)
    else:
        _git("worktree", "add", "--detach", site, cwd=repo)
        _git("checkout", "--orphan", branch, cwd=site)
        _git("rm", "-rfq", "--ignore-unmatch", ".", cwd=site)
        for p in site.iterdir():
            if p.name != ".git":
                shutil.rmtree(p) if p.is_dir() else p.unlink()
    return site


def _clear(folder: Path, keep: set[str]) -> None:
    if folder.is_dir():
        for p in folder.iterdir():
            if p.name not in keep:
                shutil.rmtree(p) if p.is_dir() and not p.is_symlink() else p.unlink()


def _check_preview(preview) -> str:
    if not re.fullmatch(r"[1-9][0-9]{0,9}", str(preview)):
        raise SiteError(f"pull request number {preview!r}: not a number")
    return str(preview)


def place(site: Path, html: Path, preview: int | str | None = None) -> Path:
    """Put the built book ``html`` into the site at ``site``: at its root (every file there replaced, the
    previews kept) or, for pull request ``preview``, at ``_preview/<N>/`` (that preview replaced). Returns the
    folder written."""
    site, html = Path(site), Path(html)
    if not (html / "index.html").is_file():
        raise SiteError(f"{html}: no index.html; not a built book")
    if preview is None:
        dest = site
        _clear(dest, {".git", PREVIEWS})
    else:
        dest = site / PREVIEWS / _check_preview(preview)
        _clear(dest, set())
    dest.mkdir(parents=True, exist_ok=True)
    for p in html.iterdir():
        if p.name in (".git", PREVIEWS) and preview is None:
            continue
        target = dest / p.name
        shutil.copytree(p, target, symlinks=False) if p.is_dir() else shutil.copy2(p, target)
    (site / ".nojekyll").touch()  # files and folders starting with "_" (_static, _preview) are served as they are
    return dest


def drop(site: Path, preview: int | str) -> bool:
    """Remove the preview of pull request ``preview`` from the site; False when there was none."""
    dest = Path(site) / PREVIEWS / _check_preview(preview)
    if not dest.exists():
        return False
    shutil.rmtree(dest)
    if not any(dest.parent.iterdir()):
        dest.parent.rmdir()
    return True


def commit_and_push(site: Path, message: str, branch: str = BRANCH, remote: str = "origin") -> bool:
    """Commit everything in ``site`` (as github-actions[bot]) and push it to ``branch``; False when nothing
    changed (nothing is pushed then)."""
    _git("add", "-A", ".", cwd=site)
    if _git("diff", "--cached", "--quiet", cwd=site, check=False).returncode == 0:
        return False
    ident = [a for k, v in BOT.items() for a in ("-c", f"{k}={v}")]
    _git(*ident, "commit", "-q", "-m", message, cwd=site)
    _git("push", "-q", remote, f"HEAD:refs/heads/{branch}", cwd=site)
    return True


def preview_url(page_url: str, preview: int | str) -> str:
    """The address of pull request ``preview``'s book on the site whose address is ``page_url`` (deploy-pages'
    output ``page_url``, e.g. ``https://owner.github.io/repo/``)."""
    return f"{page_url.rstrip('/')}/{PREVIEWS}/{_check_preview(preview)}/"


def gh_api(*args: str) -> str:
    """``gh api ARGS`` (the GitHub CLI, authenticated by GH_TOKEN); its standard output."""
    proc = subprocess.run(["gh", "api", *args], capture_output=True, text=True)
    if proc.returncode != 0:
        raise SiteError(f"gh api {' '.join(args)}: {proc.stderr.strip()[-2000:]}")
    return proc.stdout


def pr_number(artifact: Path, sha: str, repo: str, api=gh_api) -> str:
    """The pull request number the build wrote into its artifact (``pr.txt``), accepted only when it is a number
    and that pull request's head commit is ``sha`` (the commit the build built)."""
    try:
        text = (Path(artifact) / "pr.txt").read_text("utf-8").strip()
    except OSError as e:
        raise SiteError(f"{artifact}: no pr.txt in the build's artifact ({e})") from None
    n = _check_preview(text)
    head = json.loads(api(f"repos/{repo}/pulls/{n}")).get("head", {}).get("sha")
    if head != sha:
        raise SiteError(f"pull request {n}: its head is {head}, the build was of {sha}; not published")
    return n


def announce(repo: str, pr: str, sha: str, url: str, api=gh_api) -> str:
    """The preview's link on pull request ``pr``: one comment (:data:`MARKER`; edited when it exists) and a
    commit status on ``sha`` whose Details link is the preview. Returns "created" or "updated"."""
    n = _check_preview(pr)
    body = (f"{MARKER}\n**Book preview** of {sha[:7]}: {url}\n\n"
            f"Built from this pull request by the `book` workflow; updated on every push, removed when the pull "
            f"request closes.")
    comments = json.loads(api("--paginate", "--slurp", f"repos/{repo}/issues/{n}/comments") or "[]")
    mine = [c for page in comments for c in (page if isinstance(page, list) else [page])
            if MARKER in (c.get("body") or "") and (c.get("user") or {}).get("login") == "github-actions[bot]"]
    if mine:
        api("-X", "PATCH", f"repos/{repo}/issues/comments/{mine[0]['id']}", "-f", f"body={body}")
    else:
        api("-X", "POST", f"repos/{repo}/issues/{n}/comments", "-f", f"body={body}")
    api("-X", "POST", f"repos/{repo}/statuses/{sha}", "-f", "state=success", "-f", f"target_url={url}",
        "-f", f"context={STATUS_CONTEXT}", "-f", "description=The book of this pull request")
    return "updated" if mine else "created"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="what", required=True)
    for name in ("place", "drop"):
        p = sub.add_parser(name)
        p.add_argument("--site", type=Path, required=True)
        p.add_argument("--preview", default="")
        p.add_argument("--html", type=Path)
        p.add_argument("--no-push", action="store_true", help="change the site folder only")
    p = sub.add_parser("pr-number")
    p.add_argument("--artifact", type=Path, required=True)
    p.add_argument("--sha", required=True)
    p.add_argument("--repo", required=True)
    p = sub.add_parser("announce")
    for k in ("--repo", "--pr", "--sha", "--url"):
        p.add_argument(k, required=True)
    a = ap.parse_args(argv)
    try:
        if a.what == "pr-number":
            print(f"number={pr_number(a.artifact, a.sha, a.repo)}")
            return 0
        if a.what == "announce":
            print(f"preview comment {announce(a.repo, a.pr, a.sha, a.url)} on pull request {a.pr}: {a.url}")
            return 0
        preview = a.preview or None
        if not a.site.exists():
            checkout(a.site)
        if a.what == "place":
            if a.html is None:
                raise SiteError("place needs --html")
            dest = place(a.site, a.html, preview)
            message = f"Preview of pull request #{preview}" if preview else "The book of main"
        else:
            if preview is None:
                raise SiteError("drop needs --preview")
            dest = a.site / PREVIEWS / str(preview)
            message = f"Remove the preview of pull request #{preview}" if drop(a.site, preview) else ""
        pushed = bool(message) and not a.no_push and commit_and_push(a.site, message)
        print(f"site {a.site}: {a.what} {dest.relative_to(a.site) if dest != a.site else '/'}"
              f"{'; pushed to ' + BRANCH if pushed else ''}")
        return 0
    except SiteError as e:
        print(f"pages_site: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
