"""The language server over real stdio, and `--format lsp`.

The server runs as a subprocess (`python -m rankcheck lsp`) and a pytest-lsp client talks
JSON-RPC to it the way an editor does: open, change (unsaved), save, close, code actions,
shutdown/exit. Waits poll the published diagnostics until they match, with a generous timeout.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import pytest_asyncio
from lsprotocol import types
from pytest_lsp import client_capabilities, make_test_lsp_client

from rankcheck.ftypes import ChainStep, Finding, Guard, Location, RankSource
from rankcheck.report import ReportContext, get_renderer
from rankcheck.report.lsp_format import SourceText, suppression_edit
from rankcheck.rules_meta import get_rule

pytestmark = [pytest.mark.lsp, pytest.mark.slow]

REPO = Path(__file__).resolve().parent.parent
WAIT_SECONDS = 60  # an upper bound for slow CI machines, not a performance assertion


def server_command() -> list[str]:
    """What an editor runs: the `lsp` subcommand of the CLI."""
    return [sys.executable, "-m", "rankcheck", "lsp"]


TRAIN = """\
import torch.distributed as dist
from metrics import compute_mean


def step(t):
    if dist.get_rank() == 0:
        compute_mean(t)
    return t
"""
TRAIN_CALL_LINE = 6  # 0-based line of `compute_mean(t)`

METRICS_LOCAL = """\
def compute_mean(t):
    return t / 2
"""

METRICS_COLLECTIVE = """\
import torch.distributed as dist


def compute_mean(t):
    dist.all_reduce(t)
    return t / 2
"""

DIRECT = """\
import torch.distributed as dist


def step(t):
    if dist.get_rank() == 0:
        dist.all_reduce(t)
"""
DIRECT_CALL_LINE = 5


# --------------------------------------------------------------------------------------------
# `--format lsp` and the suppression edit (no server)
# --------------------------------------------------------------------------------------------


def test_kept_diagnostics_follow_their_lines_and_vanish_with_them():
    from rankcheck.integrations.lsp_documents import moved_diagnostics

    def at(line):
        return {"range": {"start": {"line": line, "character": 4}, "end": {"line": line, "character": 9}}, "code": "RC101"}

    old = "a\nb\nc\nd\n"
    assert [d["range"]["start"]["line"] for d in moved_diagnostics([at(1), at(3)], old, "x\ny\n" + old, "u")] == [3, 5]
    assert [d["range"]["start"]["line"] for d in moved_diagnostics([at(1), at(3)], old, "a\nc\nd\n", "u")] == [2]  # b deleted
    assert [d["range"]["start"]["line"] for d in moved_diagnostics([at(1)], old, "a\nB(\nc\nd\n", "u")] == [1]  # typed in b
    assert moved_diagnostics([at(1)], old, old, "u") == [at(1)]


def test_suppression_edit_appends_merges_and_refuses_unsafe_lines():
    source = SourceText(
        "x = f()\n"
        "y = g()   # keep me\n"
        "z = h()  # noqa: E501\n"
        "w = k()  # NOQA:E501 RC101\n"
        "v = m()  # noqa\n"
        's = """text\n'
        'more"""\n'
        "u = n() + \\\n"
        "    1\n"
        "t = '#not a comment'\n"
    )
    assert suppression_edit(source, 0, "RC101") == (7, 7, "  # noqa: RC101")
    start, end, text = suppression_edit(source, 1, "RC101")
    assert (start, end, text) == (19, 19, "  # noqa: RC101")
    start, end, text = suppression_edit(source, 2, "RC101")
    assert "z = h()  # noqa: E501\n"[start:end] == "# noqa: E501" and text == "# noqa: E501, RC101"
    assert suppression_edit(source, 3, "RC101") is None  # already suppressed
    assert suppression_edit(source, 4, "RC101") is None  # bare noqa suppresses everything
    assert suppression_edit(source, 5, "RC101") is None  # a comment would land in the string
    assert suppression_edit(source, 6, "RC101") == (len('more"""'), len('more"""'), "  # noqa: RC101")
    assert suppression_edit(source, 7, "RC101") is None  # backslash continuation
    assert suppression_edit(source, 9, "RC101")[2] == "  # noqa: RC101"  # `#` inside a string
    assert suppression_edit(source, 42, "RC101") is None


