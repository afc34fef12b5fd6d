"""Fixes: each kind proven three ways (the fixed text has no finding, it still parses and
compiles, it is idempotent), the exact rewrite with comments kept, and the look-alikes that get
no fix because nothing proves the rewrite safe. The CLI (`--fix`, `--diff`, `--unsafe-fixes`)
runs as a subprocess; replaying fixed programs on gloo ranks is in test_fix_verify.py."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import List, Tuple

import jsonschema
import pytest

from rankcheck.api import check_paths
from rankcheck.fix import attach_fixes
from rankcheck.fix.edits import apply_edits
from rankcheck.ftypes import Finding

REPO = Path(__file__).resolve().parent.parent
CORPUS = REPO / "corpus"


def checked(path: Path) -> List[Finding]:
    return attach_fixes(check_paths([path], root=path.parent, use_cache=False))


def fix_once(path: Path, unsafe: bool = True) -> Tuple[str, List[Finding]]:
    """The file's text with every applicable fix applied, and the findings it had."""
    findings = checked(path)
    text = path.read_text(encoding="utf-8")
    edits = [e for f in findings if f.fix is not None and (unsafe or f.fix.applicability == "safe") for e in f.fix.edits]
    fixed, _ = apply_edits(text, edits)
    return fixed, findings


def write(tmp_path: Path, source: str, name: str = "train.py") -> Path:
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    path = tmp_path / name
    path.write_text(textwrap.dedent(source), encoding="utf-8")
    return path


def assert_proven(path: Path, fixed: str, code: str, before: List[Finding]) -> None:
    """The fixed text compiles, has no finding of the fixed kind, and fixing it again is a no-op."""
    compile(fixed, str(path), "exec")
    path.write_text(fixed, encoding="utf-8")
    after = checked(path)
    assert [f for f in after if f.code == code] == [], [f.message for f in after]
    assert all(f.fix is None for f in after)
    assert len(after) < len(before)


SEED = """\
import torch.distributed as dist


def compute(t):
    dist.all_reduce(t)
    return t.mean()


def step(t, rank, log):
    # report the global mean once
    if rank == 0: metrics = compute(t); log.info(metrics)
    return rank
"""
SEED_LINE = "    if rank == 0: metrics = compute(t); log.info(metrics)\n"
SEED_FIXED = SEED.replace(SEED_LINE, "    metrics = compute(t)\n    if rank == 0: log.info(metrics)\n")


INDENTED = """\
import logging

import torch.distributed as dist

logger = logging.getLogger(__name__)


def train(loss, steps):
    rank = dist.get_rank()
    for step in range(steps):
        total = loss.detach()

        if rank == 0:
            # the epoch's mean, for the log
            dist.all_reduce(total)  # sums over ranks
            logger.info("step %d loss %s", step, total)
            print(total.item())
"""
INDENTED_GUARD = "        if rank == 0:\n            # the epoch's mean, for the log\n            dist.all_reduce(total)  # sums over ranks\n"
INDENTED_FIXED = INDENTED.replace(
    INDENTED_GUARD, "        # the epoch's mean, for the log\n        dist.all_reduce(total)  # sums over ranks\n        if rank == 0:\n"
)


@pytest.mark.parametrize(
    "source, expected",
    [(SEED, SEED_FIXED), (INDENTED, INDENTED_FIXED)],
    ids=["the seed, one-line form kept", "a direct collective, comments kept"],
)
def test_the_hoist_keeps_comments_and_layout(tmp_path: Path, source: str, expected: str) -> None:
    path = write(tmp_path, source)
    fixed, before = fix_once(path)
    assert [(f.code, f.fix.applicability if f.fix else None) for f in before] == [("RC101", "safe")]
    assert fixed == expected
    assert_proven(path, fixed, "RC101", before)


