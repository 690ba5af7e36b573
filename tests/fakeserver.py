"""A loopback test server speaking enough OpenAI chat.completions and Anthropic messages for the real SDKs.

Binds 127.0.0.1 on an ephemeral port (``http.server`` in a daemon thread); nothing leaves the machine.

* ``POST /v1/chat/completions`` (OpenAI; client ``base_url = server.openai_url``)
* ``POST /v1/messages`` (Anthropic; client ``base_url = server.anthropic_url``)

Responses are scripted per call: :meth:`FakeServer.script` queues actions, optionally only for requests
whose body contains a substring (``match``), so concurrent clients get the intended answer whatever the
order. Actions (build them with the helpers below):

* ``ok(text=None, echo_auth=False)`` - a normal answer (default text: :func:`default_answer` of the request);
  ``echo_auth`` puts the received credential into every response field a server could fill: the model name,
  the finish / stop reason, usage (as a value, a nested value and a key), system_fingerprint, stop_sequence
* ``no_content(null=True)`` - a finished answer whose content is null / absent (or "" with ``null=False``)
* ``http_error(code, retry_after=None, echo_auth=False)`` - an HTTP error (``echo_auth`` puts the received
  Authorization / x-api-key value into the error message, as some servers do, to test scrubbing)
* ``slow(seconds)`` - sleep, then answer normally (a client with a shorter timeout gives up first)
* ``truncated(text)`` - finish_reason "length" / stop_reason "max_tokens"
* ``refusal(text)`` - OpenAI ``message.refusal`` / Anthropic stop_reason "refusal"
* ``drop()`` - close the connection without an answer (a connection error)
* ``trickle(interval, seconds, chunked=False, headers=False)`` - the answer one byte every ``interval`` seconds
  (``chunked``: endless chunked white space instead; ``headers``: the status line and headers trickle too), for
  at most ``seconds`` (then the rest at once, or the connection closed): a server that never times out a read
* ``redirect(code, location)`` - a 3xx answer pointing elsewhere
* ``gzipped(text)`` - a normal answer sent with ``Content-Encoding: gzip`` (whatever the client asked for)
* ``quota_error(provider)`` - the 429 a provider documents for a spent quota (``anthropic``: spend cap,
  no retry-after; ``google-gemini``: RESOURCE_EXHAUSTED naming a per-day quota; ``moonshot``:
  exceeded_current_quota_error; ``long``: a plain 429 whose retry-after is a day)

``FakeServer(enforce=provider_behaviour(name))`` makes the server answer as that provider documents before any
scripted action: 400 on a sampling field the provider refuses, 400 (Anthropic) or 413 on an oversized image or
request, 400 on a system message where the chat template refuses one (Molmo on vLLM).

``GET /v1/models`` lists ``models`` (both protocols' list shapes at once); scripted ``http_error`` and ``slow``
actions apply to it too (match "GET" to aim at it).

When no scripted action applies, the answer is ``ok()`` after ``delay`` seconds. Every request is recorded
in memory (``server.requests``: path, headers, JSON body, protocol); nothing is written to disk, and the
server never logs.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable, Optional


def ok(text: Optional[str] = None, echo_auth: bool = False) -> dict:
    return {"kind": "ok", "text": text, "echo_auth": echo_auth}


def no_content(null: bool = True) -> dict:
    """A finished answer without content: ``null`` content (OpenAI) / no text block (Anthropic), or ""."""
    return {"kind": "no_content", "null": null}


def http_error(code: int, retry_after: Optional[float] = None, echo_auth: bool = False,
               message: str = "scripted error", headers: Optional[dict] = None, payload=None) -> dict:
    """An HTTP error; ``payload`` (JSON) replaces the default error body of either protocol."""
    return {"kind": "error", "code": int(code), "retry_after": retry_after, "echo_auth": echo_auth,
            "message": message, "headers": dict(headers or {}), "payload": payload}


def quota_error(provider: str) -> dict:
    """A spent quota's answer, as each provider documents or reports it (see providers.yaml for the sources)."""
    if provider == "anthropic":  # platform.claude.com/docs/api/rate-limits: spend cap reached, no retry-after
        return http_error(429, payload={"type": "error", "error": {
            "type": "rate_limit_error",
            "message": "You have reached your API usage limits: your organization has crossed its monthly API "
                       "usage threshold, set based on your organization's API tier. You will regain access on "
                       "2027-01-01 at 00:00 UTC.",
            "details": {"error_code": "enforced_spend_limit_reached"}}})
    if provider == "google-gemini":  # the daily quota: RESOURCE_EXHAUSTED naming a per-day quota id
        return http_error(429, payload=[{"error": {
            "code": 429, "status": "RESOURCE_EXHAUSTED",
            "message": "You exceeded your current quota, please check your plan and billing details.",
            "details": [{"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": [
                {"quotaMetric": "generativelanguage.googleapis.com/generate_requests_per_model_per_day",
                 "quotaId": "GenerateRequestsPerDayPerProjectPerModel"}]}]}}])
    if provider == "moonshot":
        return http_error(429, payload={"error": {
            "message": "You exceeded your current quota, please check your plan and billing details",
            "type": "exceeded_current_quota_error"}})
    if provider == "long":
        return http_error(429, retry_after=86400, message="rate limit: try again tomorrow")
    raise ValueError(f"no quota answer for {provider!r}")


