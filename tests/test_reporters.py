"""Reporters: exact text, JSON and GitHub output, and SARIF checked against a schema."""

from __future__ import annotations

import io
import json

import jsonschema
import pytest

import promptmill
from promptmill.cli.reporters import FORMATS, escape_data, escape_property, report
from promptmill.core.diagnostics import Diagnostic

DIAGS = [
    Diagnostic(
        "PM106",
        "error",
        "prompts/roles/b.yaml",
        7,
        3,
        "duplicate key 'reserve'",
        "remove one entry",
    ),
    Diagnostic("PM404", "warning", "prompts/roles/a.yaml", 12, 9, "input 'notes' is never used"),
    Diagnostic("PM110", "warning", "prompts/shared", 0, 0, "the symbolic link loops; it was skipped"),
    Diagnostic("PM505", "info", "prompts/roles/a.yaml", 3, 1, "counts 50%, approx\nsecond line"),
]


def render(fmt: str, diags=DIAGS, **kwargs) -> str:
    stream = io.StringIO()
    report(diags, fmt, stream, **kwargs)
    return stream.getvalue()


def test_formats():
    assert FORMATS == ("text", "json", "github", "sarif")
    with pytest.raises(ValueError, match="unknown report format 'xml'"):
        render("xml")


def test_text():
    assert render("text", files_checked=14) == (
        "prompts/roles/a.yaml:3:1: info[PM505] counts 50%, approx\n"
        "    second line\n"
        "prompts/roles/a.yaml:12:9: warning[PM404] input 'notes' is never used\n"
        "prompts/roles/b.yaml:7:3: error[PM106] duplicate key 'reserve'\n"
        "    hint: remove one entry\n"
        "prompts/shared: warning[PM110] the symbolic link loops; it was skipped\n"
        "1 error, 2 warnings, 1 info in 14 files\n"
    )


@pytest.mark.parametrize(
    "diags, files, summary",
    [
        ([], 14, "no problems in 14 files"),
        ([], 1, "no problems in 1 file"),
        ([], None, "no problems"),
        (DIAGS[:1] * 2, None, "1 error"),  # duplicates are reported once
        (DIAGS[1:3], 2, "2 warnings in 2 files"),
    ],
)
def test_text_summary(diags, files, summary):
    assert render("text", diags, files_checked=files).splitlines()[-1] == summary


def test_text_color_only_when_asked():
    plain = render("text", DIAGS[:1])
    assert "\x1b[" not in plain
    colored = render("text", DIAGS[:1], color=True)
    assert colored.startswith("prompts/roles/b.yaml:7:3: \x1b[1;31merror\x1b[0m[\x1b[1mPM106\x1b[0m] duplicate key 'reserve'\n")


def test_json():
    out = render("json", files_checked=14)
    assert out.endswith("}\n") and out == render("json", list(reversed(DIAGS)), files_checked=14)
    assert json.loads(out) == {
        "version": 1,
        "diagnostics": [
            {
                "code": "PM505",
                "name": "approximate-tokenizer",
                "severity": "info",
                "file": "prompts/roles/a.yaml",
                "line": 3,
                "col": 1,
                "message": "counts 50%, approx\nsecond line",
                "hint": None,
            },
            {
                "code": "PM404",
                "name": "unused-input",
                "severity": "warning",
                "file": "prompts/roles/a.yaml",
                "line": 12,
                "col": 9,
                "message": "input 'notes' is never used",
                "hint": None,
            },
            {
                "code": "PM106",
                "name": "duplicate-key",
                "severity": "error",
                "file": "prompts/roles/b.yaml",
                "line": 7,
                "col": 3,
                "message": "duplicate key 'reserve'",
                "hint": "remove one entry",
            },
            {
                "code": "PM110",
                "name": "symlink-loop",
                "severity": "warning",
                "file": "prompts/shared",
                "line": 0,
                "col": 0,
                "message": "the symbolic link loops; it was skipped",
                "hint": None,
            },
        ],
        "summary": {"errors": 1, "warnings": 2, "infos": 1, "files": 14},
    }
    assert json.loads(render("json", []))["summary"] == {
        "errors": 0,
        "warnings": 0,
        "infos": 0,
        "files": None,
    }


def test_github():
    assert render("github", files_checked=3) == (
        "::notice file=prompts/roles/a.yaml,line=3,col=1,title=PM505 approximate-tokenizer"
        "::counts 50%25, approx%0Asecond line\n"
        "::warning file=prompts/roles/a.yaml,line=12,col=9,title=PM404 unused-input::input 'notes' is never used\n"
        "::error file=prompts/roles/b.yaml,line=7,col=3,title=PM106 duplicate-key"
        "::duplicate key 'reserve'%0Ahint: remove one entry\n"
        "::warning file=prompts/shared,title=PM110 symlink-loop::the symbolic link loops; it was skipped\n"
    )


def test_github_escaping():
    assert escape_data("50% done\r\nnext: a, b") == "50%25 done%0D%0Anext: a, b"
    assert escape_property("C:\\a,b%\n") == "C%3A\\a%2Cb%25%0A"
    odd = Diagnostic("PM101", "error", "dir,x/a:b.yaml", 1, 2, "bad: a, b")
    assert render("github", [odd]) == ("::error file=dir%2Cx/a%3Ab.yaml,line=1,col=2,title=PM101 yaml-syntax::bad: a, b\n")


