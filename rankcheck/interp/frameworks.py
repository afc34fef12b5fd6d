"""The framework model: what the catalog says of framework types (DDP, FSDP, accelerate,
Lightning, DeepSpeed, ...), applied to the values and functions of the program.

Nothing here names a framework: the knowledge is in rules/*.toml (`rankcheck.catalog`).
"""

from __future__ import annotations

import fnmatch
from dataclasses import replace
from typing import TYPE_CHECKING, Dict, FrozenSet, Optional, Tuple

from rankcheck.ftypes import Location
from rankcheck.interp.base import InterpreterBase
from rankcheck.interp.frame import Frame
from rankcheck.interp.values import Taint, TaintKind, Val, rank_value
from rankcheck.program.ir import Expr, FunctionSummary
from rankcheck.program.link import Target

if TYPE_CHECKING:
    from rankcheck.catalog import ImplicitSpec, TypeSpec
    from rankcheck.program.link import Program


class Frameworks(InterpreterBase):
    def __init__(self, program: Program) -> None:
        super().__init__(program)
        # Function -> (its summary, why it runs on rank 0 alone or None): `rank_zero_only`.
        self._rank_zero: Dict[str, Tuple[FunctionSummary, Optional[str]]] = {}
        # Function -> (its summary, {parameter: rank kind} its own calls reveal): `revealed_ranks`.
        self._revealed: Dict[str, Tuple[FunctionSummary, Dict[str, str]]] = {}

    # ------------------------------------------------------------ the conventions of real code
    def names_another_rank(self, *names: str) -> bool:
        """Whether any word of these names says the rank is not a process's (a LoRA rank)."""
        words = self.catalog.not_rank_words
        if not words:
            return False
        for name in names:
            for part in name.lower().replace(".", "_").split("_"):
                if part in words:
                    return True
        return False

    def rank_by_convention(self, fn: FunctionSummary, param: str, path: str) -> Optional[Val]:
        """What a parameter that no caller binds holds when its name, or how its function uses
        it, says it is the rank (`def main(local_rank, args)`, `def worker(gpu, args):
        ... init_process_group(rank=gpu)`), or a test of it (`is_main`); else None."""
        catalog = self.catalog
        kind = catalog.rank_names.get(param)
        pred = catalog.predicate_names.get(param)
        how = "named as the rank is named"
        if kind is None and pred is None:
            kind = self.revealed_ranks(fn).get(param)
            how = "passed where the rank goes"
        if (kind is None and pred is None) or self.names_another_rank(fn.qualname):
            return None
        where = Location(path, fn.span.line, fn.span.column, fn.span.end_line, fn.span.end_column)
        return rank_value(f"parameter `{param}` of `{fn.name}` ({how}; no caller in the project passes it)", where, kind, pred)

    def data_by_convention(self, fn: FunctionSummary, param: str, path: str) -> Optional[Val]:
        """What a parameter that no caller binds holds when its name says it is this rank's data
        (`batch`: per-rank data; `train_loader`: a DataLoader, whose items are); else None."""
        held = self.catalog.data_names.get(param)
        if held is None and "_" in param:
            held = self.catalog.data_name_suffixes.get("_" + param.rsplit("_", 1)[1])
        where = Location(path, fn.span.line, fn.span.column, fn.span.end_line, fn.span.end_column)
        if held is None and param in self.catalog.optional_inputs and (param, None) in fn.flag_defaults and _takes_a_batch(fn):
            # `def forward(self, input_ids, pixel_values=None)`: None on the ranks whose batch
            # has no images. Where every input is optional (open_clip's `forward(self,
            # image=None, text=None)`, an encoder API), what is passed is the call site's choice,
            # written in its code, alike on every rank.
            return Val(taints=frozenset([Taint(TaintKind.DATA, f"parameter `{param}` of `{fn.name}` (an input this rank's batch may lack)", where, presence=True)]))
        if held is None:
            return None
        if held:
            return Val(type=held)
        return Val(taints=frozenset([Taint(TaintKind.DATA, f"parameter `{param}` of `{fn.name}` (this rank's data; no caller in the project passes it)", where)]))

    def declared_type(self, fn: FunctionSummary, param: str) -> Optional[str]:
        """The type a parameter's annotation declares, when it is a project class or a type the
        catalog knows (`model: DDP`, `trainer: "pl.Trainer"`); else None."""
        for name, dotted in fn.param_types:
            if name != param:
                continue
            target = self.program.resolve(dotted)
            if target.kind == "class" or self.catalog.type_spec(target.qualname) is not None:
                return target.qualname
        return None

    def iterated_by_name(self, expr: Expr, value: Val) -> Val:
        """What a loop iterates when nothing says what it is but its name: a variable or
        attribute named as a loader is (`loader, sampler = build_loader(args)` from a helper
        rankcheck cannot read; `for batch in self.train_loader:`), as a parameter so named is."""
        if value.type is not None or value.taints or value.shape or expr[0] not in ("name", "attr"):
            return value
        held = self.catalog.data_names.get(expr[1] if expr[0] == "name" else expr[2])
        return replace(value, type=held) if held else value

    def revealed_ranks(self, fn: FunctionSummary) -> Dict[str, str]:
        """The parameters this function's own calls pass where the rank goes (catalog
        `rank_revealing`: `init_process_group(rank=r)`, `set_device(d)`, `device_ids=[d]`)."""
        known = self._revealed.get(fn.qualname)
        if known is not None and known[0] is fn:
            return known[1]
        found: Dict[str, str] = {}
        params = set(fn.params)
        reveals = self.catalog.rank_revealing
        if reveals:
            for site in fn.calls:
                if site.callee[0] != "qual":
                    continue
                spec = reveals.get(self.program.resolve(site.callee[1]).qualname)
                if spec is None:
                    continue
                arg = None
                if spec.keyword is not None:
                    arg = dict(site.kwargs).get(spec.keyword)
                if arg is None and spec.position is not None and spec.position < len(site.args):
                    arg = site.args[spec.position]
                if arg is not None and spec.in_list and arg[0] == "tuple" and len(arg[1]) == 1:
                    arg = arg[1][0]
                if arg is not None and arg[0] == "name" and arg[1] in params:
                    found.setdefault(arg[1], spec.kind)
        self._revealed[fn.qualname] = (fn, found)
        return found

    def external_spec(self, type_name: Optional[str]) -> Optional[TypeSpec]:
        """The catalog spec of a type, or of the first framework base of a project class."""
        if type_name is None:
            return None
        if type_name not in self.program.classes:
            return self.catalog.type_spec(type_name)
        for cls in self.program.class_chain(type_name):
            for base in cls.bases:
                target = self.program.resolve(base)
                if target.kind == "external":
                    spec = self.catalog.type_spec(target.qualname)
                    if spec is not None:
                        return spec
        return None

    def _catalogued_method(self, type_name: str, name: str) -> Optional[Target]:
        """A method the catalog describes of a project class that is itself a catalogued type
        (`accelerate.accelerator.Accelerator` when the tree is accelerate's): None otherwise."""
        return _method_target(self.catalog.type_spec(type_name), name)

    def _implicit_method(self, type_name: str, name: str) -> Optional[Target]:
        return _method_target(self.external_spec(type_name), name)

    def _callable_value(self, value: Val) -> Optional[Target]:
        if value.ref is not None:
            return self.program.resolve(value.ref)
        if value.refs:
            # One of several functions (a callback each caller passes its own): each may run.
            targets = [self.program.resolve(ref) for ref in value.refs]
            functions = {t.function.qualname: t.function for t in targets if t.kind == "function" and t.function is not None}
            if len(functions) == len(targets):
                return Target("dispatch", value.refs[0], detail=tuple(functions[q] for q in sorted(functions)))
        wrapper = self._communicating_wrapper(value)
        if wrapper is not None and wrapper != value.type:
            # `self._model` a project module on one path and a DDP around it on another (stored by
            # two methods, `_create_model` and `_create_optimizer`): in a job with other processes
            # the wrapper was built, and calling it communicates.
            inner = value.wraps or next((t for t in value.types if t in self.program.classes), None)
            return self._callable_value(replace(value, type=wrapper, types=(), wraps=inner))
        if value.type is not None and value.type in self.program.classes:
            # `self.reward_fn(samples)` holding an instance of a project class: its `__call__`
            call = self.program.find_method(value.type, "__call__")
            if call is not None:
                return Target("function", call.qualname, function=call)
            forward = self._module_forward(value.type)
            if forward is not None:
                # The object's constant constructor keywords go with it (Calls._project_call).
                return Target("function", forward.qualname, function=forward, detail=value if value.built_with else None)
        spec = self.external_spec(value.type)
        if spec is not None and spec.call is not None:
            # `DDP(Net())(batch)`: the wrapper's own collective, and the wrapped module's forward.
            forward = self._module_forward(value.wraps) if value.wraps is not None else None
            return without_collective(value, Target("implicit", spec.qualname, function=forward, detail=("call", spec.call)))
        if value.type in self.catalog.shape_losses:
            return Target("external", value.type, detail=value)  # `self.loss(logits, labels)`: a loss module
        return None

    def _communicating_wrapper(self, value: Val) -> Optional[str]:
        """Of the types a value may have (Val.types), the catalogued wrapper whose call
        communicates (DDP, FSDP, a DeepSpeed engine), if any."""
        for qualname in value.types:
            spec = self.external_spec(qualname)
            if spec is not None and spec.call is not None:
                return qualname
        return None

    def _module_forward(self, class_qualname: str) -> Optional[FunctionSummary]:
        """The `forward` that calling an instance of a project nn.Module subclass runs (a subclass
        of a catalogued loss module is one too: `class ZLoss(nn.CrossEntropyLoss)`)."""
        bases = self.catalog.module_bases | self.catalog.shape_losses
        if not bases:
            return None
        for cls in self.program.class_chain(class_qualname):
            if any(self.program.resolve(base).qualname in bases for base in cls.bases):
                return self.program.find_method(class_qualname, "forward")
        return None

    def _grad_spec(self, value: Val) -> Optional[Target]:
        """`loss.backward()` where loss was computed by a wrapped model: its gradient collective."""
        for taint in sorted(value.taints, key=lambda t: (t.location.line, t.location.column)):
            if taint.kind is not TaintKind.GRAD:
                continue
            spec = self.catalog.type_spec(taint.text)
            if spec is not None and spec.grad is not None:
                return Target("implicit", f"{spec.qualname} backward", detail=("grad", spec.grad))
        return None

    def _synced_by_caller(self, fn: FunctionSummary) -> Optional[Target]:
        """`.backward()` in a training step that switches a wrapper's gradient sync off on some
        steps (`sync_ctx = nullcontext() if boundary else model.no_sync()`): only a wrapper with
        a gradient collective has that method (catalog `quiet`), so the model is one, whatever
        handle the loss was computed through, and the backward of the other steps syncs."""
        for site in fn.calls:
            if site.callee[0] != "attr" or site.args or site.kwargs:
                continue
            for spec in self.catalog.types.values():
                if spec.grad is not None and site.callee[2] in spec.quiet:
                    return Target("implicit", f"{spec.qualname} backward", detail=("grad", spec.grad))
        return None

    def rank_zero_only(self, fn: FunctionSummary) -> Optional[str]:
        """Why `fn` runs on rank 0 alone (`@rank_zero_only`, or a framework hook it calls on one
        rank, as Lightning calls `prepare_data`), or None. Decided once per function summary."""
        known = self._rank_zero.get(fn.qualname)
        if known is not None and known[0] is fn:
            return known[1]
        reason: Optional[str] = None
        names = self.catalog.rank_zero_only
        for decorator in fn.decorators:
            if names and decorator.rsplit(".", 1)[-1] in names:
                reason = f"@{decorator.rsplit('.', 1)[-1]}"
                break
        else:
            spec = self.external_spec(fn.class_qualname) if fn.class_qualname else None
            if spec is not None and fn.name in spec.rank_zero_methods:
                reason = f"{spec.framework} calls {fn.name} on one rank"
        self._rank_zero[fn.qualname] = (fn, reason)
        return reason

    def _wrapped_override(self, fn: FunctionSummary) -> Optional[ImplicitSpec]:
        if not fn.class_qualname:
            return None
        spec = self.external_spec(fn.class_qualname)
        if spec is None or fn.name not in spec.wraps or fn.name not in spec.methods:
            return None
        implicit = spec.methods[fn.name]
        return implicit if implicit.op else None

    def _hook_types(self, fn: FunctionSummary) -> Tuple[str, ...]:
        if not fn.class_qualname:
            return ()
        spec = self.external_spec(fn.class_qualname)
        if spec is None:
            return ()
        for pattern, types in spec.hooks:
            if fnmatch.fnmatchcase(fn.name, pattern):
                return types
        return ()

    def _hook_batch_padding(self, fn: FunctionSummary) -> FrozenSet[str]:
        """The batch fields the framework's own collator pads per batch (TypeSpec.pads of the
        framework class a hook overrides): the width its hooks' batches have."""
        spec = self.external_spec(fn.class_qualname) if fn.class_qualname else None
        return spec.pads if spec is not None and spec.hooks else frozenset()

    def _returned_into(self, fn: FunctionSummary) -> Optional[ImplicitSpec]:
        """The collective the framework runs on what this hook of a project subclass returns
        (TypeSpec.returned: Lightning's backward on `training_step`'s loss), unless the class
        sets an attribute that switches it off (`self.automatic_optimization = False`)."""
        if not fn.class_qualname:
            return None
        spec = self.external_spec(fn.class_qualname)
        acted_on = spec.returned.get(fn.name) if spec is not None else None
        if acted_on is None or spec is None:
            return None
        for cls in self.program.class_chain(fn.class_qualname):
            self._input(("class", cls.qualname), cls)
            if any(attr in spec.returned_unless_set for attr, _ in cls.self_stores):
                return None
        return acted_on

    def _is_quiet_context(self, frame: Frame, expr: Expr) -> bool:
        """`with model.no_sync():` on a type whose catalog entry lists it as quiet."""
        if expr[0] != "call":
            return False
        callee = frame.fn.calls[expr[1]].callee
        if callee[0] != "attr":
            return False
        spec = self.external_spec(self.eval(frame, callee[1], []).type)
        return spec is not None and callee[2] in spec.quiet

    def _is_join_context(self, frame: Frame, expr: Expr) -> bool:
        """`with Join([model]):` / `with model.join():`: uneven inputs are handled inside."""
        if expr[0] != "call":
            return False
        callee = frame.fn.calls[expr[1]].callee
        if callee[0] == "qual":
            return self.program.resolve(callee[1]).qualname in self.catalog.uneven_ok_contexts
        if callee[0] == "attr":
            spec = self.external_spec(self.eval(frame, callee[1], []).type)
            return spec is not None and callee[2] in spec.uneven_ok
        return False


def without_collective(value: Val, target: Target) -> Target:
    """The catalogued call `target` on `value`, less its collective where the object was
    constructed with the keywords that turn it off (ImplicitSpec.unless_built:
    `MeanMetric(sync_on_compute=False).compute()`, a DDP built with `broadcast_buffers=False`
    called); what else it does (the type it returns, the gradient its output carries) stays."""
    detail = target.detail
    if not isinstance(detail, tuple) or len(detail) != 2:
        return target
    how, spec = detail
    off = getattr(spec, "unless_built", ())
    if not off or not all(flag in value.built_with for flag in off):
        return target
    return replace(target, detail=(how, replace(spec, op="", unless_built=())))


def _method_target(spec: Optional[TypeSpec], name: str) -> Optional[Target]:
    """The catalog's method `name` of a type, as a call target."""
    if spec is None or name not in spec.methods:
        return None
    return Target("implicit", f"{spec.qualname}.{name}", detail=("method", spec.methods[name]))


def _takes_a_batch(fn: FunctionSummary) -> bool:
    """The function has an input every call must pass (the batch an optional input comes with)."""
    return any(param in fn.required for param in fn.caller_params())
