"""RC203 dataloader-fork-after-cuda: a DataLoader with worker processes, started by fork (the
default start method on Linux before Python 3.14), after CUDA was initialised in the process.
A forked worker inherits the parent's CUDA state and whatever locks its other threads held at the
fork (CUDA's, NCCL's watchdog, the pin-memory thread, OpenMP's pool): the worker that touches
CUDA fails, and one that waits on an inherited lock hangs on the first batch.

"After CUDA initialised" is read in program order along the entry paths that reach the loader
(the functions nothing in the project calls, down through the calls the call graph resolves): a
`torch.cuda.*` call that creates a context, `.cuda()`, or a `.to(...)`/`device=` naming a CUDA
device, reached before the loader's call. Safe: `multiprocessing_context="spawn"`/"forkserver"
(or any context the code builds and rankcheck cannot read), a `set_start_method("spawn")` on
those entry paths or in their modules, or a worker count that is not known to be positive.
Knowledge: rules/readiness.toml."""

from __future__ import annotations

from typing import Dict, FrozenSet, Iterator, List, Optional, Set, Tuple

from rankcheck.checks.readiness import (
    MAX_DEPTH,
    UNKNOWN,
    CallGraph,
    Knowledge,
    Values,
    argument,
    argument_text,
    call_text,
    callee_name,
    handler_calls,
    known,
    load_knowledge,
    location,
    place,
)
from rankcheck.driver.analysis import Analysis
from rankcheck.ftypes import Finding
from rankcheck.program.ir import ASSIGN, FOR, MODULE_FUNCTION, CallSite, Expr, FunctionSummary, statements, walk_tuples
from rankcheck.program.link import Program
from rankcheck.rules_meta import get_rule

CODE = "RC203"

Cuda = Tuple[str, str]  # (what initialised CUDA, path:line)


class _Walk:
    def __init__(self, program: Program, knowledge: Knowledge) -> None:
        self.program = program
        self.knowledge = knowledge
        self.graph = CallGraph(program)
        self.values = Values(program, knowledge, self.graph)
        self._initialises: Dict[str, Optional[Cuda]] = {}
        self._handlers: Dict[str, FrozenSet[int]] = {}

    def names_cuda(self, fn: FunctionSummary, expr: Optional[Expr], text: str) -> bool:
        prefix = self.knowledge.device_prefix
        if text.lstrip("fFrR").strip("\"'").startswith(prefix):
            return True  # f"cuda:{local_rank}"
        return any(isinstance(v, str) and v.startswith(prefix) for v in self.values.of(fn, expr) if v is not UNKNOWN)

    def cuda_at(self, fn: FunctionSummary, site: CallSite) -> Optional[Cuda]:
        """What initialises CUDA at this call site itself, if anything. A fallback in an `except`
        handler (`torch.cuda.get_device_capability()` when nvidia-smi fails) is not the path a
        run takes."""
        knowledge = self.knowledge
        handlers = self._handlers.get(fn.qualname)
        if handlers is None:
            handlers = self._handlers[fn.qualname] = handler_calls(fn)
        if site.index in handlers:
            return None
        name = callee_name(self.program, fn, site)
        method = site.text.rsplit(".", 1)[-1] if site.callee[0] != "qual" and "." in site.text else ""
        hit = (name is not None and knowledge.initialises_cuda(name)) or method in knowledge.cuda_methods
        if not hit and method in knowledge.device_methods and site.args:
            hit = self.names_cuda(fn, site.args[0], site.arg_texts[0])
        if not hit:
            texts = dict(site.kwarg_texts)
            hit = any(k in knowledge.device_keywords and self.names_cuda(fn, v, texts.get(k, "")) for k, v in site.kwargs)
        return (call_text(site), place(self.program, fn, site)) if hit else None

    def initialises(self, qual: str, depth: int = 0, active: Optional[Set[str]] = None) -> Optional[Cuda]:
        """The first CUDA initialisation a call of `qual` runs, anywhere below it."""
        if qual in self._initialises:
            return self._initialises[qual]
        active = active if active is not None else set()
        fn = self.program.functions.get(qual)
        if fn is None or qual in active or depth > MAX_DEPTH:
            return None
        active.add(qual)
        found: Optional[Cuda] = None
        for site in fn.calls:
            found = self.cuda_at(fn, site)
            callee = self.graph.site_callee(fn, site) if found is None else None
            if callee is not None:
                found = self.initialises(callee.qualname, depth + 1, active)
            if found is not None:
                break
        active.discard(qual)
        self._initialises[qual] = found
        return found

    def cuda_before(self, entry: str, loader: FunctionSummary, index: int) -> Optional[Cuda]:
        """Walking `entry` in program order into the project functions it calls: the CUDA
        initialisation met before the loader's call site, if the walk reaches it after one."""
        seen: Set[str] = set()

        def walk(qual: str, depth: int, cuda: Optional[Cuda]) -> Tuple[bool, Optional[Cuda]]:
            fn = self.program.functions.get(qual)
            seen.add(qual)
            if fn is None:
                return False, cuda
            for site in fn.calls:
                if fn is loader and site.index == index:
                    return True, cuda
                if cuda is None:
                    cuda = self.cuda_at(fn, site)
                callee = self.graph.site_callee(fn, site)
                if callee is None:
                    continue
                if callee.qualname in seen or depth >= MAX_DEPTH:
                    cuda = cuda or self.initialises(callee.qualname)
                    continue
                reached, cuda = walk(callee.qualname, depth + 1, cuda)
                if reached:
                    return True, cuda
            return False, cuda

        reached, cuda = walk(entry, 0, None)
        return cuda if reached else None

    def cuda_before_iteration(self, fn: FunctionSummary, site: CallSite) -> Optional[Tuple[Cuda, int]]:
        """Workers fork when a loop iterates the loader (each epoch, unless they persist): for a
        loader assigned to a name and iterated by a `for` later in the same function, the CUDA
        initialisation between the two, and the loop's line."""
        names = {
            target[1]
            for stmt in statements(fn.body)
            if stmt[0] == ASSIGN.tag and ASSIGN.get(stmt, "value") == ("call", site.index)
            for target in ASSIGN.get(stmt, "targets")
            if target[0] == "name"
        }
        loops = sorted(
            FOR.get(stmt, "info").span.line
            for stmt in statements(fn.body)
            if stmt[0] == FOR.tag and names & _names_read(fn, FOR.get(stmt, "iterable"))
        )
        loop_line = next((line for line in loops if line > site.span.end_line), None)
        if loop_line is None:
            return None
        for between in fn.calls:
            if not site.span.end_line < between.span.line < loop_line:
                continue
            cuda = self.cuda_at(fn, between)
            callee = self.graph.site_callee(fn, between) if cuda is None else None
            if callee is not None:
                cuda = self.initialises(callee.qualname)
            if cuda is not None:
                return cuda, loop_line
        return None

    def start_method_set(self, entries: List[str]) -> bool:
        """A safe start method set on the entry paths, or in the module code of their functions."""
        reached = self.graph.reached(entries)
        modules = {self.program.functions[q].module for q in reached if q in self.program.functions}
        scopes = reached | {f"{m}.{MODULE_FUNCTION}" for m in modules}
        safe = self.knowledge.safe_start_methods
        for qual in scopes:
            fn = self.program.functions.get(qual)
            if fn is None:
                continue
            for site in fn.calls:
                if callee_name(self.program, fn, site) in self.knowledge.start_method_calls and site.args:
                    if set(known(self.values.of(fn, site.args[0]))) & safe:
                        return True
        return False

    def context_is_safe(self, fn: FunctionSummary, context: Optional[Expr]) -> bool:
        if context is None or context == ("const", None):
            return False
        values = self.values.of(fn, context)
        return UNKNOWN in values or bool(set(known(values)) & self.knowledge.safe_start_methods)


