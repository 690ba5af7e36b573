"""``inkground rate``: a local web app where people rate the pseudo-labels of a run (section 02's human step).

A pair is a page: the page photo beside the render of all its pseudo-labels, zoomable to each word (its pen
path plays); one score 0-10 per page. Ratings go, one row at a time and fsynced, to a ratings file outside
the run folder (:class:`inkground_lib.pseudo.ratings_log.RatingsLog`), which ``inkground pseudo --ratings`` and
section 02 (``ratings`` parameter) read. Assignment rules: :mod:`inkground_lib.rate.assign`; the run and its
ratings file: :mod:`inkground_lib.rate.session`; a page and the statistics as the app sends them:
:mod:`inkground_lib.rate.payloads`.

Framework and server: **Tornado** (tornado.web + its HTTP server, one process, one event loop). It is a
maintained framework *and* server in one package, already installed here (Jupyter depends on it), so this
adds no dependency; it brings what the app needs and should not be hand-written: routing, a static file
handler that refuses paths leaving its folder, XSRF protection for POSTs, cookies with HttpOnly/SameSite,
autoescaping templates, a body size limit, and binding to a chosen address or an ephemeral port. One event
loop serialises requests, so the ledger needs no lock; the ratings file is still locked (flock) for other
processes. Flask or FastAPI would each need a separate server (and new dependencies) for the same.
Tornado docs used (checked 2026-11-30): https://www.tornadoweb.org/en/stable/web.html (Application settings
``static_path``, ``xsrf_cookies``, ``xsrf_cookie_kwargs``, ``log_function``, ``template_path``;
RequestHandler.set_cookie's ``httponly``/``samesite``; StaticFileHandler.validate_absolute_path returns 403
for a path outside its root) and https://www.tornadoweb.org/en/stable/httpserver.html (``max_body_size``),
https://www.tornadoweb.org/en/stable/netutil.html (``bind_sockets``, port 0 = ephemeral).

Safety: binds to 127.0.0.1 by default; on any other address every request needs the access token
(``secrets.token_urlsafe``, compared with ``hmac.compare_digest``), printed to the terminal only; the Host
header must name the bound address (a DNS-rebinding page cannot read the photos); every POST must carry the
XSRF token in the ``X-XSRFToken`` header (a header a cross-origin page cannot send without a CORS preflight,
which this app never grants; the cookie alone is not enough, since any page on the same host, whatever its
port, can set cookies there), and an ``Origin`` or ``Sec-Fetch-Site`` header naming another origin is refused;
the session cookie is issued by the app at every login, never taken from the browser (a session id planted in a
rater's browser before they log in names nobody after it: no session fixation), and rotated there; a second
cookie keeps the session that wrote the browser's latest rating (the name's owner in the ratings file), so a
rater who logged in again since still continues after a restart, under a new id again;
only the run's page photos (by validated page id) and the app's two static files are served; every input
(page id, score, rater name, JSON body) is validated and answered 4xx when bad, never 500; the request log
shows paths without their query string. A ratings file moved or deleted while the app runs is an error shown
to the rater (503), never a new file.
"""

from __future__ import annotations

import asyncio
import errno
import hmac
import ipaddress
import json
import logging
import secrets
import threading
from pathlib import Path
from typing import Optional

import tornado.web
from tornado.httpserver import HTTPServer
from tornado.netutil import bind_sockets

from inkground_lib.core.defaults import DIGIT_PAIR_MS, RATE_HOST, RATE_PORT, RESERVE_SECONDS
from inkground_lib.pseudo.raters import LOG_COLUMNS, RatingsError, RatingsFileGone
from inkground_lib.rate.assign import (
    Ledger,
    RateError,
    check_name,
    check_page_id,
    check_score,
)
from inkground_lib.rate.payloads import page_payload, stats
from inkground_lib.rate.session import Session, log, open_session, session_hash

HERE = Path(__file__).resolve().parent
STATIC = HERE / "static"
TEMPLATES = HERE / "templates"

STATIC_FILES = ("app.js", "app.css")
"""The only files /static/ serves."""