def provider_behaviour(provider: str) -> dict:
    """What the server enforces to answer as ``provider`` documents (sources in providers.yaml):

    * ``anthropic``: with ``anthropic-version: 2026-10-21``, 400 on temperature / top_p / top_k (even at their
      default values); 400 "image exceeds 5 MB maximum" on an image over 5,242,880 bytes of base64; 413
      request_too_large over 32 MB; 400 on an image side over 8000 px is not checked (no decoding here)
    * ``molmo``: 400 "Conversation roles must alternate ..." when a system message is sent (vLLM + Molmo)
    * ``moonshot``: 400 "invalid temperature: only 1 is allowed for this model" (Kimi K3)
    * ``google-gemini``: 413 over 20 MB
    """
    if provider == "anthropic":
        return {"refuse": {"temperature", "top_p", "top_k"}, "refuse_when": ("anthropic-version", "2026-10-21"),
                "max_image_b64": 5242880, "max_body": 33554432}
    if provider == "molmo":
        return {"no_system_role": True}
    if provider == "moonshot":
        return {"only": {"temperature": (1, 1.0)}}
    if provider == "google-gemini":
        return {"max_body": 20000000}
    raise ValueError(f"no behaviour for {provider!r}")


def request_images(body: dict) -> list[str]:
    """The base64 text of every image of a request body, either protocol."""
    out = []
    for m in body.get("messages", []):
        c = m.get("content")
        for p in c if isinstance(c, list) else []:
            if not isinstance(p, dict):
                continue
            if p.get("type") == "image_url":
                out.append(p["image_url"]["url"].split(",", 1)[1])
            elif p.get("type") == "image":
                out.append(p["source"]["data"])
    return out


def slow(seconds: float, text: Optional[str] = None, after_hits: int = 0) -> dict:
    """Answer after ``seconds``; with ``after_hits``, the seconds count from the moment the server has received
    that many requests (so a test can hold answers until its requests are all in, however slowly they come)."""
    return {"kind": "slow", "seconds": float(seconds), "text": text, "after_hits": int(after_hits)}


def truncated(text: str) -> dict:
    return {"kind": "truncated", "text": text}


def refusal(text: str = "I can't help with that.") -> dict:
    return {"kind": "refusal", "text": text}


def drop() -> dict:
    return {"kind": "drop"}


def trickle(interval: float = 1.0, seconds: float = 30.0, chunked: bool = False, headers: bool = False) -> dict:
    return {"kind": "trickle", "interval": float(interval), "seconds": float(seconds), "chunked": chunked,
            "headers": headers}


def redirect(code: int = 307, location: str = "http://127.0.0.2:9/v1/chat/completions") -> dict:
    return {"kind": "redirect", "code": int(code), "location": location}


def gzipped(text: Optional[str] = None) -> dict:
    return {"kind": "gzip", "text": text}


def request_text(body: dict) -> str:
    """All text of a request body (system + user text parts), either protocol."""
    out = []
    if isinstance(body.get("system"), str):
        out.append(body["system"])
    for m in body.get("messages", []):
        c = m.get("content")
        if isinstance(c, str):
            out.append(c)
        elif isinstance(c, list):
            out.extend(p.get("text", "") for p in c if isinstance(p, dict) and p.get("type") == "text")
    return "\n".join(out)


