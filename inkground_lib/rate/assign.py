"""Who rates which page next: the assignment rules of ``inkground rate`` as plain data and functions.

* Every page is meant to get K ratings (``k``, fixed for a ratings file), each from a different rater; a
  page never gets more than K, and no rater sees a page twice.
* The next page offered to a rater is a page they have not rated that has the fewest ratings so far (ties:
  fewest reservations by others, then the run's page order). It is reserved for that rater for
  ``reserve_s`` seconds, so that two raters working at once do not both take the last free slot of a page.
  Reservations live in memory only: after a restart they are simply gone.
* Reservations are capped: a rater holds at most one page, and a browser session at most one rater's
  reservation (logging in as another name, or out, releases it). A rater who has rated (a row in the
  ratings file) keeps the page while they look at it (each view renews it for ``reserve_s``), but never
  longer than ``max_hold_s`` in all; a login that has never rated holds its page ``reserve_s`` from the
  offer, is not renewed, and never blocks anyone: when every slot left is reserved, a rater who would
  otherwise get nothing is offered a page whose reservations are all held by logins that never rated (so
  scripted or abandoned logins cannot lock raters out), and such reservations never refuse a rating.
* A rating is accepted when the rater has not rated the page, the page has fewer than K ratings, and the
  rater holds the page's reservation or a free slot is left beside the reservations of raters who have
  rated.
* ``undo`` withdraws the rater's most recent standing rating; that page is offered to them again at once.
* A rater name is bound to the first browser session that uses it (name compared without case); another
  session using it is refused. Bindings made by a rating survive a restart (the ratings file stores a hash
  of the session with each row); a name that never rated is free again after a restart.

No I/O here: :class:`Ledger` is fed the ratings file's rows (:meth:`Ledger.apply`) by the server.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Optional

from inkground_lib.core.dataset import check_id
from inkground_lib.core.defaults import RESERVE_MAX_SECONDS, RESERVE_SECONDS
from inkground_lib.pseudo.raters import RatingsError, check_rater_name, parse_score


class RateError(ValueError):
    """A request the rating app refuses; ``status`` is the HTTP status to answer with."""

    def __init__(self, message: str, status: int = 400):
        super().__init__(message)
        self.status = status


def check_page_id(value, where: str = "page") -> str:
    """A page id (:func:`inkground_lib.core.dataset.check_id`) or RateError 400."""
    return check_id(value, where, RateError)


def check_name(value, where: str = "rater") -> str:
    try:
        return check_rater_name(value, where)
    except RatingsError as e:
        raise RateError(str(e)) from None


def check_score(value, where: str = "score") -> int:
    """An integer 0-10 given as a JSON number or a string of digits (not a bool, not 7.5), else RateError."""
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise RateError(f"{where}: {value!r:.40} is not an integer score 0-10")
    try:
        return parse_score(value, where)
    except RatingsError as e:
        raise RateError(str(e)) from None


@dataclass
class Ledger:
    """The state of a rating session: standing ratings, reservations and name bindings."""

    pages: list[str]
    k: int
    reserve_s: float = RESERVE_SECONDS
    max_hold_s: float = RESERVE_MAX_SECONDS
    ratings: dict[str, dict[str, int]] = field(default_factory=dict)  # page -> {rater: score}
    rated_order: dict[str, list[str]] = field(default_factory=dict)  # rater -> pages, oldest first
    reservations: dict[str, tuple[str, float, float]] = field(default_factory=dict)  # rater -> (page, expiry, since)
    owner: dict[str, str] = field(default_factory=dict)  # name.casefold() -> session hash
    spelled: dict[str, str] = field(default_factory=dict)  # name.casefold() -> the name as first typed
    last_seen: dict[str, str] = field(default_factory=dict)  # rater -> time of their last row
    events: int = 0

    def __post_init__(self):
        if int(self.k) < 1:
            raise RateError(f"raters per page: must be >= 1, got {self.k!r}")
        self.k = int(self.k)
        self.max_hold_s = max(float(self.max_hold_s), float(self.reserve_s))
        self._index = {p: i for i, p in enumerate(self.pages)}
        for p in self.pages:
            self.ratings.setdefault(p, {})

    # ---------------------------------------------------------------- the file's rows
    def apply(self, row: dict, line: int = 0) -> None:
        """Take one row of the ratings file (rate or undo) into the state."""
        page, rater = row["page"], row["rater"]
        got = self.ratings.setdefault(page, {})
        mine = self.rated_order.setdefault(rater, [])
        if row.get("action", "rate") == "undo":
            got.pop(rater, None)
            if page in mine:
                mine.remove(page)
        else:
            got[rater] = int(row["score"])
            mine.append(page)
            res = self.reservations.get(rater)
            if res and res[0] == page:
                del self.reservations[rater]
        key = rater.casefold()
        if row.get("session"):  # the session that wrote a name's latest row holds it (sessions rotate at login)
            self.owner[key] = row["session"]
        self.spelled.setdefault(key, rater)
        self.last_seen[rater] = row.get("time", "")
        self.events += 1

    # ---------------------------------------------------------------- identity
    def bind(self, name: str, session: str, previous: Optional[str] = None) -> str:
        """Bind ``name`` to ``session`` (a session hash) if it is free, already this session's or held by
        ``previous`` (the session the same browser had before the server issued it ``session`` at login: what
        ``previous`` held moves to ``session``); returns the name as first spelled. RateError 409 if another
        session holds it."""
        check_name(name)
        key = name.casefold()
        held = self.owner.get(key)
        if held is not None and held not in (session, previous):
            raise RateError(f"rater {name!r}: this name is already in use in another browser session; choose "
                            f"another name (or continue in the browser you first used)", 409)
        for other, sess in list(self.owner.items()):
            if sess in (session, previous) and other != key:
                self.release(self.spelled.get(other, other))  # one reservation per browser session
            if previous is not None and sess == previous:
                self.owner[other] = session  # the browser keeps its names under its new session
        self.owner[key] = session
        return self.spelled.setdefault(key, name)

    def owns(self, name: str, session: str) -> bool:
        return self.owner.get(name.casefold()) == session

    def release(self, rater: str) -> None:
        """Drop ``rater``'s reservation (they logged out or switched names)."""
        self.reservations.pop(rater, None)

    # ---------------------------------------------------------------- assignment
    def has_rated(self, rater: str) -> bool:
        """Whether ``rater`` has a row in the ratings file (a rating, even one undone)."""
        return rater in self.last_seen

    def _reserved_by_others(self, page: str, rater: str, now: float, active_only: bool = False) -> int:
        return sum(1 for r, (p, exp, _) in self.reservations.items()
                   if p == page and r != rater and exp > now and (not active_only or self.has_rated(r)))

    def can_take(self, page: str, rater: str, now: float, active_only: bool = False) -> bool:
        """Whether ``rater`` may rate ``page`` now: not rated by them, fewer than K ratings, and their own
        reservation or a slot beside the others' live reservations (``active_only``: only those of raters
        who have rated count)."""
        got = self.ratings.get(page, {})
        if rater in got or len(got) >= self.k:
            return False
        res = self.reservations.get(rater)
        if res and res[0] == page and res[1] > now:
            return True
        return len(got) + self._reserved_by_others(page, rater, now, active_only) < self.k

    def next_page(self, rater: str, now: Optional[float] = None) -> Optional[str]:
        """The page to offer ``rater`` now (reserved for them), or None when nothing is left for them."""
        now = time.time() if now is None else now
        res = self.reservations.get(rater)
        if res and res[0] in self._index and self.can_take(res[0], rater, now):
            page, exp, since = res
            if self.has_rated(rater):  # renewed while they look at it, up to max_hold_s in all
                exp = max(exp, min(now + self.reserve_s, since + self.max_hold_s))
            if exp > now:
                self.reservations[rater] = (page, exp, since)
                return page
        self.reservations.pop(rater, None)
        for active_only in (False, True):  # second pass: logins that never rated block nobody
            best, best_key = None, None
            for p in self.pages:
                if not self.can_take(p, rater, now, active_only):
                    continue
                key = (len(self.ratings[p]), self._reserved_by_others(p, rater, now), self._index[p])
                if best_key is None or key < best_key:
                    best, best_key = p, key
            if best is not None:
                self.reservations[rater] = (best, now + self.reserve_s, now)
                return best
        return None

    def waiting_for_others(self, rater: str, now: Optional[float] = None) -> int:
        """Pages ``rater`` has not rated that still need ratings but that raters who have rated are looking
        at now (reserved): they may come free when those raters move on."""
        now = time.time() if now is None else now
        return sum(1 for p in self.pages if rater not in self.ratings[p] and len(self.ratings[p]) < self.k
                   and not self.can_take(p, rater, now, active_only=True))

    def check_rating(self, page: str, rater: str, now: Optional[float] = None) -> None:
        """RateError unless ``rater`` may rate ``page`` now (see the module doc)."""
        now = time.time() if now is None else now
        if page not in self._index:
            raise RateError(f"page {page!r}: not a page of this rating session", 404)
        got = self.ratings[page]
        if rater in got:
            raise RateError(f"page {page!r}: rater {rater!r} has already rated it", 409)
        if len(got) >= self.k:
            raise RateError(f"page {page!r}: already has its {self.k} ratings; take the next page", 409)
        if not self.can_take(page, rater, now, active_only=True):
            raise RateError(f"page {page!r}: its remaining ratings are reserved for other raters; take the next "
                            f"page", 409)

    def last_rated(self, rater: str) -> Optional[str]:
        """The page of ``rater``'s most recent standing rating (what ``undo`` withdraws)."""
        mine = self.rated_order.get(rater) or []
        return mine[-1] if mine else None

    def reserve(self, rater: str, page: str, now: Optional[float] = None) -> None:
        now = time.time() if now is None else now
        self.reservations[rater] = (page, now + self.reserve_s, now)

    # ---------------------------------------------------------------- progress
    def progress(self, rater: Optional[str] = None) -> dict:
        """Counts for the progress bar: ratings given and still needed over all pages; for ``rater``, pages
        done and pages they may still rate."""
        given = sum(min(len(self.ratings[p]), self.k) for p in self.pages)
        out = {"pages": len(self.pages), "k": self.k, "ratings_needed": self.k * len(self.pages),
               "ratings_given": given, "pages_complete": sum(len(self.ratings[p]) >= self.k for p in self.pages)}
        if rater is not None:
            out["done"] = sum(1 for p in self.pages if rater in self.ratings[p])
            out["remaining"] = sum(1 for p in self.pages
                                   if rater not in self.ratings[p] and len(self.ratings[p]) < self.k)
        return out

    def per_rater(self) -> list[dict]:
        """One row per rater: name, ratings standing, pages they could still rate, last activity."""
        rows = []
        for rater in sorted(self.rated_order, key=str.casefold):
            done = sum(1 for p in self.pages if rater in self.ratings[p])
            left = sum(1 for p in self.pages if rater not in self.ratings[p] and len(self.ratings[p]) < self.k)
            rows.append({"rater": rater, "ratings": done, "remaining": left, "last": self.last_seen.get(rater, "")})
        return rows