def test_format_lsp_groups_by_file_with_utf16_positions_and_evidence(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    # The emoji is one code point but two UTF-16 code units: positions after it shift by one.
    line = "if rank == 0: s = '\U0001f642'; dist.all_reduce(t)"
    (tmp_path / "train.py").write_text(
        "import torch.distributed as dist\nrank = dist.get_rank()\n" + line + "\n", encoding="utf-8")
    (tmp_path / "other.py").write_text("x = 1\n")
    start = line.index("dist.all_reduce")  # 0-based, in code points
    end = start + len("dist.all_reduce(t)")
    call = Location("train.py", 3, start + 1, 3, end + 1)
    finding = Finding(
        code="RC101", message="dist.all_reduce runs only on ranks where rank == 0",
        location=call,
        guard=Guard(Location("train.py", 3, 1, 3, 14), "if rank == 0:", "rank == 0",
                    source=RankSource("dist.get_rank()", Location("train.py", 2, 8, 2, 23))),
        chain=(ChainStep(call, "dist.all_reduce"),), collective="all_reduce",
    )
    unused = Finding(code="RC003", message="unused suppression", location=Location("other.py", 1, 1),
                     severity="warning")
    parsed = json.loads(get_renderer("lsp")([finding, unused], ReportContext(format="lsp")))
    assert [entry["uri"] for entry in parsed] == [
        (tmp_path / "train.py").resolve().as_uri(), (tmp_path / "other.py").resolve().as_uri(),
    ]
    (diag,) = parsed[0]["diagnostics"]
    assert diag["range"] == {"start": {"line": 2, "character": start + 1},
                             "end": {"line": 2, "character": end + 1}}
    assert (diag["code"], diag["source"], diag["severity"]) == ("RC101", "rankcheck", 1)
    assert diag["codeDescription"]["href"] == get_rule("RC101").help_uri
    messages = [r["message"] for r in diag["relatedInformation"]]
    assert any("if rank == 0:" in m for m in messages)
    assert any("dist.get_rank()" in m for m in messages)
    assert any("dist.all_reduce" in m for m in messages)
    fix = diag["data"]["suppression"]
    assert fix["line"] == 2 and fix["code"] == "RC101"
    utf16_len = len(line.encode("utf-16-le")) // 2
    assert fix["edit"] == {
        "range": {"start": {"line": 2, "character": utf16_len},
                  "end": {"line": 2, "character": utf16_len}},
        "newText": "  # noqa: RC101",
    }
    (warning,) = parsed[1]["diagnostics"]
    assert warning["severity"] == 2 and warning["tags"] == [1]  # unnecessary code, faded
    assert "suppression" not in warning["data"]  # tool diagnostics are not noqa-suppressible


# --------------------------------------------------------------------------------------------
# The server over stdio
# --------------------------------------------------------------------------------------------


class Session:
    def __init__(self, client, project: Path):
        self.client = client
        self.project = project
        self.versions: dict[str, int] = {}
        self.texts: dict[str, str] = {}

    def uri(self, name: str) -> str:
        return (self.project / name).as_uri()

    def open(self, name: str, text: str | None = None) -> str:
        uri = self.uri(name)
        text = (self.project / name).read_text() if text is None else text
        self.versions[uri] = 1
        self.texts[uri] = text
        self.client.text_document_did_open(types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id="python", version=1, text=text)
        ))
        return uri

    def change(self, name: str, text: str) -> None:
        uri = self.uri(name)
        self.versions[uri] += 1
        self.texts[uri] = text
        self.client.text_document_did_change(types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=self.versions[uri]),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
        ))

    async def diagnostics(self, name: str, predicate, what: str) -> list[types.Diagnostic]:
        uri = self.uri(name)
        deadline = asyncio.get_running_loop().time() + WAIT_SECONDS
        while True:
            current = self.client.diagnostics.get(uri)
            if current is not None and predicate(list(current)):
                return list(current)
            if self.client.error is not None:
                raise AssertionError(f"client error: {self.client.error}")
            if asyncio.get_running_loop().time() > deadline:
                logs = "\n".join(m.message for m in self.client.log_messages)
                raise AssertionError(f"{name}: never got {what}; last: {current}\nserver log:\n{logs}")
            await asyncio.sleep(0.05)