def test_a_call_inside_the_report_is_pulled_out_into_a_variable(tmp_path: Path) -> None:
    path = tmp_path / "reduces.py"
    shutil.copy(CORPUS / "runnable" / "rc101_rank0_helper_reduces.py", path)
    fixed, before = fix_once(path)
    assert "        global_mean_result = global_mean(loss)\n        if rank == 0:\n" in fixed
    assert 'print(f"step {step} loss {global_mean_result.item():.4f}")  # expect: RC101' in fixed
    assert_proven(path, fixed, "RC101", before)


@pytest.mark.parametrize(
    "case, removed, added",
    [
        (
            "rc101_fsdp_state_dict_rank0_checkpoint.py",
            '                torch.save(self.model.state_dict(), os.path.join(self.ckpt_dir, f"epoch{epoch}.pt"))  # expect: RC101',
            "            full_state_dict = self.model.state_dict()\n            if self.rank == 0:\n"
            '                torch.save(full_state_dict, os.path.join(self.ckpt_dir, f"epoch{epoch}.pt"))  # expect: RC101',
        ),
        (
            "rc101_accelerate_save_state_main_only.py",
            "            if completed_steps % checkpointing_steps == 0 and accelerator.is_main_process:\n",
            "            if completed_steps % checkpointing_steps == 0:\n"
            '                step_dir = os.path.join(output_dir, f"step_{completed_steps}")\n'
            "                accelerator.save_state(step_dir)  # expect: RC101\n"
            "                if accelerator.is_main_process:\n"
            '                    with open(os.path.join(step_dir, "summary.json"), "w") as f:\n',
        ),
        (
            "rc101_lightning_log_sync_dist_global_zero.py",
            'self.log("val_acc", epoch_acc, sync_dist=True)',
            'self.log("val_acc", epoch_acc, rank_zero_only=True)  # expect: RC101',
        ),
    ],
)
def test_framework_fixes(tmp_path: Path, case: str, removed: str, added: str) -> None:
    path = tmp_path / case
    shutil.copy(CORPUS / "frameworks" / case, path)
    fixed, before = fix_once(path)
    assert removed not in fixed and added in fixed
    assert_proven(path, fixed, "RC101", before)


FRAMEWORK_SHAPES = """\
import deepspeed
import torch.distributed as dist
import torch.distributed.checkpoint as dcp
from accelerate import Accelerator


def save(model, out):
    accelerator = Accelerator()
    model = accelerator.prepare(model)
    if accelerator.is_main_process:
        accelerator.save_state(out)
        print("saved", out)


def finish(model, out):
    accelerator = Accelerator()
    model = accelerator.prepare(model)
    if accelerator.is_main_process:
        accelerator.unwrap_model(model).save_pretrained(out)
        accelerator.wait_for_everyone()


def checkpoint(args, net, out):
    engine, _, _, _ = deepspeed.initialize(args=args, model=net, model_parameters=net.parameters())
    if engine.global_rank == 0:
        engine.save_checkpoint(out, tag="last")


def sharded(state, out):
    if dist.get_rank() == 0:
        dcp.save(state, checkpoint_id=out)
"""


def test_framework_calls_every_rank_makes_move_out_before_or_after(tmp_path: Path) -> None:
    path = write(tmp_path, FRAMEWORK_SHAPES)
    fixed, before = fix_once(path)
    fixes = {f.location.line: f.fix for f in before}
    assert all(fix is not None and fix.applicability == "safe" for fix in fixes.values()), {line: f.message for line, f in zip(fixes, before)}
    assert "    accelerator.save_state(out)\n    if accelerator.is_main_process:\n        print(\"saved\", out)\n" in fixed
    assert (
        "    if accelerator.is_main_process:\n        accelerator.unwrap_model(model).save_pretrained(out)\n"
        "    accelerator.wait_for_everyone()\n"
    ) in fixed
    assert '    engine.save_checkpoint(out, tag="last")\n\n\ndef sharded' in fixed
    assert len(before) == 4
    assert "    dcp.save(state, checkpoint_id=out)\n" in fixed
    assert_proven(path, fixed, "RC101", before)


