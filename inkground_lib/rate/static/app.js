// inkground rate: the rater's page. Plain JS, no framework, no network beyond this server.
// Every action is confirmed in the message line of the bar fixed at the bottom of the window (#controls),
// which also holds the score buttons, so what the rater did is always in view.
"use strict";
(function () {
  const SVGNS = "http://www.w3.org/2000/svg";
  const xsrf = document.querySelector('meta[name="xsrf"]').content;
  const PAIR_MS = Number(document.querySelector('meta[name="pair-ms"]').content) || 800;  // "1" then "0" = 10
  const $ = (id) => document.getElementById(id);
  let state = null;      // the server's answer: rater, progress, page, message, done
  let selected = null;   // the score chosen for the current page (0-10) or null
  let wordIx = -1;       // the zoomed word, -1: none
  let oneAt = -1;        // when "1" was typed (performance.now()), -1: not just now
  let busy = false;
  let poll = null;       // the timer that asks again while other raters hold the pages left

  async function api(path, body) {
    const opt = { credentials: "same-origin", headers: {} };
    if (body !== undefined) {
      opt.method = "POST";
      opt.headers = { "Content-Type": "application/json", "X-XSRFToken": xsrf };
      opt.body = JSON.stringify(body);
    }
    const r = await fetch(path, opt);
    let data = null;
    try { data = await r.json(); } catch (e) { data = { error: r.status + " " + r.statusText }; }
    if (!r.ok) { const err = new Error((data && data.error) || r.statusText); err.status = r.status; throw err; }
    return data;
  }

  function el(name, attrs, parent) {
    const e = document.createElementNS(SVGNS, name);
    for (const k in attrs) e.setAttribute(k, attrs[k]);
    if (parent) parent.appendChild(e);
    return e;
  }

  function show(id) {
    for (const s of ["login", "rate", "done"]) $(s).hidden = s !== id;
    $("controls").hidden = id === "login";
    $("scores").hidden = $("submit").hidden = $("keys").hidden = id !== "rate";
    barHeight();
  }

  function barHeight() {  // the zoom scrolls into view above the bar, not behind it
    document.documentElement.style.setProperty("--controls-h", $("controls").offsetHeight + "px");
  }

  function setMessage(text, isError) {
    const m = $("msg");
    m.textContent = text || "";
    m.className = isError ? "error" : "";
    m.dataset.n = String(Number(m.dataset.n || 0) + 1);  // changes with every message, even a repeated one
    m.classList.remove("flash");
    void m.offsetWidth;  // restart the highlight
    if (text) m.classList.add("flash");
  }

  function progressText(p) {
    return "You rated " + p.done + " page" + (p.done === 1 ? "" : "s") + "; " + p.remaining +
      " remaining for you. All raters: " + p.ratings_given + " of " + p.ratings_needed + " ratings (" +
      p.pages_complete + " of " + p.pages + " pages complete).";
  }

  function render(s, note) {
    state = s;
    selected = null;
    wordIx = -1;
    oneAt = -1;
    if (poll) { clearTimeout(poll); poll = null; }
    $("who").textContent = s.rater ? "Rater: " + s.rater : "";
    $("logout").hidden = !s.rater;
    if (!s.rater) { show("login"); $("name").focus(); return; }
    const p = s.progress;
    $("bar").max = Math.max(p.ratings_needed, 1);
    $("bar").value = p.ratings_given;
    $("count").textContent = progressText(p);
    if (!s.page) {
      show("done");
      const d = s.done || { title: "Done", text: "", reason: "" };
      $("done").dataset.reason = d.reason;
      $("done-title").textContent = d.title;
      $("done-msg").textContent = d.text;
      $("done-progress").textContent = progressText(p);
      $("rate").dataset.page = "";
      updateScores();
      setMessage(note !== undefined ? note : (s.message || d.title + "."), false);
      if (d.reason === "waiting") poll = setTimeout(() => reload(), 30000);
      return;
    }
    const fresh = $("rate").dataset.page !== s.page.id;
    show("rate");
    drawPage(s.page);
    updateScores();
    if (fresh) window.scrollTo(0, 0);
    setMessage(note !== undefined ? note : (s.message || "Page " + s.page.id + ": choose a score."), false);
  }

  function drawPage(pg) {
    $("rate").dataset.page = pg.id;
    $("page-id").textContent = "(" + pg.id + ")";
    const vb = "0 0 " + pg.width + " " + pg.height;
    for (const id of ["photo", "render"]) {
      const svg = $(id);
      svg.replaceChildren();
      svg.setAttribute("viewBox", vb);
      svg.setAttribute("preserveAspectRatio", "xMidYMid meet");
    }
    el("image", { href: pg.photo, x: 0, y: 0, width: pg.width, height: pg.height }, $("photo"));
    el("rect", { x: 0, y: 0, width: pg.width, height: pg.height, fill: "#fff" }, $("render"));
    pg.words.forEach((w) => {
      for (const st of w.strokes) {
        if (st.length === 1) {
          el("circle", { cx: st[0][0], cy: st[0][1], r: 1.5, class: "dot" }, $("render"));
        } else if (st.length > 1) {
          el("path", { d: "M" + st.map((q) => q[0] + " " + q[1]).join(" L"), class: "stroke" }, $("render"));
        }
      }
    });
    pg.words.forEach((w, i) => {
      for (const id of ["photo", "render"]) {
        const b = w.box;
        const r = el("rect", { x: b[0], y: b[1], width: b[2] - b[0], height: b[3] - b[1], class: "word",
                               "data-i": i, tabindex: id === "render" ? -1 : 0 }, $(id));
        const t = el("title", {}, r);
        t.textContent = w.text + " (click to zoom)";
        r.addEventListener("click", () => zoom(i));
      }
    });
    $("zoom").hidden = true;
  }

  function zoom(i) {
    const pg = state && state.page;
    if (!pg || !pg.words.length) { setMessage("This page has no word to zoom into.", true); return; }
    wordIx = (i + pg.words.length) % pg.words.length;
    const w = pg.words[wordIx];
    const b = w.box, gx = (b[2] - b[0]) * 0.15 + 4, gy = (b[3] - b[1]) * 0.15 + 4;
    const z = $("zphoto");
    z.replaceChildren();
    z.setAttribute("viewBox", [b[0] - gx, b[1] - gy, b[2] - b[0] + 2 * gx, b[3] - b[1] + 2 * gy].join(" "));
    el("image", { href: pg.photo, x: 0, y: 0, width: pg.width, height: pg.height }, z);
    $("zink").innerHTML = w.svg;  // the report layer's pen-path player (its text is escaped there)
    const what = "Word " + (wordIx + 1) + " of " + pg.words.length + ": \u201c" + w.text + "\u201d";
    $("zoom-title").textContent = what + " (\u2190 / \u2192 other words, r replays, Esc closes)";
    $("zoom").hidden = false;
    document.querySelectorAll(".word").forEach((r) => r.classList.toggle("current", Number(r.dataset.i) === wordIx));
    barHeight();
    $("zoom").scrollIntoView({ block: "nearest", inline: "nearest" });
    setMessage("Zoomed in: " + what + ". Its pen path plays; r replays it, Esc closes.", false);
  }

  function replay() {
    const old = $("zink").firstElementChild;
    if (old) old.replaceWith(old.cloneNode(true));  // a fresh copy restarts its CSS animations
    const w = state.page.words[wordIx];
    setMessage("Replaying the pen path of \u201c" + w.text + "\u201d.", false);
  }

  function closeZoom() {
    if (wordIx < 0) { setMessage("No word is zoomed in (click a word or press \u2192).", false); return; }
    wordIx = -1;
    $("zoom").hidden = true;
    document.querySelectorAll(".word.current").forEach((r) => r.classList.remove("current"));
    setMessage("Zoom closed.", false);
  }

  function buildScores() {
    const box = $("scores");
    for (let n = 0; n <= 10; n++) {
      const b = document.createElement("button");
      b.type = "button";
      b.textContent = String(n);
      b.dataset.score = String(n);
      b.setAttribute("aria-pressed", "false");
      b.addEventListener("click", () => select(n));
      box.appendChild(b);
    }
  }

  function select(n, how) {
    selected = n;
    updateScores();
    const hint = n === 1 && how === "key" ? " (type 0 now for 10)" : "";
    setMessage("Score " + n + " chosen" + (how === "pair" ? " (1 then 0)" : "") + hint +
      ": press Enter (or Save score) to save it.", false);
  }

  function digit(k) {
    const now = performance.now();
    if (k === "0" && oneAt >= 0 && now - oneAt <= PAIR_MS) { oneAt = -1; select(10, "pair"); return; }
    oneAt = k === "1" ? now : -1;
    select(Number(k), "key");
  }

  function updateScores() {
    document.querySelectorAll("#scores button").forEach((b) =>
      b.setAttribute("aria-pressed", String(Number(b.dataset.score) === selected)));
    $("submit").disabled = selected === null;
    $("undo").disabled = !(state && state.can_undo);
  }

  async function submit() {
    if (busy || !state || !state.page) return;
    if (selected === null) { setMessage("Choose a score first (0-9; 10: 1 then 0, or t).", true); return; }
    busy = true;
    setMessage("Saving " + selected + " for page " + state.page.id + "\u2026", false);
    try {
      render(await api("/api/rate", { page: state.page.id, score: selected }));
    } catch (e) {
      await reload(e.message);
    } finally { busy = false; }
  }

  async function undo() {
    if (busy || !state || !state.rater) return;
    if (!state.can_undo) { setMessage("Nothing to undo: you have no rating left.", true); return; }
    busy = true;
    try {
      render(await api("/api/undo", {}));
    } catch (e) {
      setMessage(e.message, true);
    } finally { busy = false; }
  }

  async function reload(errorText) {
    try {
      render(await api("/api/state"));
      if (errorText) setMessage(errorText, true);
    } catch (e) {
      setMessage(errorText && errorText !== e.message ? errorText + " / " + e.message : e.message, true);
    }
  }

  document.addEventListener("keydown", (e) => {
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    const t = e.target;
    if (t && (t.tagName === "INPUT" || t.tagName === "TEXTAREA")) return;
    if (!state || !state.rater) return;
    const k = e.key;
    const rating = !$("rate").hidden;
    let handled = true;
    if (k === "u" || k === "U") undo();
    else if (!rating && (k.length === 1 && ((k >= "0" && k <= "9") || k === "t" || k === "T") || k === "Enter")) {
      setMessage("There is no page to score right now.", true);
    } else if (!rating) handled = false;
    else if (k.length === 1 && k >= "0" && k <= "9") digit(k);
    else if (k === "t" || k === "T") { oneAt = -1; select(10, "t"); }
    else if (k === "Enter") submit();
    else if (k === "ArrowRight") zoom(wordIx + 1);
    else if (k === "ArrowLeft") zoom(wordIx < 0 ? -1 : wordIx - 1);
    else if (k === "Escape") closeZoom();
    else if ((k === "r" || k === "R") && wordIx >= 0) replay();
    else handled = false;
    if (handled) e.preventDefault();
  });

  $("login-form").addEventListener("submit", async (e) => {
    e.preventDefault();
    $("login-error").textContent = "";
    try {
      render(await api("/api/login", { name: $("name").value.trim() }));
    } catch (err) {
      $("login-error").textContent = err.message;
    }
  });
  $("logout").addEventListener("click", async () => {
    await api("/api/logout", {});
    $("name").value = "";
    render({ rater: null, progress: {}, page: null });
  });
  $("submit").addEventListener("click", submit);
  $("undo").addEventListener("click", undo);
  window.addEventListener("resize", barHeight);
  buildScores();
  reload();
})();