SESSION_COOKIE = "inkground_session"
ANCHOR_COOKIE = "inkground_rated"
"""The session cookie of the browser's latest rating (the session the ratings file names it by): after a restart
the file says which session holds a name, and a browser that logged in again (a new session) since that rating
proves it is the same browser with this cookie."""
ACCESS_COOKIE = "inkground_access"
MAX_BODY = 16 * 1024
"""Largest request body accepted (bytes): requests are tiny JSON objects."""


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


# --------------------------------------------------------------------------------------------- handlers

class Base(tornado.web.RequestHandler):
    @property
    def s(self) -> Session:
        return self.application.settings["session"]

    # Tornado's own warnings (e.g. an XSRF refusal) print _request_summary(), by default the URI with its
    # query string, which may hold ?token=: here the path only (a private hook of tornado.web, 6.x).
    def _request_summary(self) -> str:
        return f"{self.request.method} {self.request.path} ({self.request.remote_ip})"

    def set_default_headers(self) -> None:
        self.set_header("Content-Security-Policy",
                        "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
                        "img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; "
                        "frame-ancestors 'none'")
        self.set_header("X-Content-Type-Options", "nosniff")
        self.set_header("Referrer-Policy", "no-referrer")
        self.set_header("X-Frame-Options", "DENY")

    def prepare(self) -> None:
        s = self.s
        if s.allowed_hosts is not None and self.request.host.lower() not in s.allowed_hosts:
            raise tornado.web.HTTPError(421)  # Misdirected Request: not the address this server was started on
        if s.token is None:
            return
        given = self.get_query_argument("token", None)
        if given is not None and hmac.compare_digest(given.encode(), s.token.encode()):
            self.set_cookie(ACCESS_COOKIE, s.token, httponly=True, samesite="Strict", expires_days=30)
            self.redirect(self.request.path)  # drop the token from the address bar and history
            return
        have = self.get_cookie(ACCESS_COOKIE) or self.request.headers.get("X-Inkground-Token") or ""
        if not hmac.compare_digest(have.encode(), s.token.encode()):
            self.set_status(403)
            self.set_header("Content-Type", "text/plain; charset=utf-8")
            self.finish("access token required: open the address with ?token=... printed in the terminal where "
                        "`inkground rate` runs\n")

    def check_xsrf_cookie(self) -> None:
        """Tornado's double-submit check (the ``_xsrf`` cookie's token must come back with the request),
        narrowed to what a cross-origin page cannot forge: the token only in the ``X-XSRFToken`` header (never
        a ``_xsrf`` query or form field), and no ``Origin`` / ``Sec-Fetch-Site`` header naming another
        origin. Called by Tornado for every POST (``xsrf_cookies=True``); a refusal is a 403."""
        h = self.request.headers
        if not h.get("X-XSRFToken"):
            raise tornado.web.HTTPError(403, "XSRF token missing: send it in the X-XSRFToken header")
        if self.get_argument("_xsrf", None) is not None:
            raise tornado.web.HTTPError(403, "XSRF token in the query or form: send it in the X-XSRFToken header only")
        origin = h.get("Origin")
        if origin is not None and origin.lower() != f"{self.request.protocol}://{self.request.host}".lower():
            raise tornado.web.HTTPError(403, "cross-origin request refused")
        site = h.get("Sec-Fetch-Site")
        if site is not None and site not in ("same-origin", "none"):
            raise tornado.web.HTTPError(403, "cross-origin request refused")
        super().check_xsrf_cookie()

    _issued: Optional[tuple[str, str]] = None  # (cookie, its hash) issued to this browser by this request

    def session_id(self, cookie: str = SESSION_COOKIE) -> Optional[str]:
        """The hash of this browser's session cookie, the one this request issued if it did (``cookie``: of
        :data:`ANCHOR_COOKIE` instead); None without one."""
        if cookie == SESSION_COOKIE and self._issued is not None:
            return self._issued[1]
        tok = self.get_cookie(cookie)
        return session_hash(tok) if tok and 20 <= len(tok) <= 100 else None

    def holder(self, sid: Optional[str]) -> Optional[str]:
        """``sid`` when that session holds a name, else None (a session id that holds no name is nobody's)."""
        return sid if sid is not None and any(held == sid for held in self.s.ledger.owner.values()) else None

    def mark_rated(self) -> None:
        """Remember in the browser the session its latest row was written under (:data:`ANCHOR_COOKIE`)."""
        tok = self._issued[0] if self._issued is not None else self.get_cookie(SESSION_COOKIE)
        if tok:
            self.set_cookie(ANCHOR_COOKIE, tok, httponly=True, samesite="Strict", expires_days=365)

    def issue(self, name: str, previous: Optional[str] = None) -> str:
        """Bind ``name`` to a new session id issued to this browser (a fresh random cookie; whatever cookie it
        sent is never kept, so a session id planted in a browser before its rater logs in names nobody), and
        move to it what ``previous`` (a session of this browser's) held; returns ``name`` as first spelled. The
        cookie is set once the name is bound (a name refused leaves the browser its session)."""
        tok = secrets.token_urlsafe(32)
        sid = session_hash(tok)
        name = self.s.ledger.bind(name, sid, previous=previous)
        self.set_cookie(SESSION_COOKIE, tok, httponly=True, samesite="Strict", expires_days=365)
        self._issued = (tok, sid)
        if previous is not None:
            self.s.current.pop(previous, None)
            self.s.sessions_last.pop(previous, None)
        self.s.current[sid] = name
        return name

    def rater(self) -> Optional[str]:
        sid = self.session_id()
        if sid is None:
            return None
        name = self.s.current.get(sid)
        if name is None:  # after a restart: the rater of this session's latest rating
            name = self.s.sessions_last.get(sid)
        if name is not None and self.s.ledger.owns(name, sid):
            self.s.current[sid] = name
            return name
        # after a restart, a browser that logged in again since its latest rating: the ratings file names the
        # session of that rating, which this browser's anchor cookie holds; it continues under a new session id
        # (never the one it sent, which may have been planted)
        anchor = self.session_id(ANCHOR_COOKIE)
        name = self.s.sessions_last.get(anchor) if anchor not in (None, sid) else None
        if name is not None and self.s.ledger.owns(name, anchor) and self.s.current.get(anchor) is None:
            return self.issue(name, previous=anchor)
        return None