def codes_at(diagnostics, line: int) -> list[str]:
    return sorted(str(d.code) for d in diagnostics if d.range.start.line == line)


def only(code: str, line: int):
    return lambda diags: [(str(d.code), d.range.start.line) for d in diags] == [(code, line)]


def nothing(diags) -> bool:
    return diags == []


@pytest_asyncio.fixture
async def lsp(tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    (project / "pyproject.toml").write_text("[project]\nname = 'demo'\nversion = '0'\n")
    (project / "train.py").write_text(TRAIN)
    (project / "metrics.py").write_text(METRICS_LOCAL)
    (project / "direct.py").write_text("x = 1\n")
    client = make_test_lsp_client()
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH")) if p)
    await client.start_io(*server_command(), cwd=str(tmp_path), env=env)
    await client.initialize_session(types.InitializeParams(
        capabilities=client_capabilities("visual-studio-code"),
        root_uri=project.as_uri(),
        workspace_folders=[types.WorkspaceFolder(uri=project.as_uri(), name="project")],
    ))
    session = Session(client, project)
    yield session
    await client.shutdown_session()
    await client.stop()


@pytest.mark.asyncio
async def test_open_publishes_diagnostics_with_evidence_from_the_workspace(lsp):
    # metrics.py on disk issues the collective; only train.py is open.
    (lsp.project / "metrics.py").write_text(METRICS_COLLECTIVE)
    lsp.open("train.py")
    (diag,) = await lsp.diagnostics("train.py", only("RC101", TRAIN_CALL_LINE), "RC101 on the call")
    assert diag.source == "rankcheck"
    assert diag.severity == types.DiagnosticSeverity.Error
    assert diag.code_description.href == get_rule("RC101").help_uri
    assert diag.range.start.character == TRAIN.splitlines()[TRAIN_CALL_LINE].index("compute_mean")
    related = diag.related_information
    assert any(r.location.uri == lsp.uri("train.py") and r.location.range.start.line == 5
               for r in related), related  # the guard
    assert any(r.location.uri == lsp.uri("metrics.py") and "all_reduce" in r.message
               for r in related), related  # the end of the call chain
    assert diag.data["suppression"]["code"] == "RC101"


@pytest.mark.asyncio
async def test_unsaved_changes_are_analysed_not_the_file_on_disk(lsp):
    lsp.open("direct.py")
    await lsp.diagnostics("direct.py", nothing, "an empty diagnostics list")
    lsp.change("direct.py", DIRECT)  # never saved: disk still says `x = 1`
    await lsp.diagnostics("direct.py", only("RC101", DIRECT_CALL_LINE), "RC101 from the buffer")
    moved = DIRECT.replace("def step(t):\n", "def step(t):\n    t = t * 2\n")
    lsp.change("direct.py", moved)
    await lsp.diagnostics("direct.py", only("RC101", DIRECT_CALL_LINE + 1), "RC101 one line down")
    lsp.change("direct.py", "x = 1\n")
    await lsp.diagnostics("direct.py", nothing, "diagnostics cleared")
    assert (lsp.project / "direct.py").read_text() == "x = 1\n"

    # A burst of keystrokes: whatever was analysed in between, the last text wins.
    for padding in range(1, 26):
        lsp.change("direct.py", "\n" * padding + (DIRECT if padding % 2 else "x = 1\n"))
    await lsp.diagnostics("direct.py", only("RC101", DIRECT_CALL_LINE + 25), "the last text's RC101")
    lsp.change("direct.py", "x = 1\n")
    await lsp.diagnostics("direct.py", nothing, "cleared after the burst")


@pytest.mark.asyncio
async def test_buffers_are_analysed_with_the_workspace_summary_cache(lsp):
    # Each edit must not re-parse the whole workspace: the server keeps the summaries on disk, as
    # the CLI does (default: <root>/.rankcheck_cache, or RANKCHECK_CACHE_DIR).
    cache = Path(os.environ.get("RANKCHECK_CACHE_DIR") or lsp.project / ".rankcheck_cache")
    lsp.open("direct.py")
    lsp.change("direct.py", DIRECT)
    await lsp.diagnostics("direct.py", only("RC101", DIRECT_CALL_LINE), "RC101 from the buffer")
    assert cache.is_dir() and any(cache.rglob("*")), f"no summary cache in {cache}"
    lsp.change("direct.py", "x = 1\n")
    await lsp.diagnostics("direct.py", nothing, "cleared with the cache in use")


@pytest.mark.asyncio
async def test_editing_a_helper_refreshes_the_open_caller(lsp):
    lsp.open("train.py")
    lsp.open("metrics.py")
    await lsp.diagnostics("train.py", nothing, "no finding while compute_mean is local")
    lsp.change("metrics.py", METRICS_COLLECTIVE)  # unsaved edit in another file
    await lsp.diagnostics("train.py", only("RC101", TRAIN_CALL_LINE), "RC101 after the helper edit")
    lsp.change("metrics.py", METRICS_LOCAL)
    await lsp.diagnostics("train.py", nothing, "the finding gone again")


@pytest.mark.asyncio
async def test_files_changed_on_disk_refresh_on_save_and_on_watched_file_events(lsp):
    lsp.open("train.py")
    await lsp.diagnostics("train.py", nothing, "no finding yet")
    (lsp.project / "metrics.py").write_text(METRICS_COLLECTIVE)  # changed outside the editor
    lsp.client.text_document_did_save(types.DidSaveTextDocumentParams(
        text_document=types.TextDocumentIdentifier(uri=lsp.uri("train.py"))))
    await lsp.diagnostics("train.py", only("RC101", TRAIN_CALL_LINE), "RC101 after a save")
    (lsp.project / "metrics.py").write_text(METRICS_LOCAL)
    lsp.client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(changes=[
        types.FileEvent(uri=lsp.uri("metrics.py"), type=types.FileChangeType.Changed)]))
    await lsp.diagnostics("train.py", nothing, "the finding gone after the file event")