def _names_read(fn: FunctionSummary, expr: Expr) -> Set[str]:
    """The names an expression reads, through the arguments of the calls in it
    (`enumerate(loader)`, `tqdm(loader)`)."""
    names: Set[str] = set()
    stack = [expr]
    while stack:
        for node in walk_tuples(stack.pop()):
            if node[0] == "name":
                names.add(node[1])
            elif node[0] == "call":
                site = fn.calls[node[1]]
                stack.extend((*site.args, *(value for _, value in site.kwargs)))
    return names


def _positive(values: Set[object]) -> List[int]:
    return [v for v in known(values) if isinstance(v, int) and not isinstance(v, bool) and v > 0]


def check(analysis: Analysis) -> Iterator[Finding]:
    rule = get_rule(CODE)
    knowledge = load_knowledge()
    program = analysis.program
    walk: Optional[_Walk] = None
    for fn in program.functions.values():
        for site in fn.calls:
            loader = knowledge.loaders.get(callee_name(program, fn, site) or "")
            if loader is None or site.has_star:
                continue
            walk = walk or _Walk(program, knowledge)
            workers = _positive(walk.values.of(fn, argument(site, loader.workers)))
            if not workers or walk.context_is_safe(fn, argument(site, loader.context)):
                continue
            entries = walk.graph.entries(fn.qualname)
            if walk.start_method_set(entries):
                continue
            cuda = next((c for c in (walk.cuda_before(e, fn, site.index) for e in entries) if c is not None), None)
            iterated = walk.cuda_before_iteration(fn, site) if cuda is None else None
            if cuda is None and iterated is None:
                continue
            text = argument_text(site, loader.workers)
            fields = {
                "call": call_text(site),
                "workers": f"{text} worker processes" if text.isdigit() else f"worker processes (`num_workers={text}`, up to {max(workers)})",
            }
            if cuda is not None:
                message = rule.render("fork", cuda=cuda[0], cuda_at=cuda[1], **fields)
            else:
                assert iterated is not None
                (what, where), loop_line = iterated
                message = rule.render("iterated", cuda=what, cuda_at=where, loop_line=loop_line, **fields)
            yield Finding(
                code=CODE,
                message=message,
                location=location(program, fn, site),
                severity=rule.severity,
            )