EARLY_EXIT = """\
import torch.distributed as dist


def save_checkpoint(model, path):
    if dist.get_rank() != 0:
        return  # the others are done
    write_to(path, model)
    dist.barrier()
"""
EARLY_EXIT_FIXED = EARLY_EXIT.replace("    dist.barrier()\n", "").replace(
    "def save_checkpoint(model, path):\n", "def save_checkpoint(model, path):\n    dist.barrier()\n"
)


def test_rc102_fix_is_unsafe_and_moves_the_collective_above_the_exit(tmp_path: Path) -> None:
    path = write(tmp_path, EARLY_EXIT)
    safe_only, before = fix_once(path, unsafe=False)
    assert safe_only == EARLY_EXIT
    assert [(f.code, f.fix.applicability if f.fix else None) for f in before] == [("RC102", "unsafe")]
    fixed, _ = fix_once(path, unsafe=True)
    assert fixed == EARLY_EXIT_FIXED
    assert_proven(path, fixed, "RC102", before)


SPLIT = """\
import torch.distributed as dist


def step(t, i):
    rank = dist.get_rank()
    # every tenth step
    if i % 10 == 0 and rank == 0:
        dist.all_reduce(t)
        print(t)
    return i
"""
SPLIT_FIXED = SPLIT.replace(
    "    if i % 10 == 0 and rank == 0:\n        dist.all_reduce(t)\n        print(t)\n",
    "    if i % 10 == 0:\n        dist.all_reduce(t)\n        if rank == 0:\n            print(t)\n",
)


def test_a_guard_with_a_uniform_half_keeps_it_around_the_call(tmp_path: Path) -> None:
    """Which half is the rank test is what the analysis of the fixed text shows: the other
    reading (the call under `rank == 0` still) keeps the finding and is not offered."""
    path = write(tmp_path, SPLIT)
    fixed, before = fix_once(path)
    assert fixed == SPLIT_FIXED
    assert before[0].fix is not None and before[0].fix.message == "Call `dist.all_reduce()` on every rank when `i % 10 == 0`; keep the reporting under `if rank == 0:`"
    assert_proven(path, fixed, "RC101", before)


def test_the_split_is_proven_beside_other_findings_of_the_file(tmp_path: Path) -> None:
    source = SPLIT.replace("    rank = dist.get_rank()\n", "    rank = dist.get_rank()\n    dist.all_reduce(torch.zeros(rank + 1))\n")
    path = write(tmp_path, "import torch\n" + source)
    fixed, before = fix_once(path)
    assert sorted(f.code for f in before) == ["RC101", "RC104"]
    assert "    if i % 10 == 0:\n        dist.all_reduce(t)\n        if rank == 0:\n" in fixed
    assert_proven(path, fixed, "RC101", before)


