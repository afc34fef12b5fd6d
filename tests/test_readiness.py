"""The readiness rules (RC201-RC203) as users meet them: the CLI on a small project, the
knowledge file's errors, and the torch behaviour RC202 rests on, on a real gloo process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from rankcheck.api import run_check
from rankcheck.catalog import CatalogError
from rankcheck.checks.readiness import load_knowledge

PROJECT = {
    "train.py": """\
        import argparse
        from datetime import timedelta

        import torch
        import torch.distributed as dist
        from torch.utils.data import DataLoader

        from helpers import make_side_group


        def main():
            parser = argparse.ArgumentParser()
            parser.add_argument("--workers", type=int, default=6)
            args = parser.parse_args()
            dist.init_process_group("nccl")
            side = make_side_group()
            dist.monitored_barrier(group=side, timeout=timedelta(seconds=30))
            model = torch.nn.Linear(2, 2).cuda()
            loader = DataLoader(list(range(8)), num_workers=args.workers)
            return model, loader


        main()
        """,
    "helpers.py": """\
        import torch.distributed as dist


        def make_side_group():
            return dist.new_group(ranks=[0, 1])
        """,
    "broken.py": "def (:\n",
}


def _write(root: Path, files: dict) -> None:
    for name, text in files.items():
        (root / name).write_text(textwrap.dedent(text), encoding="utf-8")


def _cli(args, cwd: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parent.parent))
    return subprocess.run([sys.executable, "-m", "rankcheck", *args], cwd=cwd, capture_output=True, text=True, env=env, timeout=120)


@pytest.mark.slow
def test_cli_reports_each_readiness_gap_as_a_warning_and_still_reports_a_broken_file(tmp_path: Path) -> None:
    _write(tmp_path, PROJECT)
    done = _cli(["check", "--no-cache", "--format", "json", "--select", "RC2,RC001", "."], tmp_path)
    assert done.returncode == 1, done.stderr
    findings = json.loads(done.stdout)["findings"]
    got = sorted((f["code"], Path(f["location"]["path"]).name if "location" in f else f["path"], f.get("severity")) for f in findings)
    lines = {(f["code"], f["location"]["line"] if "location" in f else f["line"]) for f in findings}
    assert ("RC001", "broken.py", "error") in got
    for code in ("RC201", "RC202", "RC203"):
        assert any(c == code and severity == "warning" for c, _, severity in got), (code, got)
    # the default group (line 15) and the side group (helpers.py:5) each lack a timeout
    assert {("RC201", 15), ("RC201", 5), ("RC202", 17), ("RC203", 19)} <= lines, lines
    barrier = next(f for f in findings if f["code"] == "RC202")
    assert "'nccl'" in barrier["message"] and "helpers.py:5, which inherits it from" in barrier["message"] and "train.py:15" in barrier["message"]
    loader = next(f for f in findings if f["code"] == "RC203")
    assert "(`num_workers=args.workers`, up to 6)" in loader["message"] and "model = torch.nn.Linear" not in loader["message"]


@pytest.mark.slow
def test_rule_pages_print_from_the_cli(tmp_path: Path) -> None:
    for code, name in (("RC201", "process-group-without-timeout"), ("RC202", "monitored-barrier-without-gloo"), ("RC203", "dataloader-fork-after-cuda")):
        done = _cli(["rule", code], tmp_path)
        assert done.returncode == 0 and name in done.stdout and "## Use instead" in done.stdout, done.stdout[:200]


def test_readiness_findings_are_warnings_on_by_default(tmp_path: Path) -> None:
    _write(tmp_path, {k: v for k, v in PROJECT.items() if k != "broken.py"})
    findings = run_check([tmp_path], root=tmp_path).findings
    readiness = [f for f in findings if f.code.startswith("RC2")]
    assert {f.code for f in readiness} == {"RC201", "RC202", "RC203"}
    assert all(f.severity == "warning" for f in readiness)


def test_a_malformed_readiness_entry_names_its_file_and_key(tmp_path: Path) -> None:
    (tmp_path / "readiness.toml").write_text('[readiness.group_creator."x.init"]\ntimeout = "timeout"\n', encoding="utf-8")
    with pytest.raises(CatalogError) as raised:
        load_knowledge(str(tmp_path))
    assert "readiness.toml" in str(raised.value) and "readiness.group_creator.x.init" in str(raised.value)


def test_the_shipped_knowledge_covers_what_the_pages_promise() -> None:
    knowledge = load_knowledge()
    for name in ("torch.distributed.init_process_group", "torch.distributed.new_group", "deepspeed.init_distributed",
                 "accelerate.utils.InitProcessGroupKwargs", "lightning.pytorch.strategies.DDPStrategy"):
        assert name in knowledge.group_creators, name
    assert knowledge.initialises_cuda("torch.cuda.set_device")
    assert not knowledge.initialises_cuda("torch.cuda.is_available")
    assert not knowledge.initialises_cuda("torch.cuda.amp.GradScaler")


RC202_PROBE = """\
import sys
import torch.distributed as dist

