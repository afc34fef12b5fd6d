"""Source positions of libcst nodes, at a fraction of what `PositionProvider` costs.

libcst keeps no positions on its nodes: `PositionProvider` computes them by generating the module's
code again while it tracks line and column. It gives the same syntactic ranges as this module, but
it splits every token with a regular expression, builds two position objects per node and enters a
generator-based context manager for each one; on real training code that is about nine times the
cost of the code generation itself, and the largest single cost of summarising a module.

This state does the same walk with plain integers and tuples. The ranges are libcst's own
syntactic ones (the nodes themselves say where they start and end, including the bodies that
compound statements hoist their end from), so they are identical to `PositionProvider`'s; a test
compares the two on the corpus.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, Iterable, Optional, Tuple

import libcst as cst
from libcst._nodes.internal import CodegenState

# (start line, start column, end line, end column): lines 1-based, columns 0-based code points
Range = Tuple[int, int, int, int]


class _Recording:
    """The context manager a node enters around its own code; class-based, so no generator."""

    __slots__ = ("state", "node", "start_node", "end_node", "line", "column")

    def __init__(self, state: _PositionState, node: cst.CSTNode, start_node: Optional[cst.CSTNode], end_node: Optional[cst.CSTNode]) -> None:
        self.state = state
        self.node = node
        self.start_node = start_node
        self.end_node = end_node

    def __enter__(self) -> None:
        if self.start_node is not None:
            self.state.hoisted[id(self.start_node)] = None
        if self.end_node is not None:
            self.state.hoisted[id(self.end_node)] = None
        self.line = self.state.line
        self.column = self.state.column

    def __exit__(self, *exc: object) -> None:
        state = self.state
        ranges = state.ranges
        if self.start_node is not None:
            first = ranges[id(self.start_node)]
            start_line, start_column = first[0], first[1]
        else:
            start_line, start_column = self.line, self.column
        if self.end_node is not None:
            last = ranges[id(self.end_node)]
            end_line, end_column = last[2], last[3]
        else:
            end_line, end_column = state.line, state.column
        ranges[id(self.node)] = (start_line, start_column, end_line, end_column)


@dataclass
class _PositionState(CodegenState):
    line: int = 1
    column: int = 0
    ranges: Dict[int, Range] = field(default_factory=dict)

    # Nodes that a parent hoists its start or end from, but that have no syntactic position of their
    # own (a closing parenthesis): they get the range of their whole code, as in libcst.
    # Keyed by id(): CSTNode.__hash__ is a Python-level call, and the tree outlives the ranges' use.
    hoisted: Dict[int, Optional[Tuple[int, int]]] = field(default_factory=dict)

    def before_codegen(self, node: cst.CSTNode) -> None:
        if self.hoisted and id(node) in self.hoisted:
            self.hoisted[id(node)] = (self.line, self.column)

    def after_codegen(self, node: cst.CSTNode) -> None:
        if self.hoisted and id(node) in self.hoisted and id(node) not in self.ranges:
            start = self.hoisted[id(node)]
            assert start is not None
            self.ranges[id(node)] = (start[0], start[1], self.line, self.column)

    def add_indent_tokens(self) -> None:
        for token in self.indent_tokens:
            self.add_token(token)

    def add_token(self, value: str) -> None:
        self.tokens.append(value)
        newline = value.rfind("\n")
        if newline < 0 and "\r" not in value:
            self.column += len(value)
            return
        if "\r" in value:
            # "\r\n" counts once, a lone "\r" (old Mac files) counts as a line end of its own
            normalised = value.replace("\r\n", "\n").replace("\r", "\n")
            self.line += normalised.count("\n")
            self.column = len(normalised) - normalised.rfind("\n") - 1
            return
        self.line += value.count("\n")
        self.column = len(value) - newline - 1

    def record_syntactic_position(  # type: ignore[override]
        self,
        node: cst.CSTNode,
        *,
        start_node: Optional[cst.CSTNode] = None,
        end_node: Optional[cst.CSTNode] = None,
    ) -> _Recording:
        return _Recording(self, node, start_node, end_node)


def node_ranges(module: cst.Module) -> Dict[int, Range]:
    """The syntactic range of every node of `module` that has one (as `PositionProvider`), keyed
    by the node's id(): valid while `module` is alive."""
    state = _PositionState(default_indent=module.default_indent, default_newline=module.default_newline)
    module._codegen(state)
    return state.ranges


def locate_statements(module: cst.Module, statements: Iterable[cst.BaseStatement], line: int, ranges: Dict[int, Range]) -> None:
    """Add the ranges of the nodes of `statements`, consecutive top-level statements of `module`
    whose code (leading lines included) starts at `line`, to `ranges` (reparse.py: the statements
    an edit replaced, in a tree whose other ranges are known)."""
    state = _PositionState(default_indent=module.default_indent, default_newline=module.default_newline, line=line, ranges=ranges)
    for statement in statements:
        statement._codegen(state)