# Look-alikes: the same findings, where no rewrite is provably the same program on rank 0.
NO_FIX = {
    "the value is used for more than a report": """\
        import torch.distributed as dist

        def step(t, rank, best):
            if rank == 0:
                dist.all_reduce(t)
                best = max(best, t.item())
            return best
        """,
    "the reduced tensor is read after the guard": """\
        import torch.distributed as dist

        def step(t, rank):
            if rank == 0:
                dist.all_reduce(t)
                print(t)
            return t * 2
        """,
    "the result is read after the guard": """\
        import torch.distributed as dist

        def mean(t):
            dist.all_reduce(t)
            return t

        def step(t, rank):
            m = None
            if rank == 0:
                m = mean(t.clone())
                print(m)
            return m
        """,
    "an argument with a side effect": """\
        import torch.distributed as dist

        def step(make, rank):
            if rank == 0:
                t = make()
                dist.all_reduce(t)
                print(t)
        """,
    "a call with an impure argument": """\
        import torch.distributed as dist

        def mean(t):
            dist.all_reduce(t)
            return t

        def step(batches, rank):
            if rank == 0:
                m = mean(next(batches))
                print(m)
        """,
    "the guard's other test is `or`": """\
        import torch.distributed as dist

        def step(t, rank, i):
            if i % 10 == 0 or rank == 0:
                dist.all_reduce(t)
                print(t)
        """,
    "the guard's other test has a side effect": """\
        import torch.distributed as dist

        def step(t, rank, ready):
            if ready(t) and rank == 0:
                dist.all_reduce(t)
                print(t)
        """,
    "an else arm": """\
        import torch.distributed as dist

        def step(t, rank):
            if rank == 0:
                dist.all_reduce(t)
                print(t)
            else:
                print("waiting")
        """,
    "a second collective under the guard": """\
        import torch.distributed as dist

        def step(t, u, rank):
            if rank == 0:
                dist.all_reduce(t)
                dist.all_reduce(u)
                print(t, u)
        """,
    "nothing reports the value (a helper with effects of its own)": """\
        import torch.distributed as dist

        def report(t):
            dist.all_reduce(t)
            open("log.txt", "a").write(str(t))

        def step(t, rank):
            if rank == 0:
                report(t)
        """,
    "the call needs a value computed with an effect": """\
        import os
        from accelerate import Accelerator

        def save(model, out):
            accelerator = Accelerator()
            model = accelerator.prepare(model)
            if accelerator.is_main_process:
                path = os.makedirs(out, exist_ok=True)
                accelerator.save_state(path)
        """,
    "rc102: the collective needs what is computed between": """\
        import torch
        import torch.distributed as dist

        def save(model):
            if dist.get_rank() != 0:
                return
            t = torch.ones(1)
            dist.all_reduce(t)
        """,
    "rc102: the collective sits in a loop": """\
        import torch.distributed as dist

        def save(ts):
            if dist.get_rank() != 0:
                return
            for t in ts:
                dist.all_reduce(t)
        """,
}


@pytest.mark.parametrize("source", list(NO_FIX.values()), ids=list(NO_FIX))
def test_look_alikes_get_no_fix(tmp_path: Path, source: str) -> None:
    path = write(tmp_path, source)
    findings = checked(path)
    assert findings, "the look-alike must still be a finding"
    assert [f.fix for f in findings] == [None] * len(findings), [f.fix.message for f in findings if f.fix]


