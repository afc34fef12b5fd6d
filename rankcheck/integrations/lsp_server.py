"""`rankcheck lsp`: the language server (pygls), over stdio.

On open and change (debounced) and on save, every open Python buffer is re-analysed against the
workspace's call graph and its diagnostics are published (`rankcheck.integrations.lsp_documents` decides what);
re-diagnosing all open buffers after any edit is what refreshes `train.py` when `metrics.py`
changes. A quick fix adds `# noqa: CODE` to the reported line, from what `Diagnostic.data` carries;
a finding with a fix (rankcheck.fix) also gets that rewrite as a quick fix, and
`source.fixAll.rankcheck` applies every safe fix of the file at once.

The server never runs user code and never runs the verifier; analysis runs on one worker thread so
that the JSON-RPC loop stays responsive, and every failure is logged to the client, not raised.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import traceback
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import Any, Optional, Sequence

from rankcheck import __version__

DEFAULT_DEBOUNCE_MS = 200
FIX_ALL = "source.fixAll.rankcheck"
WATCHED_FILES_REGISTRATION_ID = "rankcheck-watched-files"


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(
        prog="rankcheck lsp",
        description="Run the rankcheck language server over stdio (for VS Code, Neovim, Helix...).",
    )
    parser.add_argument("--stdio", action="store_true",
                        help="accepted for editor clients that pass it; stdio is the only transport")
    parser.add_argument("--debounce-ms", type=int, default=DEFAULT_DEBOUNCE_MS,
                        help="wait this long after the last keystroke before analysing (default: "
                        "%(default)s)")
    args = parser.parse_args(list(argv) if argv is not None else None)
    try:
        server = build_server(debounce_seconds=max(args.debounce_ms, 0) / 1000)
    except ImportError as exc:
        print(f"rankcheck lsp needs the `lsp` extra (pip install 'rankcheck[lsp]'): {exc}",
              file=sys.stderr)
        return 2
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    # Anything printed by accident must not corrupt the JSON-RPC stream on stdout.
    sys.stdout = sys.stderr
    server.start_io(stdin, stdout)
    return 0 if server.shutdown_requested else 1


def build_server(debounce_seconds: float = DEFAULT_DEBOUNCE_MS / 1000):
    from lsprotocol import types
    from lsprotocol.converters import get_converter
    from pygls.lsp.server import LanguageServer

    from rankcheck.integrations.lsp_documents import (
        OpenDocument,
        PublishedState,
        analyse_documents,
        is_python,
    )
    from rankcheck.report.lsp_format import SourceText, code_units, suppression_edit

    converter = get_converter()

    class RankcheckLanguageServer(LanguageServer):
        def __init__(self) -> None:
            super().__init__("rankcheck", __version__,
                             text_document_sync_kind=types.TextDocumentSyncKind.Incremental)
            self.shutdown_requested = False
            self.debounce_seconds = debounce_seconds
            self.state = PublishedState()
            self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="rankcheck")
            self._timer: Optional[asyncio.TimerHandle] = None
            self._lock: Optional[asyncio.Lock] = None
            self._requested = 0  # bumped by every event that can change a diagnostic
            self._analysed = 0  # the request number the last analysis covered
            self._elsewhere: set[str] = set()  # non-open files we published tool diagnostics for
            self.published: dict[str, list] = {}  # uri -> the diagnostics last published (dicts)

        def log(self, message: str, kind: Any = types.MessageType.Log) -> None:
            try:
                self.window_log_message(types.LogMessageParams(type=kind, message=message))
            except Exception:
                traceback.print_exc(file=sys.stderr)

        # -- scheduling ---------------------------------------------------------------------------
        def request_analysis(self, delay: float) -> None:
            self._requested += 1
            if self._timer is not None:
                self._timer.cancel()
            loop = asyncio.get_running_loop()
            self._timer = loop.call_later(delay, lambda: asyncio.ensure_future(self.analyse()))

        def open_documents(self) -> list[OpenDocument]:
            docs = []
            for uri, doc in list(self.workspace.text_documents.items()):
                if not uri.startswith("file:") or not is_python(doc.path):
                    continue
                docs.append(OpenDocument(uri=uri, path=doc.path, text=doc.source,
                                         version=doc.version))
            return docs

        def workspace_roots(self) -> list[str]:
            from pygls.uris import to_fs_path

            roots = []
            for folder in self.workspace.folders.values():
                path = to_fs_path(folder.uri)
                if path:
                    roots.append(path)
            if self.workspace.root_path:
                roots.append(self.workspace.root_path)
            return roots

        async def analyse(self) -> None:
            self._timer = None
            if self._lock is None:
                self._lock = asyncio.Lock()
            async with self._lock:
                if self._analysed >= self._requested or self.shutdown_requested:
                    return
                target = self._requested
                docs = self.open_documents()
                encoding = str(self.workspace.position_encoding or "utf-16")
                job = partial(analyse_documents, docs, self.workspace_roots(), self.state,
                              encoding=encoding)
                try:
                    outcome = await asyncio.get_running_loop().run_in_executor(self._executor, job)
                except Exception:
                    self.log("rankcheck: analysis crashed\n" + traceback.format_exc(),
                             types.MessageType.Error)
                    self._analysed = target
                    return
                self._analysed = target
                for message in outcome.log:
                    failed = message.startswith("rankcheck: analysis failed")
                    self.log(message, types.MessageType.Error if failed else types.MessageType.Log)
                versions = {d.uri: d.version for d in docs}
                still_open = set(self.workspace.text_documents)
                for uri, diagnostics in outcome.diagnostics.items():
                    if uri in still_open or uri in outcome.elsewhere:
                        self.publish(uri, diagnostics, versions.get(uri))
                if not outcome.failed:
                    for uri in self._elsewhere - outcome.elsewhere - still_open:
                        self.publish(uri, [])  # the configuration error was fixed
                    self._elsewhere = set(outcome.elsewhere)

        def publish(self, uri: str, diagnostics: list, version: Optional[int] = None) -> None:
            self.published[uri] = list(diagnostics)
            try:
                structured = [converter.structure(d, types.Diagnostic) for d in diagnostics]
                self.text_document_publish_diagnostics(
                    types.PublishDiagnosticsParams(uri=uri, diagnostics=structured, version=version)
                )
            except Exception:
                self.log("rankcheck: could not publish diagnostics\n" + traceback.format_exc(),
                         types.MessageType.Error)

    server = RankcheckLanguageServer()

    @server.feature(types.INITIALIZED)
    async def initialized(ls: RankcheckLanguageServer, params: types.InitializedParams) -> None:
        # Files changed outside the editor (git checkout, another tool) change the call graph too.
        caps = ls.client_capabilities.workspace
        watched = caps.did_change_watched_files if caps is not None else None
        if watched is None or not watched.dynamic_registration:
            return
        options = types.DidChangeWatchedFilesRegistrationOptions(
            watchers=[types.FileSystemWatcher(glob_pattern="**/*.py"),
                      types.FileSystemWatcher(glob_pattern="**/*.pyi"),
                      types.FileSystemWatcher(glob_pattern="**/pyproject.toml")]
        )
        try:
            await ls.client_register_capability_async(
                types.RegistrationParams(registrations=[types.Registration(
                    id=WATCHED_FILES_REGISTRATION_ID,
                    method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                    register_options=options,
                )])
            )
        except Exception:
            ls.log("rankcheck: the client refused file watching\n" + traceback.format_exc())

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: RankcheckLanguageServer, params: types.DidOpenTextDocumentParams) -> None:
        ls.request_analysis(ls.debounce_seconds)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: RankcheckLanguageServer, params: types.DidChangeTextDocumentParams) -> None:
        ls.request_analysis(ls.debounce_seconds)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: RankcheckLanguageServer, params: types.DidSaveTextDocumentParams) -> None:
        ls.request_analysis(0)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: RankcheckLanguageServer, params: types.DidCloseTextDocumentParams) -> None:
        # The closed file is read from disk again, which may change the other buffers' findings.
        ls.publish(params.text_document.uri, [])
        ls.request_analysis(ls.debounce_seconds)

    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def did_change_watched_files(
        ls: RankcheckLanguageServer, params: types.DidChangeWatchedFilesParams
    ) -> None:
        ls.request_analysis(ls.debounce_seconds)

    @server.feature(types.SHUTDOWN)
    def shutdown(ls: RankcheckLanguageServer, params: Any) -> None:
        ls.shutdown_requested = True
        if ls._timer is not None:
            ls._timer.cancel()
        ls._executor.shutdown(wait=False)

    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix, FIX_ALL]),
    )
    def code_action(
        ls: RankcheckLanguageServer, params: types.CodeActionParams
    ) -> list[types.CodeAction]:
        """The finding's fix and `# noqa: CODE` on the reported line, computed on the buffer as it
        is now; `source.fixAll.rankcheck`: every safe fix of the buffer."""
        uri = params.text_document.uri
        only = [str(kind) for kind in params.context.only or []]
        document = ls.workspace.get_text_document(uri)
        fix_all = [] if only and not any(FIX_ALL.startswith(kind) for kind in only) else fix_all_action(ls.published.get(uri, []), document)
        if only and not any(kind.startswith(types.CodeActionKind.QuickFix) for kind in only):
            return fix_all
        source = SourceText(document.source)
        encoding = str(ls.workspace.position_encoding or "utf-16")
        actions: list[types.CodeAction] = []
        seen: set[tuple[int, str]] = set()
        for diag in params.context.diagnostics:
            data = diag.data if isinstance(diag.data, dict) else {}
            fix = data.get("suppression")
            if diag.source == "rankcheck":
                actions.extend(fix_actions(diag, data, document))
            if diag.source != "rankcheck" or not isinstance(fix, dict):
                continue
            try:
                index, code = int(fix["line"]), str(fix["code"])
            except (KeyError, TypeError, ValueError):
                continue
            if (index, code) in seen:
                continue
            seen.add((index, code))
            edit = suppression_edit(source, index, code)
            line = source.line(index)
            if edit is None or line is None:
                continue
            start, end, new_text = edit
            text_edit = types.TextEdit(
                range=types.Range(
                    start=types.Position(line=index, character=code_units(line[:start], encoding)),
                    end=types.Position(line=index, character=code_units(line[:end], encoding)),
                ),
                new_text=new_text,
            )
            actions.append(
                types.CodeAction(
                    title=str(fix.get("title") or f"Suppress {code} on this line"),
                    kind=types.CodeActionKind.QuickFix,
                    diagnostics=[diag],
                    is_preferred=not data.get("fix"),
                    edit=types.WorkspaceEdit(changes={uri: [text_edit]}),
                )
            )
        return actions + fix_all

    def fix_edits(fix: dict, document: Any) -> Optional[list]:
        """The fix's edits, when the buffer still holds the lines they replace."""
        lines = document.source.splitlines()
        edits = []
        for edit in fix.get("edits", []):
            start, end = edit["range"]["start"]["line"], edit["range"]["end"]["line"]
            if lines[start:end] != edit.get("replaces"):
                return None
            edits.append(converter.structure({"range": edit["range"], "newText": edit["newText"]}, types.TextEdit))
        return edits or None

    def fix_actions(diag: types.Diagnostic, data: dict, document: Any) -> list:
        fix = data.get("fix")
        edits = fix_edits(fix, document) if isinstance(fix, dict) else None
        if not edits:
            return []
        assert isinstance(fix, dict)
        unsafe = fix.get("applicability") != "safe"
        return [
            types.CodeAction(
                title=f"{fix.get('title')}" + (" (unsafe)" if unsafe else ""),
                kind=types.CodeActionKind.QuickFix,
                diagnostics=[diag],
                is_preferred=not unsafe,
                edit=types.WorkspaceEdit(changes={document.uri: edits}),
            )
        ]

    def fix_all_action(published: list, document: Any) -> list:
        """One action with every safe fix whose lines no other chosen fix touches."""
        chosen: list = []
        taken: list = []
        for diag in published:
            fix = (diag.get("data") or {}).get("fix")
            if not isinstance(fix, dict) or fix.get("applicability") != "safe":
                continue
            edits = fix_edits(fix, document)
            spans = [(e.range.start.line, e.range.end.line) for e in edits or []]
            if not edits or any(a < d and c < b for a, b in spans for c, d in taken):
                continue
            chosen.extend(edits)
            taken.extend(spans)
        if not chosen:
            return []
        return [types.CodeAction(title="Fix all rankcheck findings with safe fixes", kind=FIX_ALL,
                                 edit=types.WorkspaceEdit(changes={document.uri: chosen}))]

    return server


if __name__ == "__main__":
    sys.exit(main())