class StaticFiles(tornado.web.StaticFileHandler):
    """Tornado's static handler behind the access checks, serving :data:`STATIC_FILES` only (any other path,
    ``/static/app.js%00.png`` or ``../``, is a 404 before it reaches the file system)."""

    s = Base.s
    _request_summary = Base._request_summary
    set_default_headers = Base.set_default_headers
    prepare = Base.prepare

    def parse_url_path(self, url_path: str) -> str:
        if url_path not in STATIC_FILES:
            raise tornado.web.HTTPError(404)
        return url_path


class Api(Base):
    def body(self, keys: tuple) -> dict:
        try:  # ValueError: also Python's limit on the digits of an integer; RecursionError: deep nesting
            data = json.loads(self.request.body or b"{}")
        except (ValueError, UnicodeDecodeError, RecursionError):
            raise RateError("request body: not JSON") from None
        if not isinstance(data, dict):
            raise RateError("request body: expected a JSON object")
        extra = sorted(set(data) - set(keys))
        if extra:
            raise RateError(f"request body: unknown fields {extra}")
        return data

    def reply(self, obj, status: int = 200) -> None:
        self.set_status(status)
        self.set_header("Content-Type", "application/json; charset=utf-8")
        self.set_header("Cache-Control", "no-store")
        self.finish(json.dumps(obj))

    def write_error(self, status_code: int, **kwargs) -> None:
        exc = kwargs.get("exc_info", (None, None))[1]
        if isinstance(exc, RateError):
            msg = str(exc)
        elif isinstance(exc, tornado.web.HTTPError) and exc.log_message and not exc.args:
            msg = exc.log_message  # e.g. the XSRF check's reason
        else:
            msg = self._reason
        self.reply({"error": msg}, status_code)

    def guard(self, fn):
        try:
            return fn()
        except RateError as e:
            self.reply({"error": str(e)}, e.status)
        except RatingsFileGone as e:  # the ratings file moved away: nothing was saved, and the rater must see it
            log.error("%s", e)
            self.reply({"error": str(e)}, 503)
        except RatingsError as e:  # a row another writer made meanwhile conflicts with this one
            self.reply({"error": str(e)}, 409)

    def need_rater(self) -> str:
        name = self.rater()
        if name is None:
            raise RateError("no rater: enter your rater name first", 401)
        return name

    def state(self, name: Optional[str], message: str = "") -> dict:
        L = self.s.ledger
        out = {"rater": name, "progress": L.progress(name), "message": message, "page": None}
        if name is not None:
            self.s.log.refresh()  # ratings other processes wrote
            page = L.next_page(name)
            out["progress"] = L.progress(name)
            if page is not None:
                out["page"] = page_payload(self.s.run, page)
            else:
                out["done"] = done_screen(L, name)
            out["can_undo"] = L.last_rated(name) is not None
        return out