@pytest.mark.asyncio
async def test_configuration_error_is_published_on_pyproject_and_cleared_when_fixed(lsp):
    pyproject = lsp.project / "pyproject.toml"
    good = pyproject.read_text()
    pyproject.write_text(good + "[tool.rankcheck]\nbogus-key = 1\n")
    lsp.open("direct.py", DIRECT)
    await lsp.diagnostics("direct.py", only("RC101", DIRECT_CALL_LINE), "RC101 despite the bad key")
    (config_error,) = await lsp.diagnostics("pyproject.toml", lambda ds: len(ds) == 1, "RC002")
    assert config_error.code == "RC002" and "bogus-key" in config_error.message
    pyproject.write_text(good)
    lsp.client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(changes=[
        types.FileEvent(uri=lsp.uri("pyproject.toml"), type=types.FileChangeType.Changed)]))
    await lsp.diagnostics("pyproject.toml", nothing, "RC002 cleared once the key is gone")


@pytest.mark.asyncio
async def test_syntax_error_keeps_last_good_diagnostics_and_server_survives(lsp):
    lsp.open("direct.py", DIRECT)
    await lsp.diagnostics("direct.py", only("RC101", DIRECT_CALL_LINE), "RC101")
    lsp.change("direct.py", DIRECT + "def broken(:\n")
    diags = await lsp.diagnostics(
        "direct.py", lambda ds: {str(d.code) for d in ds} == {"RC001", "RC101"},
        "the last good RC101 plus RC001",
    )
    assert codes_at(diags, DIRECT_CALL_LINE) == ["RC101"]

    # A half-typed helper does not make the caller's finding disappear either.
    lsp.open("train.py")
    lsp.open("metrics.py")
    lsp.change("metrics.py", METRICS_COLLECTIVE)
    await lsp.diagnostics("train.py", only("RC101", TRAIN_CALL_LINE), "RC101 via the helper")
    lsp.change("metrics.py", METRICS_COLLECTIVE + "    if (:\n")
    await lsp.diagnostics("metrics.py", lambda ds: "RC001" in {str(d.code) for d in ds}, "RC001")
    await lsp.diagnostics("train.py", only("RC101", TRAIN_CALL_LINE), "RC101 kept")

    lsp.change("direct.py", DIRECT.replace("dist.all_reduce(t)", "pass"))
    await lsp.diagnostics("direct.py", nothing, "a fixed file clears everything")


