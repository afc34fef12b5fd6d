"""Scopes: what a name means, from one module alone.

Names are resolved here from the module's own imports and definitions (far cheaper than
libcst's scope and qualified-name providers), so the summary says `torch.distributed.all_reduce`
where the source said `dist.all_reduce`.
"""

from __future__ import annotations

import ast
from typing import Dict, List, Optional, Sequence, Set, Tuple

import libcst as cst

from rankcheck.program.ir import STAR_IMPORT


class Scope:
    """Names bound in one function (or the module): locals, local defs, aliases to globals."""

    def __init__(self, qualname: str, parent: Optional[Scope], is_module: bool = False) -> None:
        self.qualname = qualname
        self.parent = parent
        self.is_module = is_module
        self.locals: Set[str] = set()
        # name -> dotted global it stands for (imports, defs, classes, single simple aliases)
        self.aliases: Dict[str, str] = {}
        self.first_param: Optional[str] = None  # `self` / `cls` of a method
        self.class_qualname: Optional[str] = None

    def resolve(self, name: str) -> Tuple[str, str]:
        """('qual', dotted) for a name that stands for a global thing, ('local', name) for a local
        variable, ('global', name) for a module-level variable."""
        scope: Optional[Scope] = self
        while scope is not None:
            if name in scope.aliases:
                return "qual", scope.aliases[name]
            if name in scope.locals:
                if scope is self:
                    return "local", name
                return ("global", name) if scope.is_module else ("local", name)
            scope = scope.parent
        return "qual", name  # builtins and unknown names: their bare name (`exit`, `int`)


def dotted_name(node: cst.BaseExpression) -> Optional[List[str]]:
    parts: List[str] = []
    while isinstance(node, cst.Attribute):
        parts.append(node.attr.value)
        node = node.value
    if isinstance(node, cst.Name):
        parts.append(node.value)
        return list(reversed(parts))
    return None


def resolve_relative(module: str, is_package: bool, level: int, target: Optional[str]) -> str:
    parts = module.split(".")
    if not is_package:
        parts = parts[:-1]
    if level > 1:
        parts = parts[: len(parts) - (level - 1)] if level - 1 <= len(parts) else []
    base = ".".join(parts)
    if target:
        return f"{base}.{target}" if base else target
    return base


ImportMap = Tuple[Tuple[str, str], ...]


def find_from(dotted: str, import_map: ImportMap) -> str:
    """An absolute import's dotted name as the importing file finds it: a top-level name that its
    own source root provides under an internal name (`driver.identity`) is that module."""
    if not import_map:
        return dotted
    head, dot, rest = dotted.partition(".")
    for name, internal in import_map:
        if name == head:
            return internal + dot + rest
    return dotted


def import_bindings(node: cst.CSTNode, module: str, is_package: bool, import_map: ImportMap = ()) -> List[Tuple[str, str]]:
    """(bound name, dotted target) of an import statement. `import_map`: see `find_from`."""
    out: List[Tuple[str, str]] = []
    if isinstance(node, cst.Import):
        for alias in node.names:
            dotted = dotted_name(alias.name)
            if not dotted:
                continue
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                out.append((alias.asname.name.value, find_from(".".join(dotted), import_map)))
            else:
                out.append((dotted[0], find_from(dotted[0], import_map)))
    elif isinstance(node, cst.ImportFrom):
        dotted = dotted_name(node.module) if node.module is not None else None
        target = ".".join(dotted) if dotted else None
        level = len(node.relative)
        base = resolve_relative(module, is_package, level, target) if level else find_from(target or "", import_map)
        if isinstance(node.names, cst.ImportStar):
            # `from torch.distributed import *` in a module that wraps a few of its functions
            # (nanotron.distributed): the names the module does not define come from there.
            # Bound as STAR_IMPORT; the last one wins, as in Python.
            if base:
                out.append((STAR_IMPORT, base))
            return out
        for alias in node.names:
            if not isinstance(alias.name, cst.Name):
                continue
            name = alias.name.value
            bound = name
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                bound = alias.asname.name.value
            out.append((bound, f"{base}.{name}" if base else name))
    return out


def absolute_imports_in(tree: ast.Module) -> Tuple[Tuple[str, int], ...]:
    """(first name, line) of each absolute import in CPython's tree, in the statements the
    lowering visits (module and function bodies, the blocks of compound statements, the methods
    of classes): what a full summary records from libcst, for a minimal summary."""
    found: List[Tuple[str, int]] = []
    pending: List[Sequence[ast.stmt]] = [tree.body]
    while pending:
        for stmt in pending.pop():
            if isinstance(stmt, ast.Import):
                found.extend((alias.name.split(".", 1)[0], stmt.lineno) for alias in stmt.names)
            elif isinstance(stmt, ast.ImportFrom):
                if not stmt.level and stmt.module:
                    found.append((stmt.module.split(".", 1)[0], stmt.lineno))
            elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                pending.append(stmt.body)
            elif isinstance(stmt, ast.ClassDef):
                pending.extend(_class_bodies(stmt))
            elif isinstance(stmt, (ast.If, ast.While, ast.For, ast.AsyncFor)):
                pending.extend((stmt.body, stmt.orelse))
            elif isinstance(stmt, (ast.With, ast.AsyncWith)):
                pending.append(stmt.body)
            elif isinstance(stmt, (ast.Try, getattr(ast, "TryStar", ast.Try))):
                pending.extend((stmt.body, *(h.body for h in stmt.handlers), stmt.orelse, stmt.finalbody))  # type: ignore[attr-defined]
            elif isinstance(stmt, getattr(ast, "Match", ())):
                pending.extend(case.body for case in stmt.cases)  # type: ignore[attr-defined]
    return tuple(sorted(found, key=lambda item: item[1]))