def default_answer(body: dict) -> str:
    """A well-formed strokes answer that depends only on the request's text (so it is the same whatever
    the call order): two strokes of grid cells derived from a hash of the text."""
    h = hashlib.sha256(request_text(body).encode("utf-8")).digest()
    strokes = []
    for s in range(2):
        pts = []
        for i in range(4):
            b = h[s * 8 + 2 * i: s * 8 + 2 * i + 2]
            pts.append(f"'x{5 + b[0] % 40}y{5 + b[1] % 40}'")
        ts = ", ".join(f"{i / 3:.2f}" for i in range(4))
        strokes.append(f"<s{s + 1}><points>{', '.join(pts)}</points><t_values>{ts}</t_values></s{s + 1}>")
    return "<strokes>" + "".join(strokes) + "</strokes>"


@dataclass
class Received:
    protocol: str  # "openai" or "anthropic"
    path: str
    headers: dict
    body: dict
    raw: str
    time: float

    @property
    def text(self) -> str:
        return request_text(self.body)


class FakeServer:
    """See module doc. Use as a context manager, or call start() / stop()."""

    def __init__(self, delay: float = 0.0, responder: Callable[[dict], str] = default_answer,
                 models: Optional[list] = None, enforce: Optional[dict] = None):
        self.delay = float(delay)
        self.enforce = dict(enforce or {})  # provider_behaviour(...): answered before any scripted action
        self.models = list(models) if models is not None else ["fake-vl", "fake-claude"]  # GET .../models
        self.responder = responder
        self.requests: list[Received] = []
        self._queues: list[tuple[Optional[str], list]] = []
        self._lock = threading.Lock()
        self._httpd: Optional[ThreadingHTTPServer] = None
        self._thread: Optional[threading.Thread] = None
        self.in_flight = 0
        self.max_in_flight = 0  # the most requests being answered at once

    # ---- lifecycle
    def start(self) -> "FakeServer":
        server = self

        class Handler(_Handler):
            owner = server

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._httpd.block_on_close = False  # do not wait for a slow handler on stop
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    @property
    def port(self) -> int:
        return self._httpd.server_address[1]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def openai_url(self) -> str:
        return self.url + "/v1"

    @property
    def anthropic_url(self) -> str:
        return self.url

    # ---- scripting
    def script(self, *actions: dict, match: Optional[str] = None) -> None:
        """Queue ``actions`` for the next calls (whose raw body contains ``match``, if given)."""
        with self._lock:
            for q_match, q in self._queues:
                if q_match == match:
                    q.extend(actions)
                    return
            self._queues.append((match, list(actions)))

    def _next_action(self, raw: str) -> dict:
        with self._lock:
            for match, q in self._queues:
                if q and match is not None and match in raw:
                    return q.pop(0)
            for match, q in self._queues:
                if q and match is None:
                    return q.pop(0)
        return {"kind": "ok", "text": None, "default": True}

    def hits(self, match: Optional[str] = None) -> int:
        with self._lock:
            return sum(1 for r in self.requests if match is None or match in r.raw)