def done_screen(L, name: str) -> dict:
    """What the Done screen says to ``name`` when no page is left for them: ``reason`` "waiting" (pages still
    need ratings but raters who have rated are looking at them), "none" (they rated nothing: every page had its
    ratings) or "finished" (they rated and nothing is left); ``title`` and ``text`` to show. Thanks only to
    someone who rated."""
    done = L.progress(name)["done"]
    waiting = L.waiting_for_others(name)
    pages = lambda n: f"{n} page{'' if n == 1 else 's'}"  # noqa: E731
    you = f"You rated {pages(done)}. " if done else "You have not rated a page yet. "
    if waiting:
        return {"reason": "waiting", "title": "Nothing to rate right now",
                "text": f"{you}{pages(waiting)} still {'needs' if waiting == 1 else 'need'} ratings, but other raters "
                        f"are looking at {'it' if waiting == 1 else 'them'} now; this page checks again every 30 "
                        f"seconds."}
    if not done:
        return {"reason": "none", "title": "Nothing to rate",
                "text": f"{you}Every page already has its {L.k} ratings from other raters, so there is nothing "
                        f"for you to rate in this session."}
    return {"reason": "finished", "title": "Done",
            "text": f"{you}Nothing is left for you: every page has its {L.k} ratings or you rated it. Thank you!"}


class Index(Base):
    def get(self) -> None:
        self.render("index.html", xsrf=self.xsrf_token.decode(), k=self.s.ledger.k, pair_ms=DIGIT_PAIR_MS)


class State(Api):
    def get(self) -> None:
        self.guard(lambda: self.reply(self.state(self.rater())))


class Login(Api):
    def post(self) -> None:
        def go():
            name = check_name(self.body(("name",)).get("name"), "rater name")
            # what this browser holds moves to its new session (rotated at every login): its session's names,
            # or after a restart those of its latest rating's session (the anchor cookie)
            old = self.holder(self.session_id()) or self.holder(self.session_id(ANCHOR_COOKIE))
            self.reply(self.state(self.issue(name, previous=old)))
        self.guard(go)


class Logout(Api):
    def post(self) -> None:
        sid = self.session_id()
        if sid is not None:
            name = self.s.current.pop(sid, None) or self.s.sessions_last.get(sid)
            if name is not None:
                self.s.ledger.release(name)
            self.s.sessions_last.pop(sid, None)
        self.reply({"rater": None})  # the cookie stays: logging in again from this browser takes the name back


class Rate(Api):
    def post(self) -> None:
        def go():
            name = self.need_rater()
            data = self.body(("page", "score"))
            page = check_page_id(data.get("page"), "page")
            score = check_score(data.get("score"), "score")
            L = self.s.ledger
            self.s.log.append({"page": page, "rater": name, "score": score, "action": "rate",
                               "session": self.session_id(), "raters_per_page": L.k},
                              check=lambda row: L.check_rating(page, name))
            self.mark_rated()
            out = self.state(name, f"Saved: {score} for page {page}.")
            if out["page"] is not None:
                out["message"] += f" Next: page {out['page']['id']}."
            self.reply(out)
        self.guard(go)


class Undo(Api):
    def post(self) -> None:
        def go():
            name = self.need_rater()
            self.body(())
            L = self.s.ledger
            self.s.log.refresh()
            page = L.last_rated(name)
            if page is None:
                raise RateError("nothing to undo: you have no rating left", 409)
            score = L.ratings[page][name]
            self.s.log.append({"page": page, "rater": name, "score": score, "action": "undo",
                               "session": self.session_id(), "raters_per_page": L.k},
                              check=lambda row: _same_last(L, name, page))
            self.mark_rated()
            L.reserve(name, page)
            self.reply(self.state(name, f"Undone: your {score} for page {page}; rate it again."))
        self.guard(go)


