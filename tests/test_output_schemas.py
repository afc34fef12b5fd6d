"""Every output format, from one real run of the CLI, against its documented schema: the JSON
document and json-lines against the schema rankcheck ships, SARIF against the official 2.1.0
schema, LSP diagnostics against lsprotocol's types, GitHub annotations against the workflow
command syntax. The run holds a cross-module RC101, a syntax error (RC001, whose end was 0) and a
warning, so that every optional part of a finding appears."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from rankcheck.report.json_format import SCHEMA_PATH

pytestmark = pytest.mark.slow

SARIF_SCHEMA = Path(__file__).with_name("sarif-schema-2.1.0.json")
FORMATS = {"json": "out.json", "json-lines": "out.jsonl", "sarif": "out.sarif", "lsp": "out.lsp.json", "github": "out.github"}


@pytest.fixture(scope="module")
def outputs(tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("formats")
    (root / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    (root / "broken.py").write_text("def f(:\n    pass\n")
    (root / "metrics.py").write_text("import torch.distributed as dist\n\n\ndef mean(t):\n    dist.all_reduce(t)\n")
    (root / "train.py").write_text(
        "import torch.distributed as dist\nfrom metrics import mean\n\n\ndef step(t):\n"
        "    if dist.get_rank() == 0:\n        mean(t)\n"
    )
    (root / "report.py").write_text(
        "import torch.distributed as dist\n\n\ndef report(t, rank):\n    if rank == 0:\n        dist.all_reduce(t)\n        print(t)\n"
    )
    (root / "clock.py").write_text("import time\nimport torch.distributed as dist\n\n\ndef wait():\n    if time.time() > 5:\n        dist.barrier()\n")
    args = [item for name, target in FORMATS.items() for item in ("--format", f"{name}:{target}")]
    proc = subprocess.run([sys.executable, "-m", "rankcheck", *args, "."], cwd=root, capture_output=True, text=True, timeout=120,
                          env=dict(os.environ))
    assert proc.returncode == 1, proc.stderr
    return {name: (root / target).read_text(encoding="utf-8") for name, target in FORMATS.items()}


def _errors(validator, document) -> str:
    return "\n".join(f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(document))


@pytest.fixture(scope="module")
def json_validator():
    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def test_the_json_document_matches_the_shipped_schema(outputs: dict, json_validator) -> None:
    document = json.loads(outputs["json"])
    assert not _errors(json_validator, document)
    codes = {f["code"] for f in document["findings"]}
    assert {"RC001", "RC101"} <= codes and {f["severity"] for f in document["findings"]} == {"error", "warning"}
    assert any(f.get("fix") for f in document["findings"]), "the project has a fixable finding: its fix is checked too"


def test_a_syntax_error_ends_where_it_starts_never_at_0(outputs: dict) -> None:
    (syntax,) = [f for f in json.loads(outputs["json"])["findings"] if f["code"] == "RC001"]
    loc = syntax["location"]
    assert (loc["line"], loc["column"]) == (1, 7)
    assert (loc["end_line"], loc["end_column"]) == (1, 7)


def test_each_json_line_is_a_finding_of_the_schema(outputs: dict, json_validator) -> None:
    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    finding = jsonschema.Draft202012Validator({**schema["$defs"]["finding"], "$defs": schema["$defs"]})
    lines = outputs["json-lines"].splitlines()
    assert len(lines) == len(json.loads(outputs["json"])["findings"])
    for line in lines:
        assert not _errors(finding, json.loads(line)), line


def test_the_schema_rejects_what_it_must(json_validator) -> None:
    """The schema is not a rubber stamp: the old 0 end, a missing field and a bad code fail it."""
    good = {"version": 1, "tool": "rankcheck", "tool_version": "0.2.0", "files_checked": 1, "findings": [{
        "code": "RC001", "name": "unparsable-file", "message": "syntax error", "severity": "error",
        "location": {"path": "a.py", "line": 1, "column": 7, "end_line": 1, "end_column": 7}, "guard": None, "chain": [],
        "collective": "", "source": None, "verdict": None, "verdict_detail": "", "extra": {}, "fix": None, "added_later": {"any": "shape"}}]}
    assert not _errors(json_validator, good)  # a field added later is allowed
    zero_end = json.loads(json.dumps(good))
    zero_end["findings"][0]["location"].update(end_line=0, end_column=0)
    assert "end_line" in _errors(json_validator, zero_end)
    no_message = json.loads(json.dumps(good))
    del no_message["findings"][0]["message"]
    assert "'message' is a required property" in _errors(json_validator, no_message)
    bad_code = json.loads(json.dumps(good))
    bad_code["findings"][0]["code"] = "E501"
    assert _errors(json_validator, bad_code)


def test_sarif_matches_the_official_schema(outputs: dict) -> None:
    schema = json.loads(SARIF_SCHEMA.read_text(encoding="utf-8"))
    log = json.loads(outputs["sarif"])
    assert not _errors(jsonschema.Draft4Validator(schema), log)
    regions = [r["locations"][0]["physicalLocation"]["region"] for r in log["runs"][0]["results"]]
    assert all(region.get("endLine", region["startLine"]) >= region["startLine"] for region in regions)


def test_lsp_diagnostics_are_lsprotocol_diagnostics(outputs: dict) -> None:
    from lsprotocol import converters, types

    converter = converters.get_converter()
    entries = json.loads(outputs["lsp"])
    assert entries
    for entry in entries:
        assert entry["uri"].startswith("file:///")
        for raw in entry["diagnostics"]:
            diagnostic = converter.structure(raw, types.Diagnostic)
            assert diagnostic.message and diagnostic.source == "rankcheck"
            start, end = diagnostic.range.start, diagnostic.range.end
            assert (end.line, end.character) >= (start.line, start.character) >= (0, 0)


ANNOTATION = re.compile(
    r"^::(error|warning|notice) file=[^,:]+,line=[1-9][0-9]*,col=[1-9][0-9]*(,endLine=[1-9][0-9]*(,endColumn=[1-9][0-9]*)?)?"
    r",title=RC[0-9]{3} \([a-z-]+\)::[^\r\n]+$"
)


def test_github_annotations_follow_the_workflow_command_syntax(outputs: dict) -> None:
    lines = outputs["github"].splitlines()
    assert len(lines) == len(json.loads(outputs["json"])["findings"])
    for line in lines:
        assert ANNOTATION.match(line), line
