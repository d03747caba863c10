"""Mutants of a Python module, generated over its ast with stable ids (the gate's power measure,
issue 17).

Guarantees:
- ``sites(source, module)`` lists every mutant of a module in one deterministic order; the same
  source always gives the same list and the same ids;
- a mutant's id (``module:function:operator:digest[:n]``) does not change when code elsewhere in
  the module moves (no line numbers in it): ``digest`` hashes the mutated node's source text and
  ``n`` tells identical nodes of one function apart, so an id written into
  ``equivalent_mutants.toml`` keeps naming the same mutant;
- ``mutate(source, module, mid)`` returns the module's code object with exactly that one change,
  compiled under the original file name (tracebacks and coverage point at the real file);
- code that only runs when one of the reference's named mutants is switched on (the body of
  ``if ...mutant(NAME)...:``) and ``assert`` statements are not mutated: the first is the named
  bugs' own code, which the default gate never runs, the second checks, it does not decide.

The operators are the classic ones of mutation testing (Offutt et al., "An experimental
determination of sufficient mutant operators", 1996; PIT's defaults): relational operator
replacement, constant +/-1 (boundary), condition negation, guard removal, min/max swap, and
statement deletion.
"""

from __future__ import annotations

import ast
import hashlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from types import CodeType

CMP_SWAP: dict[type[ast.cmpop], type[ast.cmpop]] = {
    ast.Lt: ast.LtE,
    ast.LtE: ast.Lt,
    ast.Gt: ast.GtE,
    ast.GtE: ast.Gt,
    ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq,
    ast.In: ast.NotIn,
    ast.NotIn: ast.In,
    ast.Is: ast.IsNot,
    ast.IsNot: ast.Is,
}
"""Relational operator replacement: each boundary comparison moves its boundary by one (< to <=,
> to >=), equality and membership flip."""

OPERATORS = ("cmp", "const+1", "const-1", "negate", "no-guard", "minmax", "drop")
"""Every operator, in the order sites are listed for one node."""


@dataclass(frozen=True)
class Mutant:
    """One mutant: where (module, function, line) and what (operator, the original and the new text)."""

    mid: str
    module: str
    function: str
    operator: str
    line: int
    stmt_line: int
    """First line of the enclosing statement: what line coverage counts as run."""
    before: str
    """The text of the node the mutant changes (its first line)."""


@dataclass(frozen=True)
class _Site:
    function: str
    operator: str
    node: ast.AST
    stmt: ast.stmt
    apply: Callable[[], None]
    """Performs the change on the tree the site was found in."""
    describe: Callable[[], str]
    """The changed node's text (called after ``apply``)."""


def _is_mutant_switch(test: ast.expr) -> bool:
    """Whether an ``if`` test asks for one of the reference's named mutants (``rt.mutant(NAME)``)."""
    return any(
        isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "mutant"
        for n in ast.walk(test)
    )


def _is_inert(stmt: ast.stmt) -> bool:
    """A constant as a statement (a docstring, a Protocol method's ``...``): it does nothing, so
    dropping it would be an equivalent mutant by construction."""
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)


def _guard(stmt: ast.stmt) -> bool:
    """An early exit: ``if cond: ... raise/return/continue/break`` without ``else``."""
    return (
        isinstance(stmt, ast.If)
        and not stmt.orelse
        and isinstance(stmt.body[-1], ast.Raise | ast.Return | ast.Continue | ast.Break)
    )


