"""The parse-selection fixpoint: which files must be parsed in full for the analysis.

Files whose text names something the catalog knows are parsed; the others get a minimal summary
(module name and suppressions). Then, repeatedly: link what is parsed, take the names of project
code that turned out relevant (`prefilter.relevant_names`), and parse the skipped files that
mention one, until nothing new is chosen.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Dict, List

from rankcheck.catalog import Catalog
from rankcheck.driver import prefilter
from rankcheck.program.ir import ModuleSummary
from rankcheck.program.link import Program

if TYPE_CHECKING:
    from rankcheck.driver.summaries import FileStates


def demand_driven(run: FileStates, live: List[int], catalog: Catalog, dense_share: float) -> List[ModuleSummary]:
    """The summaries of every file, parsed where the choice ends up and minimal elsewhere."""
    state, stats = run.files, run.stats
    for i in live:
        f = state[i]
        if f.entry is not None and f.entry.scan is None and run.ensure_text(i) and f.entry is not None:
            f.entry.scan = prefilter.scan_text(f.text)  # type: ignore[arg-type]
            f.entry.dirty = True
    live = [i for i in live if state[i].entry is not None]
    scans: List[prefilter.Scan] = []
    for i in live:
        entry = state[i].entry
        assert entry is not None and entry.scan is not None  # every live entry was scanned above
        scans.append(entry.scan)
    modules = [(state[i].source.module, state[i].source.is_package) for i in live]
    seeds = prefilter.seeds_from_catalog(catalog)
    selector = prefilter.Selector(seeds, scans, modules)
    wanted = {live[k] for k in range(len(live)) if selector.is_seed_candidate(k)}
    sizes = [run.size(i) for i in live]
    if sum(sizes[k] for k in range(len(live)) if live[k] in wanted) >= dense_share * max(sum(sizes), 1):
        stats.dense = True
        wanted = set(live)
    skipped = [k for k in range(len(live)) if live[k] not in wanted]

    # Minimal summaries for the rest (and full ones for those that do not compile), then the
    # candidates, in one batch so one pool serves both.
    run.summarize([(i, "full") for i in sorted(wanted)] + [(live[k], "light") for k in skipped])
    local_cache: Dict[str, bool] = {}
    seed_words = {seed.name for seed in seeds} | set(selector.requirements)
    module_index = {state[i].source.module: k for k, i in enumerate(live)}  # one file a name (driver.identity)
    while skipped:
        program = Program(run.assemble(wanted), catalog)
        relevant = prefilter.relevant_functions(program, local_cache)
        new_tokens = selector.add_tokens(prefilter.relevant_names(program, relevant))
        more = {k for k in skipped if new_tokens and selector.mentions(k, new_tokens)}
        skipped_set = set(skipped)
        skipped_modules = {m for m, k in module_index.items() if k in skipped_set}
        for module in prefilter.modules_to_follow(
            program, skipped_modules, seed_words | {name for name, _ in selector.tokens}, relevant
        ):
            more.add(module_index[module])
        more &= skipped_set
        if not more:
            break
        stats.rounds += 1
        chosen = {live[k] for k in more}
        wanted |= chosen
        skipped = [k for k in skipped if live[k] not in chosen]
        run.summarize([(i, "full") for i in sorted(chosen)])
    run.runner.shutdown()  # before the summaries become objects: workers and those never coexist
    summaries = run.assemble(wanted)
    stats.full_used = sum(1 for i in live if run.uses_full(i, i in wanted))
    stats.minimal_used = len(live) - stats.full_used
    return summaries