@pytest.mark.slow
def test_every_fix_offered_on_the_corpus_is_proven(tmp_path: Path) -> None:
    """Every fix the corpus's single-file cases get: applied, each file compiles, exactly the
    fixed findings are gone, and no fix is left to apply (idempotent). The count keeps the kinds
    from silently going quiet."""
    fixed_files = 0
    for group in ("runnable", "frameworks", "core"):
        work = tmp_path / group
        work.mkdir()
        (work / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
        for source in sorted((CORPUS / group).glob("rc1*.py")):
            shutil.copy(source, work / source.name)
        before = attach_fixes(check_paths([work], root=work, use_cache=False))
        fixed_count = {}
        for path in sorted({f.location.path for f in before if f.fix is not None}):
            text = Path(path).read_text(encoding="utf-8")
            fixed, applied = apply_edits(text, [e for f in before if f.location.path == path and f.fix for e in f.fix.edits])
            compile(fixed, path, "exec")
            Path(path).write_text(fixed, encoding="utf-8")
            fixed_count[path] = len(applied)
        after = attach_fixes(check_paths([work], root=work, use_cache=False))
        for path, count in fixed_count.items():
            was = [f for f in before if f.location.path == path]
            now = [f for f in after if f.location.path == path]
            assert len(now) == len(was) - count, (path, [f.message for f in now])
            assert all(f.fix is None for f in now), path
        fixed_files += len(fixed_count)
    assert fixed_files >= 10


# ---- the command line --------------------------------------------------------------------------
def run(args: List[str], cwd: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, RANKCHECK_CACHE_DIR=str(cwd / ".cache"))
    return subprocess.run([sys.executable, "-m", "rankcheck", *args], cwd=cwd, capture_output=True, text=True, timeout=120, env=env)


def sarif_schema() -> dict:
    return json.loads((REPO / "tests" / "sarif-schema-2.1.0.json").read_text())


@pytest.mark.slow
def test_cli_shows_applicability_in_every_format_and_fixes_as_ruff_does(tmp_path: Path) -> None:
    write(tmp_path, SEED, "seed.py")
    write(tmp_path, EARLY_EXIT, "exit.py")
    files = ["seed.py", "exit.py"]

    text = run(["--format", "concise", *files], tmp_path)
    assert text.returncode == 1
    lines = text.stdout.splitlines()
    assert lines[0].startswith("exit.py:6:9: RC102 ") and "[*]" not in lines[0]  # unsafe: not without --unsafe-fixes
    assert lines[1].startswith("seed.py:11:29: RC101 [*] ") and "`compute()`" in lines[1]
    assert "[*] 1 fixable with the `--fix` option (1 hidden fix can be enabled with the `--unsafe-fixes` option)" in text.stderr
    unsafe = run(["--format", "concise", "--unsafe-fixes", *files], tmp_path)
    assert unsafe.stdout.splitlines()[0].startswith("exit.py:6:9: RC102 [*] ")

    document = json.loads(run(["--format", "json", *files], tmp_path).stdout)
    fixes = {f["code"]: f["fix"] for f in document["findings"]}
    assert fixes["RC102"]["applicability"] == "unsafe" and fixes["RC101"]["applicability"] == "safe"
    edit = fixes["RC101"]["edits"][0]
    assert edit["location"] == {"row": 11, "column": 1} and edit["end_location"] == {"row": 12, "column": 1}
    assert edit["content"] == "    metrics = compute(t)\n    if rank == 0: log.info(metrics)\n"

    sarif = json.loads(run(["--format", "sarif", *files], tmp_path).stdout)
    jsonschema.validate(sarif, sarif_schema())
    results = {r["ruleId"]: r for r in sarif["runs"][0]["results"]}
    change = results["RC101"]["fixes"][0]["artifactChanges"][0]
    assert change["artifactLocation"]["uri"] == "seed.py"
    assert change["replacements"][0]["deletedRegion"] == {"startLine": 11, "startColumn": 1, "endLine": 12, "endColumn": 1}
    assert results["RC102"]["fixes"][0]["properties"]["applicability"] == "unsafe"

    diff = run(["--diff", *files], tmp_path)
    assert diff.returncode == 1
    assert diff.stdout.startswith("--- a/seed.py\n+++ b/seed.py\n")
    assert "-    if rank == 0: metrics = compute(t); log.info(metrics)\n+    metrics = compute(t)\n" in diff.stdout
    assert (tmp_path / "seed.py").read_text() == SEED  # --diff writes nothing

    fixed = run(["--fix", *files], tmp_path)
    assert fixed.returncode == 1  # the unsafe RC102 fix was not applied: a finding remains
    assert "found 2 findings (1 fixed, 1 remaining)" in fixed.stderr
    assert (tmp_path / "seed.py").read_text() == SEED_FIXED
    assert fixed.stdout.startswith("exit.py:6:9: RC102 ")

    everything = run(["--fix", "--unsafe-fixes", *files], tmp_path)
    assert everything.returncode == 0, everything.stdout  # every finding fixed: exit 0
    assert (tmp_path / "exit.py").read_text() == EARLY_EXIT_FIXED
    again = run(["--fix", "--unsafe-fixes", *files], tmp_path)
    assert again.returncode == 0 and "found 0 findings (0 fixed, 0 remaining)" in again.stderr
    assert run(["--diff", "--unsafe-fixes", *files], tmp_path).stdout == ""


@pytest.mark.slow
def test_cli_fix_keeps_going_past_a_file_that_does_not_parse(tmp_path: Path) -> None:
    write(tmp_path, SEED, "seed.py")
    (tmp_path / "broken.py").write_text("def broken(:\n")
    proc = run(["--fix", "seed.py", "broken.py"], tmp_path)
    assert proc.returncode == 1  # RC001 for the broken file remains
    assert "broken.py:1:" in proc.stdout and "RC001" in proc.stdout
    assert (tmp_path / "seed.py").read_text() == SEED_FIXED

