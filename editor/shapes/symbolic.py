"""Symbolic dimensions: integer polynomials over named dims, with floor division.

A model with dynamic inputs (``batch``, ``height``) still has a definite shape for every
tensor, as a formula: a stride-2 Conv turns ``height`` into ``floor((height - 1)/2) + 1``,
a Concat adds, a Flatten multiplies. This module is the small algebra those formulas need,
fast enough to run over every value of a 10,000-node graph in well under a second (a
general computer-algebra system costs ~50 µs per operation; this one a few µs).

A dim is either a plain ``int`` (known) or an :class:`Expr` (symbolic). An :class:`Expr` is
a sum of terms ``coef * a1 * a2 ...`` with integer coefficients, where each atom is a named
dim (``batch``) or an opaque floor quotient ``floor(p / k)`` of another polynomial by a
positive integer. Division that is exact term by term stays a polynomial
(``2*batch*seq / 2 = batch*seq``). The free functions (:func:`add`, :func:`mul`, ...) take
and return ``int | Expr`` and fold to ``int`` as soon as nothing symbolic is left.

NOTE: no simplification beyond collecting like terms; two formulas for the same value may
print differently. Comparisons that need an order (the peak of a memory profile) evaluate
the formulas at sample values (:func:`evaluate`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Union

__all__ = ["Dim", "Expr", "add", "sub", "mul", "floordiv", "ceildiv", "product", "symbol",
           "evaluate", "is_known", "to_text", "free_symbols"]

#: a monomial: the sorted names of its atoms, repeated for powers
Monomial = tuple[str, ...]


class Expr:
    """An integer polynomial over named atoms; immutable and hashable."""

    __slots__ = ("terms", "_hash")

    #: floor atoms by name -> (numerator, divisor), shared by every Expr
    FLOORS: dict[str, tuple[Expr, int]] = {}

    def __init__(self, terms: Mapping[Monomial, int]) -> None:
        # callers pass terms without zero coefficients (see _fold)
        self.terms: dict[Monomial, int] = dict(terms)
        self._hash: int | None = None

    def __hash__(self) -> int:
        if self._hash is None:
            self._hash = hash(frozenset(self.terms.items()))
        return self._hash

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Expr) and self.terms == other.terms

    def __repr__(self) -> str:
        return f"Expr({to_text(self)!r})"

    def __str__(self) -> str:
        return to_text(self)

    def constant(self) -> int:
        return self.terms.get((), 0)


Dim = Union[int, Expr]


def symbol(name: str) -> Expr:
    return Expr({(name,): 1})


def _terms(d: Dim) -> dict[Monomial, int]:
    return {(): d} if isinstance(d, int) else d.terms


def _fold(terms: dict[Monomial, int]) -> Dim:
    terms = {m: c for m, c in terms.items() if c}
    if not terms:
        return 0
    if len(terms) == 1 and () in terms:
        return terms[()]
    return Expr(terms)


# Results of add/mul on formulas, memoised: a graph repeats the same shapes layer after
# layer, so most products are asked for again and again. Bounded: cleared when it grows.
_CACHE: dict[tuple[str, object, object], Dim] = {}
_CACHE_LIMIT = 200_000


def _remember(key: tuple[str, object, object], value: Dim) -> Dim:
    if len(_CACHE) > _CACHE_LIMIT:
        _CACHE.clear()
    _CACHE[key] = value
    return value


def add(a: Dim, b: Dim) -> Dim:
    if isinstance(a, int) and isinstance(b, int):
        return a + b
    key = ("+", a, b)
    hit = _CACHE.get(key)
    if hit is not None:
        return hit
    return _remember(key, _add(a, b))


def _add(a: Dim, b: Dim) -> Dim:
    out = dict(_terms(a))
    for m, c in _terms(b).items():
        out[m] = out.get(m, 0) + c
    return _fold(out)


def sub(a: Dim, b: Dim) -> Dim:
    if isinstance(a, int) and isinstance(b, int):
        return a - b
    return add(a, mul(b, -1))


def mul(a: Dim, b: Dim) -> Dim:
    a_int, b_int = type(a) is int, type(b) is int
    if a_int and b_int:
        return a * b  # type: ignore[operator]
    if a_int and (a == 0 or a == 1):
        return 0 if a == 0 else b
    if b_int and (b == 0 or b == 1):
        return 0 if b == 0 else a
    key = ("*", a, b)
    hit = _CACHE.get(key)
    if hit is not None:
        return hit
    return _remember(key, _mul(a, b))


def _mul(a: Dim, b: Dim) -> Dim:
    out: dict[Monomial, int] = {}
    for ma, ca in _terms(a).items():
        for mb, cb in _terms(b).items():
            m = tuple(sorted(ma + mb)) if ma and mb else ma or mb
            out[m] = out.get(m, 0) + ca * cb
    return _fold(out)


def product(dims: object) -> Dim:
    """The product of dims: the known ones multiplied first, one formula product at most."""
    if type(dims) is tuple:
        key = ("prod", dims, None)
        hit = _CACHE.get(key)
        if hit is not None:
            return hit
        return _remember(key, _product(dims))
    return _product(dims)


def _product(dims: object) -> Dim:
    known = 1
    symbolic: Dim = 1
    for d in dims:  # type: ignore[attr-defined]
        if isinstance(d, int):
            known *= d
        else:
            symbolic = mul(symbolic, d)
    return mul(symbolic, known) if known != 1 else symbolic


def floordiv(a: Dim, k: int) -> Dim:
    """``floor(a / k)`` for a positive integer ``k``: exact division stays a polynomial."""
    if k <= 0:
        raise ValueError(f"division of a dimension by {k}")
    if isinstance(a, int):
        return a // k
    if k == 1:
        return a
    if all(c % k == 0 for c in a.terms.values()):
        return _fold({m: c // k for m, c in a.terms.items()})
    # keep the integer part of the constant outside: floor((p + q*k)/k) = floor(p/k) + q
    const = a.constant()
    q = const // k
    inner = _fold({**a.terms, (): const - q * k})
    if isinstance(inner, int):
        return inner // k + q
    name = f"floor(({to_text(inner)})/{k})"
    Expr.FLOORS.setdefault(name, (inner, k))  # type: ignore[arg-type]
    return add(symbol(name), q)


def ceildiv(a: Dim, k: int) -> Dim:
    """``ceil(a / k)`` = ``-floor(-a / k)``."""
    return mul(floordiv(mul(a, -1), k), -1)


def is_known(d: Dim | None) -> bool:
    return isinstance(d, int)


def free_symbols(d: Dim | None) -> set[str]:
    """The named dims a formula depends on (looking inside floor atoms)."""
    if not isinstance(d, Expr):
        return set()
    out: set[str] = set()
    for m in d.terms:
        for atom in m:
            if atom in Expr.FLOORS:
                out |= free_symbols(Expr.FLOORS[atom][0])
            else:
                out.add(atom)
    return out


def evaluate(d: Dim | None, values: Mapping[str, int], default: int | None = None) -> int | None:
    """The value of ``d`` with the named dims set; ``default`` for any not given (None: the
    result is None when a dim is missing)."""
    if d is None or isinstance(d, int):
        return d
    total = 0
    for m, c in d.terms.items():
        term = c
        for atom in m:
            if atom in Expr.FLOORS:
                inner, k = Expr.FLOORS[atom]
                v = evaluate(inner, values, default)
                if v is None:
                    return None
                term *= v // k
            else:
                v = values.get(atom, default)
                if v is None:
                    return None
                term *= v
        total += term
    return total


def to_text(d: Dim | None) -> str:
    """``3*height*width + 2``: terms by degree (highest first), then by name."""
    if d is None:
        return "?"
    if isinstance(d, int):
        return str(d)
    if len(d.terms) == 1:
        (mono, coef), = d.terms.items()
        if coef == 1 and len(mono) == 1:
            return mono[0]  # a named dim alone reads as its own name, quoted only inside formulas
    parts: list[str] = []
    for m, c in sorted(d.terms.items(), key=lambda mc: (-len(mc[0]), mc[0])):
        atoms = "*".join(_atom_text(a) for a in m)
        if not atoms:
            body = str(abs(c))
        elif abs(c) == 1:
            body = atoms
        else:
            body = f"{abs(c)}*{atoms}"
        parts.append(("- " if c < 0 else "+ ") + body)
    text = " ".join(parts)
    return text[2:] if text.startswith("+ ") else "-" + text[2:]


def _atom_text(atom: str) -> str:
    if atom in Expr.FLOORS or atom.isidentifier():
        return atom
    return f"'{atom}'" if "'" not in atom else f'"{atom}"'