@pytest.mark.asyncio
async def test_kept_diagnostics_move_with_the_lines_edited_above_them(lsp):
    """While the buffer does not parse, the last good diagnostics stay on the code they were
    about: lines typed above move them (and their guard), an edit of their own line keeps the
    diagnostic where it is but offers no `# noqa` edit for a line that is no longer the one it
    was computed on."""
    lsp.open("direct.py", DIRECT)
    await lsp.diagnostics("direct.py", only("RC101", DIRECT_CALL_LINE), "RC101")
    header = "import os\ndef broken(:\n\n"  # three lines above, one of them a syntax error
    lsp.change("direct.py", header + DIRECT)
    diags = await lsp.diagnostics(
        "direct.py", lambda ds: {str(d.code) for d in ds} == {"RC001", "RC101"}, "the kept RC101 plus RC001")
    (kept,) = [d for d in diags if str(d.code) == "RC101"]
    assert kept.range.start.line == DIRECT_CALL_LINE + 3 and kept.range.end.line == DIRECT_CALL_LINE + 3
    guard = [r for r in kept.related_information or [] if "guard" in r.message]
    assert guard and guard[0].location.range.start.line == DIRECT_CALL_LINE - 1 + 3
    assert kept.data["suppression"]["edit"]["range"]["start"]["line"] == DIRECT_CALL_LINE + 3
    assert [d.range.start.line for d in diags if str(d.code) == "RC001"] == [1]

    # Deleting lines above moves them back up; typing inside the flagged line keeps it there.
    edited = DIRECT.replace("dist.all_reduce(t)", "dist.all_reduce(t, (")
    lsp.change("direct.py", "import os\n" + edited)
    diags = await lsp.diagnostics(
        "direct.py", lambda ds: [d.range.start.line for d in ds if str(d.code) == "RC101"] == [DIRECT_CALL_LINE + 1],
        "the kept RC101 one line down")
    (kept,) = [d for d in diags if str(d.code) == "RC101"]
    assert "suppression" not in (kept.data or {})

    lsp.change("direct.py", DIRECT)
    await lsp.diagnostics("direct.py", only("RC101", DIRECT_CALL_LINE), "RC101 where it was, once it parses")


@pytest.mark.asyncio
async def test_quick_fix_adds_noqa_and_the_finding_goes_away(lsp):
    text = DIRECT.replace("dist.all_reduce(t)", "dist.all_reduce(t)  # noqa: E501")
    uri = lsp.open("direct.py", text)
    (diag,) = await lsp.diagnostics("direct.py", only("RC101", DIRECT_CALL_LINE), "RC101")
    actions = await lsp.client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=uri),
        range=diag.range,
        context=types.CodeActionContext(diagnostics=[diag]),
    ))
    (action,) = actions
    assert action.kind == types.CodeActionKind.QuickFix
    assert "RC101" in action.title
    (edit,) = action.edit.changes[uri]
    assert edit.range.start.line == edit.range.end.line == DIRECT_CALL_LINE
    lines = text.split("\n")
    line = lines[DIRECT_CALL_LINE]
    lines[DIRECT_CALL_LINE] = (line[: edit.range.start.character] + edit.new_text
                               + line[edit.range.end.character:])
    assert lines[DIRECT_CALL_LINE] == "        dist.all_reduce(t)  # noqa: E501, RC101"
    lsp.change("direct.py", "\n".join(lines))
    await lsp.diagnostics("direct.py", nothing, "the finding suppressed")


