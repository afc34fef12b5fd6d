"""Rank-test formulas: what a rank-dependent condition tests, and its truth on a class of ranks.

The interpreter turns conditions into formulas (`if rank == 0:` is `cmp("global_rank", "==", 0)`);
the sequence comparison enumerates classes of ranks from the atoms they compare and evaluates
each formula on each class. Both read formulas through this module alone.

A formula is a small tuple (cheap to build, hash and compare; the memo and the flattener key
dictionaries on them):
    ("const", bool)                 always true / always false
    ("cmp", kind, op, constant)     the rank of `kind` compared with a constant (`rank == 0`,
                                    `local_rank in (0, 1)`)
    ("var", key)                    an opaque rank-dependent test, one per value identity `key`
    ("member", group)               the rank is a member of this process group
    ("uvar", text)                  a condition alike on every rank, named so that its uses agree
    ("not", formula)
    ("and", (formula, ...)), ("or", (formula, ...))
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, FrozenSet, Mapping, Optional, Set, Tuple

if TYPE_CHECKING:
    from rankcheck.interp.values import Val
    from rankcheck.program.ir import Expr

Formula = Tuple[Any, ...]
# Assignment: a class of ranks, as the values its formulas read: rank kind -> representative rank,
# ("var", key) -> truth of an opaque test, ("uvar", text) -> truth of a shared uniform condition.
Assignment = Dict[Any, Any]

TRUE: Formula = ("const", True)
FALSE: Formula = ("const", False)


def cmp(kind: str, op: str, constant: Any) -> Formula:
    return ("cmp", kind, op, constant)


def var(key: Any) -> Formula:
    return ("var", key)


def member(group: str) -> Formula:
    return ("member", group)


def uvar(text: str) -> Formula:
    return ("uvar", text)


def combine(op: str, parts: Tuple[Formula, ...]) -> Formula:
    """`op` is "and" or "or"."""
    return (op, parts)


def negate(f: Formula) -> Formula:
    if f[0] == "const":
        return ("const", not f[1])
    if f[0] == "not":
        return f[1]
    return ("not", f)


def formula_of(v: Val, fallback_key: Tuple) -> Formula:
    """The rank test a rank-dependent value stands for when used as a condition."""
    if v.pred is not None:
        return v.pred
    if v.rank is not None:
        return ("cmp", v.rank, "!=", 0)
    return ("var", v.key or fallback_key)


# The comparison a constant on the left reads as when moved to the right (`0 == rank`).
FLIP = {"==": "==", "!=": "!=", "<": ">", ">": "<", "<=": ">=", ">=": "<="}


def compare_rank(value: Any, op: str, constant: Any) -> Optional[bool]:
    """`value op constant` for a rank `value`; None for an operator formulas do not use."""
    if op in ("==", "is"):
        return bool(value == constant)
    if op in ("!=", "is not"):
        return bool(value != constant)
    if op == "<":
        return bool(value < constant)
    if op == "<=":
        return bool(value <= constant)
    if op == ">":
        return bool(value > constant)
    if op == ">=":
        return bool(value >= constant)
    if op == "in":
        return value in constant
    if op == "not in":
        return value not in constant
    return None


def same_on_every_rank(pred: Formula) -> bool:
    """A comparison every rank answers alike (`local_rank != -1`: "launched distributed")."""
    _, _, op, const = pred
    results = set()
    for rank in (0, 1, 2, 3, 7, 1000):
        outcome = compare_rank(rank, op, const)
        if outcome is None:
            return False
        results.add(outcome)
    return len(results) == 1


def is_rank_constant(value: Any) -> bool:
    """An int, or a non-empty tuple of ints: what a rank can be compared with."""
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return True
    return isinstance(value, tuple) and value != () and all(isinstance(v, int) and not isinstance(v, bool) for v in value)


def freeze(value: Any) -> Any:
    return tuple(value) if isinstance(value, (list, tuple)) else value


def uniform_variable(expr: Expr) -> Optional[Formula]:
    """A condition every rank evaluates alike, named so that its uses can be kept consistent:
    `in_order`, `args.push_to_hub`, `not in_order`. None for anything less simple."""
    from rankcheck.program.ir import render_expr

    if expr[0] == "not":
        inner = uniform_variable(expr[1])
        return negate(inner) if inner is not None else None
    if expr[0] in ("name", "attr"):
        text = render_expr(expr)
        return ("uvar", text) if "..." not in text else None
    return None


def tested_kinds(formula: Formula) -> Optional[FrozenSet[str]]:
    """The rank kinds a condition's formula compares, when it tests nothing else (no opaque or
    per-rank-data variable, no group membership), else None."""
    tag = formula[0]
    if tag == "cmp":
        return frozenset([formula[1]])
    if tag == "const":
        return frozenset()
    if tag == "not":
        return tested_kinds(formula[1])
    if tag in ("and", "or"):
        kinds: FrozenSet[str] = frozenset()
        for part in formula[1]:
            found = tested_kinds(part)
            if found is None:
                return None
            kinds |= found
        return kinds
    return None


def names_the_rank(formula: Formula) -> bool:
    """Whether a condition is a test of the rank itself (`rank == 0`, `rank in ranks`), not only
    a value that depends on it somewhere along the way."""
    tag = formula[0]
    if tag in ("cmp", "member"):
        return True
    if tag == "not":
        return names_the_rank(formula[1])
    if tag in ("and", "or"):
        return any(names_the_rank(f) for f in formula[1])
    return False


# ------------------------------------------------------------------ truth on a class of ranks


def collect_atoms(formula: Formula, kinds: Dict[str, Set[Any]], variables: Set[Any]) -> None:
    """The rank constants a formula compares with, per rank kind (and their neighbours for an
    order comparison), and its opaque, membership and uniform variables: what tells the classes
    of ranks apart."""
    tag = formula[0]
    if tag == "cmp":
        _, kind, op, const = formula
        values = kinds.setdefault(kind, set())
        consts = const if isinstance(const, tuple) else (const,)
        for c in consts:
            if isinstance(c, int) and c >= 0:
                values.add(c)
                if op in ("<", "<=", ">", ">="):
                    values.add(c + 1)
                    if c > 0:
                        values.add(c - 1)
    elif tag == "var":
        variables.add(formula[1])
    elif tag == "member":
        variables.add(("member", formula[1]))
    elif tag == "uvar":
        variables.add(("uvar", formula[1]))
    elif tag == "not":
        collect_atoms(formula[1], kinds, variables)
    elif tag in ("and", "or"):
        for f in formula[1]:
            collect_atoms(f, kinds, variables)


def evaluate(formula: Formula, assignment: Mapping[Any, Any]) -> bool:
    """The formula's truth on the class of ranks `assignment` stands for."""
    tag = formula[0]
    if tag == "const":
        return bool(formula[1])
    if tag == "cmp":
        _, kind, op, const = formula
        return bool(compare_rank(assignment.get(kind, 0), op, const))
    if tag == "var":
        return bool(assignment.get(("var", formula[1]), False))
    if tag == "member":
        return bool(assignment.get(("var", ("member", formula[1])), False))
    if tag == "uvar":
        return bool(assignment.get(("uvar", formula[1]), True))
    if tag == "not":
        return not evaluate(formula[1], assignment)
    if tag == "and":
        return all(evaluate(f, assignment) for f in formula[1])
    if tag == "or":
        return any(evaluate(f, assignment) for f in formula[1])
    return False


def assignment_keys(formula: Formula, keys: Dict[Any, None]) -> bool:
    """Adds the assignment keys `evaluate` and `settled` read for this formula; False for a
    formula this function does not know (what it reads is then unknown)."""
    tag = formula[0]
    if tag == "const":
        return True
    if tag == "cmp":
        keys[formula[1]] = None
    elif tag == "var":
        keys[("var", formula[1])] = None
    elif tag == "member":
        keys[("var", ("member", formula[1]))] = None
    elif tag == "uvar":
        keys[("uvar", formula[1])] = None
    elif tag == "not":
        return assignment_keys(formula[1], keys)
    elif tag in ("and", "or"):
        return all(assignment_keys(f, keys) for f in formula[1])
    else:
        return False
    return True


def settled(formula: Formula, assignment: Mapping[Any, Any]) -> bool:
    """Whether a uniform branch's shared condition has a value in this class of ranks."""
    if formula[0] == "uvar":
        return ("uvar", formula[1]) in assignment
    if formula[0] == "not":
        return settled(formula[1], assignment)
    return False
