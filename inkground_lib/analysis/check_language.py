"""The check language of the paper's claims: checks and note expressions over reported ids, parsed with ``ast``
and evaluated over an allow-list of nodes (never ``eval``).

A check is clauses joined by ``and``; each clause is one of

* ``max over {a, b, c} is b`` / ``min over {...} is b``: the named id holds the extreme value (ties: it is one
  of the extremes);
* ``EXPR ~= EXPR within TOL``: absolute difference at most TOL;
* a comparison chain of arithmetic expressions (``+ - * /``, unary minus, ``min(...)`` / ``max(...)``), e.g.
  ``a <= b <= c``, ``a - b == 3`` (``==`` and ``!=`` with a relative tolerance of 1e-9).

Names are ids of data/paper/reported.csv; numbers are literals. A note's ``{{expression}}`` or
``{{expression:format}}`` is an arithmetic expression of the same kind, replaced by its value.

A clause that only says two of the paper's numbers are equal (``a == b``) restates one number that the paper gives
twice (:func:`split_restatements`): it can show the paper contradicting itself, but when it holds it checks
nothing.
"""

from __future__ import annotations

import ast
import math
import operator
import re
from dataclasses import dataclass
from typing import Mapping


class ClaimsError(ValueError):
    """claims.csv or a check that cannot be used (names the claim and the field)."""


@dataclass
class CheckResult:
    ok: bool | None  # None: no check
    detail: str


_AGG = re.compile(r"^(max|min)\s+over\s+\{([^}]*)\}\s+is\s+([A-Za-z_]\w*)$")


_APPROX = re.compile(r"^(.+?)~=(.+?)\s+within\s+([0-9.eE+-]+)$")


_BIN = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv}


_CMP = {ast.Lt: ("<", operator.lt), ast.LtE: ("<=", operator.le), ast.Gt: (">", operator.gt),
        ast.GtE: (">=", operator.ge), ast.Eq: ("==", None), ast.NotEq: ("!=", None)}


def _clauses(check: str) -> list[str]:
    return [c.strip() for c in re.split(r"\s+and\s+", check.strip()) if c.strip()]


def check_names(check: str, where: str = "check") -> set[str]:
    """The reported ids a check uses (raises ClaimsError when it does not parse)."""
    names: set[str] = set()
    for c in _clauses(check):
        m = _AGG.match(c)
        if m:
            names |= {n.strip() for n in m.group(2).split(",") if n.strip()} | {m.group(3)}
            continue
        m = _APPROX.match(c)
        parts = [m.group(1), m.group(2)] if m else [c]
        for p in parts:
            try:
                tree = ast.parse(p.strip(), mode="eval")
            except SyntaxError as e:
                raise ClaimsError(f"{where}: field check: cannot parse {c!r}: {e.msg}") from None
            _validate(tree.body, c, where)
            names |= {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id not in ("min", "max")}
    return names


FUNNEL_ORDER = ("benchmark_pages", "ocr_pass_pages", "candidates")
"""The paper's funnel counts from the last stage to the first: each filter keeps a subset of the pages before it, so
an order between them (``benchmark_pages <= ocr_pass_pages <= candidates``) holds for any funnel."""


def _is_rate_restatement(clause: str) -> bool:
    """``a / b ~= c within t``: a rate stated beside the two counts it is the ratio of (the paper's "777 pages,
    26%"): one number written in two forms."""
    m = _APPROX.match(clause.strip())
    if not m:
        return False
    try:
        left, right = (ast.parse(x.strip(), mode="eval").body for x in m.group(1, 2))
    except SyntaxError:
        return False
    ratio = lambda n: (isinstance(n, ast.BinOp) and isinstance(n.op, ast.Div)  # noqa: E731
                       and isinstance(n.left, ast.Name) and isinstance(n.right, ast.Name))
    return (ratio(left) and isinstance(right, ast.Name)) or (ratio(right) and isinstance(left, ast.Name))


def _is_funnel_order(clause: str) -> bool:
    """A chain of ``<=`` / ``<`` over the funnel's counts in :data:`FUNNEL_ORDER`'s order: true of any funnel."""
    try:
        node = ast.parse(clause, mode="eval").body
    except SyntaxError:
        return False
    if not (isinstance(node, ast.Compare) and all(isinstance(op, (ast.LtE, ast.Lt)) for op in node.ops)):
        return False
    names = [n.id if isinstance(n, ast.Name) else None for n in (node.left, *node.comparators)]
    if None in names or not set(names) <= set(FUNNEL_ORDER):
        return False
    pos = [FUNNEL_ORDER.index(n) for n in names]
    return pos == sorted(pos)


