"""`--format github`: workflow-command annotations, parsed back the way the Actions runner does."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from rankcheck.ftypes import ChainStep, Finding, Guard, Location, RankSource
from rankcheck.report import ReportContext, get_renderer

REPO = Path(__file__).resolve().parent.parent
COMMAND = re.compile(r"^::(?P<cmd>\w+) (?P<props>[^:]*)::(?P<message>.*)$")


def unescape(text: str) -> str:
    # The runner's order: every %XX but %25 first, %25 last, so an escaped "%0A" stays literal.
    for escaped, raw in (("%0D", "\r"), ("%0A", "\n"), ("%3A", ":"), ("%2C", ","), ("%25", "%")):
        text = text.replace(escaped, raw)
    return text


def parse(line: str) -> tuple[str, dict[str, str], str]:
    match = COMMAND.match(line)
    assert match, line
    props = {}
    for item in match.group("props").split(","):
        key, _, value = item.partition("=")
        props[key] = unescape(value)
    return match.group("cmd"), props, unescape(match.group("message"))


def render(findings) -> list[str]:
    text = get_renderer("github")(findings, ReportContext(format="github"))
    assert text.endswith("\n") or not findings
    return text.splitlines()


def rc101(path="src/train.py", message="compute_mean() runs only on ranks where rank == 0") -> Finding:
    call = Location(path, 9, 9, 9, 24)
    return Finding(
        code="RC101",
        message=message,
        location=call,
        guard=Guard(Location(path, 8, 5, 8, 18), "if rank == 0:", "rank == 0",
                    source=RankSource("dist.get_rank()", Location(path, 7, 12))),
        chain=(ChainStep(call, "compute_mean()"),
               ChainStep(Location("src/metrics.py", 5, 5), "dist.all_reduce")),
        collective="all_reduce",
    )


def test_error_annotation_has_position_title_and_evidence():
    (line,) = render([rc101()])
    cmd, props, message = parse(line)
    assert cmd == "error"
    assert props == {
        "file": "src/train.py", "line": "9", "col": "9", "endLine": "9", "endColumn": "24",
        "title": "RC101 (collective-under-rank-branch)",
    }
    first, *evidence = message.split("\n")
    assert first == "compute_mean() runs only on ranks where rank == 0"
    assert any("if rank == 0:" in e and "src/train.py:8" in e for e in evidence)
    assert any("src/metrics.py:5" in e and "dist.all_reduce" in e for e in evidence)


def test_special_characters_are_escaped_in_properties_and_message():
    finding = rc101(path="odd,dir/a:b%.py", message="100% of ranks: no\r\nexcept rank 0, ok")
    (line,) = render([finding])
    assert "\r" not in line and "\n" not in line
    props_part = line.split("::")[1]
    assert "odd%2Cdir/a%3Ab%25.py" in props_part
    _, props, message = parse(line)
    assert props["file"] == "odd,dir/a:b%.py"
    assert message.startswith("100% of ranks: no\r\nexcept rank 0, ok\n")
    # `:` and `,` are not escaped in the message (the runner would show them literally).
    assert "100%25 of ranks: no%0D%0Aexcept rank 0, ok" in line


def test_severity_selects_the_command_and_unknown_end_is_omitted():
    warning = Finding(code="RC003", message="unused suppression", location=Location("a.py", 3, 1),
                      severity="warning")
    error = Finding(code="RC001", message="cannot parse", location=Location("b.py", 1, 1))
    lines = render([warning, error])
    assert [parse(x)[0] for x in lines] == ["warning", "error"]
    _, props, _ = parse(lines[0])
    assert "endLine" not in props and "endColumn" not in props
    assert props["title"] == "RC003 (unused-suppression)"


def test_no_findings_no_output():
    assert render([]) == []


def test_cli_github_end_to_end(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    (tmp_path / "train.py").write_text(
        "import torch.distributed as dist\n\n\ndef step(t):\n"
        "    if dist.get_rank() == 0:\n        dist.all_reduce(t)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-m", "rankcheck", "--format", "github", "train.py"],
        cwd=tmp_path, env=dict(os.environ, PYTHONPATH=str(REPO)),
        capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 1, proc.stderr
    (line,) = proc.stdout.splitlines()
    cmd, props, message = parse(line)
    assert (cmd, props["file"], props["line"]) == ("error", "train.py", "6")
    assert props["title"] == "RC101 (collective-under-rank-branch)"
    assert "all_reduce" in message