class _Finder:
    """Walks one module's tree in source order and collects its mutation sites."""

    def __init__(self) -> None:
        self.sites: list[_Site] = []
        self._names: list[str] = []

    @property
    def _function(self) -> str:
        return ".".join(self._names) or "<module>"

    def body(self, stmts: list[ast.stmt], in_function: bool) -> None:
        for i, stmt in enumerate(stmts):
            self.stmt(stmts, i, stmt, in_function)

    def stmt(self, stmts: list[ast.stmt], i: int, stmt: ast.stmt, in_function: bool) -> None:
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            self._names.append(stmt.name)
            self.body(stmt.body, in_function=not isinstance(stmt, ast.ClassDef) or in_function)
            self._names.pop()
            return
        if isinstance(stmt, ast.Assert | ast.Import | ast.ImportFrom) or _is_inert(stmt):
            return
        if isinstance(stmt, ast.If) and _is_mutant_switch(stmt.test):
            # The body is the named mutant's own code; the rest (elif / else) is the reference's.
            self.expr(stmt.test, stmt, mutate_switch=False)
            self.body(stmt.orelse, in_function)
            return
        if in_function:
            self._drop_and_guard(stmts, i, stmt)
        if isinstance(stmt, ast.If | ast.While):
            self._negate(stmt)
        for field in ("test", "value", "iter", "target", "targets", "exc", "items", "args", "decorator_list"):
            sub = getattr(stmt, field, None)
            if isinstance(sub, ast.expr):
                self.expr(sub, stmt)
            elif isinstance(sub, list):
                for s in sub:
                    if isinstance(s, ast.expr):
                        self.expr(s, stmt)
        if isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
            self.expr(stmt.value, stmt)
        for field in ("body", "orelse", "finalbody"):
            sub = getattr(stmt, field, None)
            if isinstance(sub, list) and sub and isinstance(sub[0], ast.stmt):
                self.body(sub, in_function)
        for handler in getattr(stmt, "handlers", []):
            self.body(handler.body, in_function)
        for case in getattr(stmt, "cases", []):
            self.body(case.body, in_function)

    def _drop_and_guard(self, stmts: list[ast.stmt], i: int, stmt: ast.stmt) -> None:
        def replace() -> None:
            stmts[i] = ast.copy_location(ast.Pass(), stmt)

        if _guard(stmt):
            self._add("no-guard", stmt, stmt, replace, lambda: "pass")
        elif isinstance(stmt, ast.Expr | ast.Assign | ast.AugAssign | ast.AnnAssign | ast.Return | ast.Raise):
            if isinstance(stmt, ast.AnnAssign) and stmt.value is None:
                return
            self._add("drop", stmt, stmt, replace, lambda: "pass")

    def _negate(self, stmt: ast.If | ast.While) -> None:
        test = stmt.test

        def apply() -> None:
            stmt.test = ast.copy_location(ast.UnaryOp(ast.Not(), test), test)

        self._add("negate", test, stmt, apply, lambda: ast.unparse(stmt.test))

    def expr(self, node: ast.expr, stmt: ast.stmt, mutate_switch: bool = True) -> None:
        """Every site inside one expression of ``stmt``, in source order (lambdas and nested
        functions excluded: they are their own scope)."""
        for sub in _walk_in_order(node):
            if isinstance(sub, ast.Compare) and len(sub.ops) == 1 and type(sub.ops[0]) in CMP_SWAP:
                if mutate_switch:
                    self._cmp(sub, stmt)
            elif isinstance(sub, ast.IfExp):
                self._ifexp(sub, stmt)
            elif isinstance(sub, ast.Call) and isinstance(sub.func, ast.Name) and sub.func.id in ("min", "max"):
                self._minmax(sub, stmt)
            elif isinstance(sub, ast.Constant) and type(sub.value) is int:
                self._const(sub, stmt)

    def _cmp(self, node: ast.Compare, stmt: ast.stmt) -> None:
        def apply() -> None:
            node.ops = [CMP_SWAP[type(node.ops[0])]()]

        self._add("cmp", node, stmt, apply, lambda: ast.unparse(node))

    def _ifexp(self, node: ast.IfExp, stmt: ast.stmt) -> None:
        test = node.test

        def apply() -> None:
            node.test = ast.copy_location(ast.UnaryOp(ast.Not(), test), test)

        self._add("negate", test, stmt, apply, lambda: ast.unparse(node.test))

    def _minmax(self, node: ast.Call, stmt: ast.stmt) -> None:
        assert isinstance(node.func, ast.Name)
        func = node.func

        def apply() -> None:
            func.id = "max" if func.id == "min" else "min"

        self._add("minmax", node, stmt, apply, lambda: ast.unparse(node))

    def _const(self, node: ast.Constant, stmt: ast.stmt) -> None:
        value = node.value
        assert isinstance(value, int)
        for op, delta in (("const+1", 1), ("const-1", -1)):

            def apply(delta: int = delta) -> None:
                node.value = value + delta

            self._add(op, node, stmt, apply, lambda: ast.unparse(node))

    def _add(
        self, operator: str, node: ast.AST, stmt: ast.stmt, apply: Callable[[], None], describe: Callable[[], str]
    ) -> None:
        self.sites.append(_Site(self._function, operator, node, stmt, apply, describe))


def _walk_in_order(node: ast.expr) -> Iterator[ast.expr]:
    """The expression's nodes, parents before children, children in field order (source order),
    without descending into lambdas or comprehensions' own scopes' targets."""
    yield node
    if isinstance(node, ast.Lambda):
        return
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.expr):
            yield from _walk_in_order(child)
        elif isinstance(child, ast.comprehension):
            yield from _walk_in_order(child.iter)
            for cond in child.ifs:
                yield from _walk_in_order(cond)
        elif isinstance(child, ast.keyword):
            yield from _walk_in_order(child.value)


def _find(source: str) -> tuple[ast.Module, list[_Site]]:
    tree = ast.parse(source)
    finder = _Finder()
    finder.body(tree.body, in_function=False)
    return tree, finder.sites


def _ids(module: str, sites: list[_Site]) -> list[str]:
    seen: dict[str, int] = {}
    out = []
    for s in sites:
        text = ast.unparse(s.node)
        digest = hashlib.sha1(f"{s.operator}\0{text}".encode()).hexdigest()[:8]
        key = f"{module}:{s.function}:{s.operator}:{digest}"
        n = seen.get(key, 0)
        seen[key] = n + 1
        out.append(key if n == 0 else f"{key}:{n}")
    return out


def sites(source: str, module: str) -> list[Mutant]:
    """Every mutant of ``source`` (the text of module ``module``), in source order."""
    _tree, found = _find(source)
    out = []
    for mid, site in zip(_ids(module, found), found, strict=True):
        before = ast.unparse(site.node).splitlines()[0]
        out.append(
            Mutant(
                mid=mid,
                module=module,
                function=site.function,
                operator=site.operator,
                line=getattr(site.node, "lineno", site.stmt.lineno),
                stmt_line=site.stmt.lineno,
                before=before,
            )
        )
    return out


def after_text(source: str, m: Mutant) -> str:
    """The changed node's text once ``m`` is applied (its first line): what a survivor list shows."""
    _tree, found = _find(source)
    index = _ids(m.module, found).index(m.mid)
    found[index].apply()
    return found[index].describe().splitlines()[0]


class UnknownMutant(KeyError):
    """The id names no mutant of the module (the module changed since the id was written)."""


def mutated_tree(source: str, module: str, mid: str) -> ast.Module:
    """The module's tree with mutant ``mid`` applied."""
    tree, found = _find(source)
    ids = _ids(module, found)
    if mid not in ids:
        raise UnknownMutant(f"{mid}: no such mutant in {module} (ids are listed by sites())")
    found[ids.index(mid)].apply()
    return ast.fix_missing_locations(tree)


def mutate(source: str, module: str, mid: str, filename: str) -> CodeType:
    """The code object of ``module`` with mutant ``mid`` applied, compiled as ``filename``."""
    return compile(mutated_tree(source, module, mid), filename, "exec")
