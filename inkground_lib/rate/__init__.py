"""``inkground rate``: the human rating step of section 02 as a local web app (see :mod:`.server`)."""

from .assign import Ledger, RateError
from .server import Server, open_session, serve

__all__ = ["Ledger", "RateError", "Server", "open_session", "serve"]