def _obj(required: list[str], properties: dict, closed: bool = True) -> dict:
    return {
        "type": "object",
        "required": required,
        "properties": properties,
        "additionalProperties": not closed,
    }


_TEXT = _obj(["text"], {"text": {"type": "string", "minLength": 1}})
_RULE = _obj(
    ["id", "name", "shortDescription", "helpUri"],
    {
        "id": {"type": "string", "pattern": "^PM[0-9]{3}$"},
        "name": {"type": "string"},
        "shortDescription": _TEXT,
        "helpUri": {
            "type": "string",
            "pattern": "^https://github.com/promptmill/promptmill/blob/main/docs/errors.md#pm[0-9]{3}$",
        },
        "defaultConfiguration": _obj(["level"], {"level": {"enum": ["error", "warning", "note"]}}),
    },
)
_LOCATION = _obj(
    ["physicalLocation"],
    {
        "physicalLocation": _obj(
            ["artifactLocation"],
            {
                "artifactLocation": _obj(
                    ["uri", "uriBaseId"],
                    {
                        "uri": {"type": "string", "pattern": "^[^/ ]"},
                        "uriBaseId": {"const": "%SRCROOT%"},
                    },
                ),
                "region": _obj(
                    ["startLine"],
                    {
                        "startLine": {"type": "integer", "minimum": 1},
                        "startColumn": {"type": "integer", "minimum": 1},
                    },
                ),
            },
        )
    },
)
_RESULT = _obj(
    ["ruleId", "ruleIndex", "level", "message", "locations"],
    {
        "ruleId": {"type": "string"},
        "ruleIndex": {"type": "integer", "minimum": 0},
        "level": {"enum": ["error", "warning", "note"]},
        "message": _TEXT,
        "locations": {"type": "array", "minItems": 1, "items": _LOCATION},
    },
)
SARIF_SUBSET = _obj(
    ["$schema", "version", "runs"],
    {
        "$schema": {"const": "https://json.schemastore.org/sarif-2.1.0.json"},
        "version": {"const": "2.1.0"},
        "runs": {
            "type": "array",
            "minItems": 1,
            "maxItems": 1,
            "items": _obj(
                ["tool", "results"],
                {
                    "tool": _obj(
                        ["driver"],
                        {
                            "driver": _obj(
                                ["name", "version", "informationUri", "rules"],
                                {
                                    "name": {"const": "promptmill"},
                                    "version": {"type": "string"},
                                    "informationUri": {"type": "string", "format": "uri"},
                                    "rules": {"type": "array", "items": _RULE},
                                },
                            )
                        },
                    ),
                    "columnKind": {"enum": ["unicodeCodePoints", "utf16CodeUnits"]},
                    "results": {"type": "array", "items": _RESULT},
                },
            ),
        },
    },
)


def test_sarif_structure():
    out = render("sarif", files_checked=14)
    log = json.loads(out)
    jsonschema.Draft202012Validator.check_schema(SARIF_SUBSET)
    jsonschema.validate(log, SARIF_SUBSET, cls=jsonschema.Draft202012Validator)
    run = log["runs"][0]
    driver = run["tool"]["driver"]
    assert driver["version"] == promptmill.__version__
    assert [r["id"] for r in driver["rules"]] == ["PM106", "PM110", "PM404", "PM505"]
    assert driver["rules"][0]["shortDescription"]["text"] == "a mapping repeats a key"
    assert driver["rules"][0]["helpUri"].endswith("errors.md#pm106")
    results = run["results"]
    assert [r["ruleId"] for r in results] == ["PM505", "PM404", "PM106", "PM110"]
    for result in results:
        assert driver["rules"][result["ruleIndex"]]["id"] == result["ruleId"]
    assert [r["level"] for r in results] == ["note", "warning", "error", "warning"]
    assert results[2]["message"]["text"] == "duplicate key 'reserve'\nhint: remove one entry"
    assert results[2]["locations"][0]["physicalLocation"]["region"] == {
        "startLine": 7,
        "startColumn": 3,
    }
    assert "region" not in results[3]["locations"][0]["physicalLocation"]
    assert out == render("sarif", list(reversed(DIAGS)), files_checked=14)  # deterministic


def test_sarif_uris_are_relative_and_encoded():
    odd = [Diagnostic("PM101", "error", "prompts/my roles/ä.yaml", 2, 0, "bad")]
    result = json.loads(render("sarif", odd))["runs"][0]["results"][0]
    location = result["locations"][0]["physicalLocation"]
    assert location["artifactLocation"] == {
        "uri": "prompts/my%20roles/%C3%A4.yaml",
        "uriBaseId": "%SRCROOT%",
    }
    assert location["region"] == {"startLine": 2}
    empty = json.loads(render("sarif", []))
    jsonschema.validate(empty, SARIF_SUBSET)
    assert empty["runs"][0]["results"] == [] and empty["runs"][0]["tool"]["driver"]["rules"] == []