def _class_bodies(node: ast.ClassDef) -> List[Sequence[ast.stmt]]:
    """The bodies the lowering visits in a class: its methods' and its nested classes'."""
    out: List[Sequence[ast.stmt]] = []
    for stmt in node.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            out.append(stmt.body)
        elif isinstance(stmt, ast.ClassDef):
            out.extend(_class_bodies(stmt))
    return out


class BindingCollector(cst.CSTVisitor):
    """Names a function (or module) body binds, without descending into nested scopes."""

    def __init__(self, module: str, is_package: bool, import_map: ImportMap = ()) -> None:
        self.module = module
        self.is_package = is_package
        self.import_map = import_map
        self.assigned: Dict[str, int] = {}
        self.simple_aliases: Dict[str, cst.BaseExpression] = {}
        self.defs: List[str] = []
        self.imports: List[Tuple[str, str]] = []
        self.depth = 0

    def _bind(self, target: cst.BaseExpression, value: Optional[cst.BaseExpression] = None) -> None:
        if isinstance(target, cst.Name):
            self.assigned[target.value] = self.assigned.get(target.value, 0) + 1
            if value is not None and isinstance(value, (cst.Name, cst.Attribute, cst.Lambda)):
                self.simple_aliases[target.value] = value
        elif isinstance(target, (cst.Tuple, cst.List)):
            for el in target.elements:
                self._bind(el.value)
        elif isinstance(target, cst.StarredElement):
            self._bind(target.value)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        self.defs.append(node.name.value)
        return False

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        self.defs.append(node.name.value)
        return False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False

    def visit_Assign(self, node: cst.Assign) -> None:
        for t in node.targets:
            self._bind(t.target, node.value if len(node.targets) == 1 else None)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._bind(node.target, node.value)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._bind(node.target)
        self._bind(node.target)  # an augmented name is never a simple alias

    def visit_For(self, node: cst.For) -> None:
        self._bind(node.target)

    def visit_WithItem(self, node: cst.WithItem) -> None:
        if node.asname is not None:
            self._bind(node.asname.name)

    def visit_ExceptHandler(self, node: cst.ExceptHandler) -> None:
        if node.name is not None:
            self._bind(node.name.name)

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        self._bind(node.target)

    def visit_Import(self, node: cst.Import) -> None:
        self.imports.extend(import_bindings(node, self.module, self.is_package, self.import_map))

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        self.imports.extend(import_bindings(node, self.module, self.is_package, self.import_map))

    # Comprehension variables live in their own scope: do not bind them here.
    def visit_CompFor(self, node: cst.CompFor) -> None:
        pass

    def collect(self, body: Sequence[cst.CSTNode]) -> None:
        """The same bindings as visiting `body`, found by walking statements only: names are bound
        by statements, except by `:=`, and the caller visits fully when the module has one. libcst's
        generic visitor costs several times a parse; this walk touches a few nodes per statement."""
        for stmt in body:
            if isinstance(stmt, cst.SimpleStatementLine):
                for small in stmt.body:
                    if isinstance(small, cst.Assign):
                        self.visit_Assign(small)
                    elif isinstance(small, cst.AnnAssign):
                        self.visit_AnnAssign(small)
                    elif isinstance(small, cst.AugAssign):
                        self.visit_AugAssign(small)
                    elif isinstance(small, (cst.Import, cst.ImportFrom)):
                        self.imports.extend(import_bindings(small, self.module, self.is_package, self.import_map))
            elif isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
                self.defs.append(stmt.name.value)
            elif isinstance(stmt, cst.If):
                self.collect(stmt.body.body)
                self._collect_else(stmt.orelse)
            elif isinstance(stmt, cst.For):
                self.visit_For(stmt)
                self.collect(stmt.body.body)
                self._collect_else(stmt.orelse)
            elif isinstance(stmt, cst.While):
                self.collect(stmt.body.body)
                self._collect_else(stmt.orelse)
            elif isinstance(stmt, cst.With):
                for item in stmt.items:
                    self.visit_WithItem(item)
                self.collect(stmt.body.body)
            elif isinstance(stmt, (cst.Try, cst.TryStar)):
                self.collect(stmt.body.body)
                for handler in stmt.handlers:
                    if handler.name is not None:
                        self._bind(handler.name.name)
                    self.collect(handler.body.body)
                self._collect_else(stmt.orelse)
                if stmt.finalbody is not None:
                    self.collect(stmt.finalbody.body.body)
            elif isinstance(stmt, cst.Match):
                for case in stmt.cases:
                    self.collect(case.body.body)
            elif not isinstance(stmt, cst.BaseSmallStatement):
                stmt.visit(self)  # a statement this walk does not know: the generic way

    def _collect_else(self, orelse: Optional[cst.CSTNode]) -> None:
        if isinstance(orelse, cst.If):
            self.collect([orelse])
        elif orelse is not None:
            self.collect(orelse.body.body)  # type: ignore[attr-defined]