def _is_restatement(clause: str) -> bool:
    """A clause that checks nothing the paper did not already say: two numbers said equal (``a == b``), a rate
    beside the counts it is the ratio of (:func:`_is_rate_restatement`), or the order of the funnel's counts,
    which any funnel has (:func:`_is_funnel_order`)."""
    if _is_rate_restatement(clause) or _is_funnel_order(clause):
        return True
    try:
        node = ast.parse(clause, mode="eval").body
    except SyntaxError:
        return False
    return (isinstance(node, ast.Compare) and all(isinstance(op, ast.Eq) for op in node.ops)
            and all(isinstance(n, ast.Name) for n in (node.left, *node.comparators)))


def split_restatements(check: str) -> tuple[str, list[str]]:
    """(the check without its restatements, the restatements): a restatement is a clause that cannot fail on
    anything but a typo (:func:`_is_restatement`): two reported numbers said equal (``a == b``, one number the
    paper states in two places), a rate beside the counts it is the ratio of (``a / b ~= c within t``), or the
    funnel's counts in their order (any funnel keeps a subset at each stage).

    >>> split_restatements("b <= a <= c and x == y")
    ('b <= a <= c', ['x == y'])
    >>> split_restatements("ocr_pass_pages / candidates ~= ocr_pass_rate within 0.005")
    ('', ['ocr_pass_pages / candidates ~= ocr_pass_rate within 0.005'])
    >>> split_restatements("benchmark_pages <= ocr_pass_pages <= candidates and k == k2")
    ('', ['benchmark_pages <= ocr_pass_pages <= candidates', 'k == k2'])
    >>> split_restatements("benchmark_pages / ocr_pass_pages <= rater_agreement")
    ('benchmark_pages / ocr_pass_pages <= rater_agreement', [])
    >>> split_restatements("x == y")
    ('', ['x == y'])
    >>> split_restatements("a - b == 3")
    ('a - b == 3', [])
    """
    kept, restated = [], []
    for c in _clauses(check):
        (restated if _is_restatement(c) else kept).append(c)
    return " and ".join(kept), restated


def _validate(node, clause, where):
    ok = (ast.Compare, ast.BinOp, ast.UnaryOp, ast.Constant, ast.Name, ast.Call, ast.Load, ast.USub, ast.UAdd,
          *tuple(_BIN), *tuple(_CMP))
    for n in ast.walk(node):
        if not isinstance(n, ok):
            raise ClaimsError(f"{where}: field check: {type(n).__name__} not allowed in {clause!r}")
        if isinstance(n, ast.Constant) and not isinstance(n.value, (int, float)):
            raise ClaimsError(f"{where}: field check: only numbers allowed as literals in {clause!r}")
        if isinstance(n, ast.Call) and not (isinstance(n.func, ast.Name) and n.func.id in ("min", "max") and not n.keywords):
            raise ClaimsError(f"{where}: field check: only min(...) / max(...) calls allowed in {clause!r}")


def format_number(v: float) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "n/a"
    v = float(v)
    if v.is_integer() and abs(v) >= 1:
        return f"{int(v):,}"
    if abs(v) >= 1000:
        return f"{v:,.0f}"
    return f"{v:.4g}"


def _arith(node, values: Mapping[str, float]) -> float:
    if isinstance(node, ast.Constant):
        return float(node.value)
    if isinstance(node, ast.Name):
        if node.id not in values:
            raise ClaimsError(f"check: no value for {node.id!r}")
        return float(values[node.id])
    if isinstance(node, ast.UnaryOp):
        v = _arith(node.operand, values)
        return -v if isinstance(node.op, ast.USub) else v
    if isinstance(node, ast.BinOp):
        a, b = _arith(node.left, values), _arith(node.right, values)
        if isinstance(node.op, ast.Div) and b == 0:
            return float("nan")
        return _BIN[type(node.op)](a, b)
    if isinstance(node, ast.Call):
        args = [_arith(a, values) for a in node.args]
        return (min if node.func.id == "min" else max)(args)
    raise ClaimsError(f"check: cannot evaluate {ast.dump(node)}")