def _same_last(L: Ledger, name: str, page: str) -> None:
    if L.last_rated(name) != page:
        raise RateError("your last rating changed meanwhile (another tab?); try again", 409)


class Photo(Base):
    def get(self, page_id: str) -> None:
        try:
            page_id = check_page_id(page_id, "page")
        except RateError:
            raise tornado.web.HTTPError(400) from None
        if page_id not in self.s.run.all_pages:
            raise tornado.web.HTTPError(404)
        img = Path(self.s.run.page(page_id).image)
        kind = {".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".png": "image/png"}.get(img.suffix.lower())
        if kind is None or not img.is_file():
            raise tornado.web.HTTPError(404)
        self.set_header("Content-Type", kind)
        self.set_header("Cache-Control", "private, max-age=3600")
        self.finish(img.read_bytes())


class Stats(Base):
    def get(self) -> None:
        s = self.s
        try:
            s.log.refresh()
        except RatingsError as e:
            self.set_status(503)
            self.set_header("Content-Type", "text/plain; charset=utf-8")
            self.finish(f"{e}\n")
            return
        self.render("stats.html", st=stats(s), fmt=_fmt)


class StatsJson(Api):
    def get(self) -> None:
        def go():
            self.s.log.refresh()
            self.reply(stats(self.s))
        self.guard(go)


def _fmt(x) -> str:
    return "—" if x is None or (isinstance(x, float) and x != x) else f"{x:.3f}"


def _log_request(handler: tornado.web.RequestHandler) -> None:
    status = handler.get_status()
    level = logging.INFO if status < 400 else logging.WARNING
    log.log(level, "%d %s %s %.1fms", status, handler.request.method, handler.request.path,
            1000.0 * handler.request.request_time())


def make_app(session: Session) -> tornado.web.Application:
    return tornado.web.Application(
        [(r"/", Index), (r"/api/state", State), (r"/api/login", Login), (r"/api/logout", Logout),
         (r"/api/rate", Rate), (r"/api/undo", Undo), (r"/api/stats", StatsJson), (r"/stats", Stats),
         (r"/photo/([^/]+)", Photo)],
        session=session,
        # static_path / static_handler_class: /static/ served by StaticFileHandler, whose
        # validate_absolute_path answers 403 for a path outside the folder; template_path: autoescaping
        # templates; xsrf_cookies: every POST must carry the _xsrf cookie's value (header X-XSRFToken);
        # xsrf_cookie_kwargs: passed to set_cookie; log_function: called instead of the access log.
        # https://www.tornadoweb.org/en/stable/web.html ("Application configuration"), checked 2026-11-30.
        static_path=str(STATIC), static_handler_class=StaticFiles, template_path=str(TEMPLATES),
        xsrf_cookies=True, xsrf_cookie_kwargs={"samesite": "Strict", "httponly": False},  # JS reads it
        log_function=_log_request, compress_response=True)


def allowed_hosts_for(host: str, port: int) -> Optional[set]:
    """Host headers accepted: the bound address (and localhost names for a loopback bind); None (any) for
    a wildcard bind (0.0.0.0 / ::), where the access token protects the app."""
    if host in ("0.0.0.0", "::", ""):
        return None
    names = {host}
    if is_loopback(host):
        names |= {"localhost", "127.0.0.1", "[::1]"}
    out = set()
    for n in names:
        n = f"[{n}]" if ":" in n and not n.startswith("[") else n
        out |= {f"{n}:{port}".lower()}
        if port == 80:
            out.add(n.lower())
    return out


def listen_error(host: str, port: int, e: OSError) -> str:
    """One line saying why the app cannot listen on ``host``:``port`` and which option changes it."""
    if e.errno == errno.EADDRINUSE:
        return (f"port {port} on {host} is already in use (another `inkground rate`, or another program); choose "
                f"another with --port N, or --port 0 for any free port")
    if e.errno == errno.EACCES:
        return f"not allowed to listen on port {port} (ports below 1024 need root); choose another with --port N"
    return f"cannot listen on {host}:{port} ({e.strerror or e}); check --host (an address of this machine) and --port"


class Server:
    """A running rating server on its own thread and event loop (for tests and notebooks);
    :func:`serve` runs one in the foreground."""

    def __init__(self, session: Session, host: str = RATE_HOST, port: int = 0):
        self.session, self.host = session, host
        try:
            self.sockets = bind_sockets(port, address=host)
        except OSError as e:
            raise RateError(listen_error(host, port, e)) from None
        self.port = self.sockets[0].getsockname()[1]
        if session.allowed_hosts is None and host not in ("0.0.0.0", "::", ""):
            session.allowed_hosts = allowed_hosts_for(host, self.port)
        self._loop: Optional[asyncio.AbstractEventLoop] = None
        self._stop: Optional[asyncio.Event] = None
        self._thread: Optional[threading.Thread] = None
        self._ready = threading.Event()

    @property
    def url(self) -> str:
        h = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{h}:{self.port}/"

    async def run(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        srv = HTTPServer(make_app(self.session), max_body_size=MAX_BODY, xheaders=False)
        srv.add_sockets(self.sockets)
        self._ready.set()
        try:
            await self._stop.wait()
        finally:
            srv.stop()
            await srv.close_all_connections()

    def start(self) -> "Server":
        self._thread = threading.Thread(target=lambda: asyncio.run(self.run()), daemon=True, name="inkground-rate")
        self._thread.start()
        if not self._ready.wait(30):
            raise RuntimeError("rating server did not start")
        return self

    def stop(self) -> None:
        """Stop serving (idempotent); the listening sockets are closed, the port is free again."""
        loop, self._loop = self._loop, None
        if loop is not None and self._stop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(self._stop.set)
        if self._thread is not None:
            self._thread.join(10)
            self._thread = None


TOKEN_ENV = "INKGROUND_RATE_TOKEN"
"""An access token to use instead of a new random one (so raters keep their address over a restart)."""


def access_token() -> str:
    """The access token for a non-loopback address: $INKGROUND_RATE_TOKEN (at least 16 characters of
    ``A-Za-z0-9_-``) or a new random one (``secrets.token_urlsafe``, 32 characters)."""
    import os
    import re

    env = os.environ.get(TOKEN_ENV)
    if env is None:
        return secrets.token_urlsafe(24)
    if not re.fullmatch(r"[A-Za-z0-9_-]{16,128}", env):
        raise RateError(f"${TOKEN_ENV}: must be 16-128 characters of A-Za-z0-9_- (the value is not shown)")
    return env


def serve(run_dir, ratings, k: Optional[int] = None, host: str = RATE_HOST, port: int = RATE_PORT, *,
          candidates=None, pages: str = "ocr-passed", reserve_s: float = RESERVE_SECONDS, out=print) -> None:
    """Run the rating app in the foreground until interrupted (Ctrl-C). On an address other than loopback an
    access token is made and the address with the token is printed (to the terminal only)."""
    token = None if is_loopback(host) else access_token()
    session = open_session(run_dir, ratings, k, candidates=candidates, pages=pages, reserve_s=reserve_s, token=token)
    server = Server(session, host, port)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    L = session.ledger
    p = L.progress()
    out(f"rating {len(L.pages)} pages of {session.run.run} ({'pages that passed the OCR filter' if pages == 'ocr-passed' else 'all candidate pages'}), "
        f"{L.k} raters per page; {p['ratings_given']} of {p['ratings_needed']} ratings so far")
    out(f"ratings file: {session.ratings_path} (columns {','.join(LOG_COLUMNS)})")
    if token is None:
        base = server.url
        out(f"open {base} in a browser on this machine (Ctrl-C stops; ratings are saved as they are given)")
    else:
        import socket

        shown = socket.gethostname() if host in ("0.0.0.0", "::") else host
        base = f"http://{f'[{shown}]' if ':' in shown else shown}:{server.port}/"
        out(f"raters open: {base}?token={token}")
        if host in ("0.0.0.0", "::"):
            out(f"  (if {shown!r} does not resolve on their machines, use this machine's IP address instead)")
        out("(give this address to the raters only: the token is the key to the page photos; it is not saved "
            f"anywhere and changes at every start unless ${TOKEN_ENV} sets it)")
    out(f"statistics: {base}stats")
    try:
        asyncio.run(server.run())
    except KeyboardInterrupt:
        out("stopped; every confirmed rating is in the ratings file")