@pytest.mark.asyncio
async def test_non_python_documents_are_ignored_and_closing_clears(lsp):
    notes = lsp.project / "NOTES.md"
    notes.write_text("if rank == 0: dist.all_reduce(t)\n")
    lsp.client.text_document_did_open(types.DidOpenTextDocumentParams(
        text_document=types.TextDocumentItem(uri=notes.as_uri(), language_id="markdown",
                                             version=1, text=notes.read_text())))
    lsp.open("direct.py", DIRECT)
    await lsp.diagnostics("direct.py", only("RC101", DIRECT_CALL_LINE), "RC101")
    assert notes.as_uri() not in lsp.client.diagnostics
    lsp.client.text_document_did_close(types.DidCloseTextDocumentParams(
        text_document=types.TextDocumentIdentifier(uri=lsp.uri("direct.py"))))
    await lsp.diagnostics("direct.py", nothing, "diagnostics cleared on close")


def test_shutdown_then_exit_ends_the_process_cleanly(tmp_path):
    """Raw JSON-RPC framing, no client library: initialize, shutdown, exit -> exit code 0."""

    def frame(payload: dict) -> bytes:
        body = json.dumps(payload).encode("utf-8")
        return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)

    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"processId": None, "rootUri": tmp_path.as_uri(), "capabilities": {}}},
        {"jsonrpc": "2.0", "method": "initialized", "params": {}},
        {"jsonrpc": "2.0", "id": 2, "method": "shutdown"},
        {"jsonrpc": "2.0", "method": "exit"},
    ]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        p for p in (str(REPO), os.environ.get("PYTHONPATH")) if p))
    proc = subprocess.run(server_command(), input=b"".join(frame(m) for m in messages),
                          capture_output=True, cwd=tmp_path, env=env, timeout=WAIT_SECONDS)
    assert proc.returncode == 0, proc.stderr.decode()
    replies = {}
    stream = proc.stdout
    while stream:
        header, _, rest = stream.partition(b"\r\n\r\n")
        fields = dict(line.split(b":", 1) for line in header.split(b"\r\n"))
        length = int(fields[b"Content-Length"])
        reply = json.loads(rest[:length])
        stream = rest[length:]
        if "id" in reply:
            replies[reply["id"]] = reply
    capabilities = replies[1]["result"]["capabilities"]
    assert capabilities["codeActionProvider"]["codeActionKinds"] == ["quickfix", "source.fixAll.rankcheck"]
    assert replies[1]["result"]["serverInfo"]["name"] == "rankcheck"
    assert replies[2]["result"] is None


def test_cli_format_lsp_end_to_end(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\nversion = '0'\n")
    (tmp_path / "train.py").write_text(TRAIN)
    (tmp_path / "metrics.py").write_text(METRICS_COLLECTIVE)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        p for p in (str(REPO), os.environ.get("PYTHONPATH")) if p))
    proc = subprocess.run([sys.executable, "-m", "rankcheck", "--format", "lsp", "train.py"],
                          cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=WAIT_SECONDS)

    assert proc.returncode == 1, proc.stderr
    (entry,) = json.loads(proc.stdout)
    assert entry["uri"] == (tmp_path / "train.py").resolve().as_uri()
    (diag,) = entry["diagnostics"]
    assert diag["code"] == "RC101" and diag["range"]["start"]["line"] == TRAIN_CALL_LINE
    assert diag["data"]["suppression"]["edit"]["newText"] == "  # noqa: RC101"
    assert any(r["location"]["uri"].endswith("/metrics.py") for r in diag["relatedInformation"])