class _Handler(BaseHTTPRequestHandler):
    owner: FakeServer
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body go out as separate writes: no 40 ms delayed-ACK stall

    def log_message(self, *args):  # never log (headers carry the key)
        pass

    def _send(self, code: int, payload: dict, headers: Optional[dict] = None) -> None:
        data = json.dumps(payload).encode("utf-8")
        try:
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(data)
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (timeout)

    def do_GET(self):  # noqa: N802 (http.server API): the model list of either protocol
        srv = self.owner
        if not self.path.rstrip("/").endswith("/models"):
            self._send(404, {"error": {"message": f"no route {self.path}"}})
            return
        headers = {k.lower(): v for k, v in self.headers.items()}
        with srv._lock:
            srv.requests.append(Received("get", self.path, headers, {}, "GET " + self.path, time.time()))
        act = srv._next_action("GET " + self.path)
        if act["kind"] == "error":
            msg = act["message"]
            if act.get("echo_auth"):
                msg += f" (credential received: {headers.get('authorization') or headers.get('x-api-key')})"
            self._send(act["code"], {"error": {"message": msg, "type": "scripted"}})
            return
        if act["kind"] == "slow":
            time.sleep(act["seconds"])
        data = [{"id": m, "object": "model", "type": "model", "created": 0, "owned_by": "fake",
                 "display_name": m, "created_at": "2026-01-01T00:00:00Z"} for m in srv.models]
        self._send(200, {"object": "list", "data": data, "has_more": False,
                         "first_id": data[0]["id"] if data else None, "last_id": data[-1]["id"] if data else None})

    def do_POST(self):  # noqa: N802 (http.server API)
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n).decode("utf-8")
        try:
            body = json.loads(raw)
        except json.JSONDecodeError:
            self._send(400, {"error": {"message": "body is not JSON"}})
            return
        if self.path.rstrip("/").endswith("/chat/completions"):
            proto = "openai"
        elif self.path.rstrip("/").endswith("/messages"):
            proto = "anthropic"
        else:
            self._send(404, {"error": {"message": f"no route {self.path}"}})
            return
        srv = self.owner
        headers = {k.lower(): v for k, v in self.headers.items()}
        with srv._lock:
            srv.requests.append(Received(proto, self.path, headers, body, raw, time.time()))
            srv.in_flight += 1
            srv.max_in_flight = max(srv.max_in_flight, srv.in_flight)
        try:
            self._answer(srv, proto, headers, body, raw)
        finally:
            with srv._lock:
                srv.in_flight -= 1

    def _enforced(self, srv: FakeServer, proto: str, headers: dict, body: dict, raw: str) -> Optional[dict]:
        """The error a provider answers to this request by its documented rules (``srv.enforce``), or None."""
        rules = srv.enforce
        if not rules:
            return None
        bad = "invalid_request_error"
        if rules.get("max_body") and len(raw.encode()) > rules["max_body"]:
            return http_error(413, message=f"Request body is too large. Maximum size is {rules['max_body']} bytes.",
                              payload={"type": "error", "error": {"type": "request_too_large", "message":
                                       f"Request exceeds the maximum size of {rules['max_body']} bytes"}}
                              if proto == "anthropic" else None)
        when = rules.get("refuse_when")
        if rules.get("refuse") and (when is None or headers.get(when[0]) == when[1]):
            sent = sorted(set(rules["refuse"]) & set(body))
            if sent:
                return http_error(400, message=f"{sent[0]}: Extra inputs are not permitted",
                                  payload={"type": "error", "error": {"type": bad, "message":
                                           f"{sent[0]}: Extra inputs are not permitted"}}
                                  if proto == "anthropic" else None)
        for field, allowed in (rules.get("only") or {}).items():
            if field in body and body[field] not in allowed:
                return http_error(400, message=f"invalid {field}: only {allowed[0]} is allowed for this model")
        limit = rules.get("max_image_b64")
        if limit:
            for i, b in enumerate(request_images(body)):
                if len(b) > limit:
                    msg = f"messages.0.content.{i}.image.source.base64: image exceeds 5 MB maximum: {len(b)} bytes > {limit} bytes"
                    return http_error(400, message=msg, payload={"type": "error", "error": {"type": bad, "message": msg}}
                                      if proto == "anthropic" else None)
        if rules.get("no_system_role") and any(m.get("role") == "system" for m in body.get("messages", [])):
            return http_error(400, message="Conversation roles must alternate user/assistant/user/assistant/...")
        return None

    def _answer(self, srv: FakeServer, proto: str, headers: dict, body: dict, raw: str) -> None:
        act = self._enforced(srv, proto, headers, body, raw) or srv._next_action(raw)
        kind = act["kind"]
        if kind == "drop":
            self.close_connection = True
            try:
                self.connection.shutdown(2)
            except OSError:
                pass
            return
        if kind == "redirect":
            self._send(act["code"], {"error": {"message": "moved"}}, {"Location": act["location"]})
            return
        if kind == "error":
            msg = act["message"]
            if act.get("echo_auth"):
                msg += f" (credential received: {headers.get('authorization') or headers.get('x-api-key')})"
            extra = dict(act.get("headers") or {})
            if act.get("retry_after") is not None:
                extra["retry-after"] = str(act["retry_after"])
            if act.get("payload") is not None:
                payload = act["payload"]
            elif proto == "openai":
                payload = {"error": {"message": msg, "type": "scripted", "code": act["code"]}}
            else:
                etype = {429: "rate_limit_error", 500: "api_error", 529: "overloaded_error"}.get(
                    act["code"], "invalid_request_error")
                payload = {"type": "error", "error": {"type": etype, "message": msg}}
            self._send(act["code"], payload, extra)
            return
        if kind == "slow":
            end = time.monotonic() + 120
            while act.get("after_hits") and srv.hits() < act["after_hits"] and time.monotonic() < end:
                time.sleep(0.01)
            time.sleep(act["seconds"])
        elif act.get("default") and srv.delay:
            time.sleep(srv.delay)
        text = act.get("text")
        if kind == "no_content":
            text = None if act["null"] else ""
        elif text is None:
            text = srv.responder(body)
        model = body.get("model", "fake")
        n_out = len(text or "") // 4
        if proto == "openai":
            finish, refusal_text, content = "stop", None, text
            if kind == "truncated":
                finish = "length"
            elif kind == "refusal":
                refusal_text, content = text, None
            payload = {"id": "chatcmpl-fake", "object": "chat.completion", "created": 0, "model": model,
                       "choices": [{"index": 0, "finish_reason": finish, "logprobs": None,
                                    "message": {"role": "assistant", "content": content, "refusal": refusal_text}}],
                       "usage": {"prompt_tokens": len(raw) // 4, "completion_tokens": n_out,
                                 "total_tokens": len(raw) // 4 + n_out}}
        else:
            stop = {"truncated": "max_tokens", "refusal": "refusal"}.get(kind, "end_turn")
            blocks = [] if text is None else [{"type": "text", "text": text}]
            payload = {"id": "msg_fake", "type": "message", "role": "assistant", "model": model,
                       "content": blocks, "stop_reason": stop, "stop_sequence": None,
                       "usage": {"input_tokens": len(raw) // 4, "output_tokens": n_out}}
        if act.get("echo_auth"):
            _echo_credential(payload, proto, headers.get("authorization") or headers.get("x-api-key") or "")
        if kind == "trickle":
            self._trickle(payload, act)
            return
        if kind == "gzip":
            data = gzip.compress(json.dumps(payload).encode("utf-8"))
            try:
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Encoding", "gzip")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
                self.wfile.flush()
            except (BrokenPipeError, ConnectionResetError):
                pass
            return
        self._send(200, payload)

    def _trickle(self, payload: dict, act: dict) -> None:
        """Send ``payload`` one byte per interval (or endless chunked white space) for at most act["seconds"]."""
        data = json.dumps(payload).encode("utf-8")
        head = (b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                + (b"Transfer-Encoding: chunked\r\n" if act["chunked"] else b"Content-Length: %d\r\n" % len(data))
                + b"\r\n")
        end = time.monotonic() + act["seconds"]
        sock = self.connection
        try:
            if act["headers"]:
                for i in range(len(head)):
                    sock.sendall(head[i:i + 1])
                    time.sleep(act["interval"])
                    if time.monotonic() > end:
                        return
            else:
                sock.sendall(head)
            i = 0
            while time.monotonic() < end and (act["chunked"] or i < len(data)):
                sock.sendall(b"1\r\n \r\n" if act["chunked"] else data[i:i + 1])
                i += 1
                time.sleep(act["interval"])
            if not act["chunked"]:
                sock.sendall(data[i:])
        except OSError:
            pass  # the client gave up: what a deadline is for
        finally:
            self.close_connection = True


def _echo_credential(payload: dict, proto: str, cred: str) -> None:
    """A hostile or broken server: the credential in every field of the response a client might keep."""
    payload["model"] = cred
    payload["usage"]["note"] = cred
    payload["usage"][cred.replace(" ", "_")] = 1
    if proto == "openai":
        payload["system_fingerprint"] = cred
        payload["choices"][0]["finish_reason"] = "stop " + cred
        payload["usage"]["completion_tokens_details"] = {"reasoning_tokens": 7, "echo": cred}
    else:
        payload["stop_sequence"] = cred
        payload["stop_reason"] = "end_turn " + cred
        payload["usage"]["server_tool_use"] = {"web_search_requests": 0, "echo": cred}
        payload["usage"]["service_tier"] = cred