dist.init_process_group(backend=None if sys.argv[1] == "none" else sys.argv[1], init_method="file://" + sys.argv[2], rank=0, world_size=1)
try:
    dist.monitored_barrier()
    print("ok")
except ValueError as exc:
    print("raises:", exc)
dist.destroy_process_group()
"""


@pytest.mark.slow
@pytest.mark.verify
def test_monitored_barrier_needs_plain_gloo_on_real_torch(tmp_path: Path) -> None:
    """What RC202 rests on, on the installed torch: only backend "gloo" runs the barrier; a mixed
    "cpu:gloo" and a group created without a backend raise."""
    pytest.importorskip("torch")
    script = tmp_path / "probe.py"
    script.write_text(RC202_PROBE, encoding="utf-8")
    outcomes = {}
    for backend in ("gloo", "cpu:gloo", "none"):
        store = tmp_path / f"store-{backend.replace(':', '-')}"
        done = subprocess.run([sys.executable, "-W", "ignore", str(script), backend, str(store)], capture_output=True, text=True, timeout=120)
        outcomes[backend] = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else done.stderr[-300:]
    assert outcomes["gloo"] == "ok", outcomes
    assert outcomes["cpu:gloo"].startswith("raises:") and outcomes["none"].startswith("raises:"), outcomes


def test_a_file_that_only_creates_the_group_is_parsed_in_a_large_project(tmp_path: Path) -> None:
    """The text pre-filter parses a file for the names the readiness rules read
    (`init_process_group`, `torch.cuda.set_device`) even when the rest of the project names
    nothing distributed, so most of it is left unparsed."""
    (tmp_path / "setup_dist.py").write_text("import torch.distributed as dist\n\n\ndef setup():\n    dist.init_process_group('nccl')\n", encoding="utf-8")
    (tmp_path / "gpu.py").write_text("import torch\n\n\ndef pick(rank):\n    torch.cuda.set_device(rank)\n", encoding="utf-8")
    (tmp_path / "main.py").write_text(textwrap.dedent("""\
        from torch.utils.data import DataLoader

        from gpu import pick


        def main(ds):
            pick(0)
            return DataLoader(ds, num_workers=4)


        main([])
        """), encoding="utf-8")
    for n in range(40):
        body = "".join(f"def f{k}(x):\n    return x + {k}\n\n\n" for k in range(60))
        (tmp_path / f"plain{n}.py").write_text(body, encoding="utf-8")
    result = run_check([tmp_path], root=tmp_path)
    found = {(Path(f.location.path).name, f.location.line, f.code) for f in result.findings}
    assert found == {("setup_dist.py", 5, "RC201"), ("main.py", 8, "RC203")}, found


RC201_PROBE = """\
import datetime
import sys

import torch
import torch.distributed as dist

dist.init_process_group("gloo", init_method="file://" + sys.argv[1], rank=0, world_size=1, timeout=datetime.timedelta(seconds=77))
side = dist.new_group(ranks=[0])
for group in (dist.group.WORLD, side):
    print(int(group._get_backend(torch.device("cpu")).options._timeout.total_seconds()))
dist.destroy_process_group()
"""


@pytest.mark.slow
@pytest.mark.verify
def test_new_group_does_not_inherit_the_default_groups_timeout_on_real_torch(tmp_path: Path) -> None:
    """What RC201's page says of `new_group`, on the installed torch: the default group's 77 s
    timeout does not carry over; the side group gets gloo's 30-minute default."""
    pytest.importorskip("torch")
    script = tmp_path / "probe.py"
    script.write_text(RC201_PROBE, encoding="utf-8")
    done = subprocess.run([sys.executable, "-W", "ignore", str(script), str(tmp_path / "store")], capture_output=True, text=True, timeout=120)
    assert done.stdout.split() == ["77", "1800"], done.stdout + done.stderr[-500:]