def _show(node, values) -> str:
    """An expression with its value: 'ocr_pass_pages / candidates = 777 / 2,984 = 0.2604'."""
    src = ast.unparse(node)
    v = _arith(node, values)
    if isinstance(node, ast.Constant):
        return format_number(v)
    if isinstance(node, ast.Name):
        return f"{src} = {format_number(v)}"

    class Sub(ast.NodeTransformer):
        def visit_Name(self, n):
            if n.id in values:
                return ast.Constant(values[n.id])
            return n

    filled = ast.unparse(Sub().visit(ast.parse(src, mode="eval")).body)
    filled = re.sub(r"\d+\.\d+|\d+", lambda m: format_number(float(m.group(0))), filled)
    return f"{src} = {filled} = {format_number(v)}"


def evaluate_check(check: str, values: Mapping[str, float]) -> CheckResult:
    """Evaluate a check (the module docstring gives the language) over ``values`` (reported id -> number). Returns ok (True /
    False; None for an empty check) and a detail text with the numbers used."""
    if not str(check).strip():
        return CheckResult(None, "")
    oks, details = [], []
    for c in _clauses(check):
        m = _AGG.match(c)
        if m:
            names = [n.strip() for n in m.group(2).split(",") if n.strip()]
            vals = {n: float(values[n]) for n in names}
            best = (max if m.group(1) == "max" else min)(vals.values())
            ok = m.group(3) in vals and math.isclose(vals[m.group(3)], best, rel_tol=1e-12, abs_tol=0)
            listing = ", ".join(f"{n} {format_number(v)}" for n, v in vals.items())
            winners = [n for n, v in vals.items() if v == best]
            details.append(f"{m.group(1)} of {{{listing}}} is {', '.join(winners)} ({format_number(best)})"
                           + ("" if ok else f", not {m.group(3)}"))
            oks.append(ok)
            continue
        m = _APPROX.match(c)
        if m:
            a = ast.parse(m.group(1).strip(), mode="eval").body
            b = ast.parse(m.group(2).strip(), mode="eval").body
            tol = float(m.group(3))
            va, vb = _arith(a, values), _arith(b, values)
            ok = abs(va - vb) <= tol + 1e-12
            details.append(f"{_show(a, values)} vs {_show(b, values)}: |difference| {abs(va - vb):.4g} "
                           f"{'<=' if ok else '>'} {tol:g}")
            oks.append(ok)
            continue
        node = ast.parse(c, mode="eval").body
        if not isinstance(node, ast.Compare):
            raise ClaimsError(f"check: clause {c!r} is not a comparison, an approximation or an extreme")
        left = node.left
        parts = [_show(left, values)]
        ok = True
        va = _arith(left, values)
        for op, right in zip(node.ops, node.comparators):
            vb = _arith(right, values)
            sym, fn = _CMP[type(op)]
            if sym == "==":
                r = math.isclose(va, vb, rel_tol=1e-9, abs_tol=1e-12)
            elif sym == "!=":
                r = not math.isclose(va, vb, rel_tol=1e-9, abs_tol=1e-12)
            else:
                r = bool(fn(va, vb))
            ok = ok and r
            parts += [sym, _show(right, values)]
            va = vb
        details.append(f"{' '.join(parts)}: {'true' if ok else 'false'}")
        oks.append(ok)
    return CheckResult(all(oks), "; ".join(details))


_NOTE_EXPR = re.compile(r"\{\{(.+?)(?::([^{}:]+))?\}\}")


def note_expressions(note: str) -> list[tuple[str, str | None]]:
    """The (expression, format) pairs of a note's {{...}} placeholders."""
    return [(m.group(1).strip(), m.group(2)) for m in _NOTE_EXPR.finditer(str(note))]


def render_note(note: str, values: Mapping[str, float]) -> str:
    """A note with every {{expression[:format]}} replaced by its value over ``values`` (reported ids)."""

    def sub(m):
        v = _arith(ast.parse(m.group(1).strip(), mode="eval").body, values)
        return format(v, m.group(2)) if m.group(2) else format_number(v)

    return _NOTE_EXPR.sub(sub, str(note))
