"""promptmill's answers must not hang on the wording of a dependency's messages.

A new jsonschema release may reword `'x' is a required property` or `... is valid
under each of ...`; the state and template errors promptmill prints are read off the
error's data (validator, schema, instance), so rewording changes nothing. Each test
validates for real, then rewords every message before promptmill reads it.
"""

from __future__ import annotations

import jsonschema

from promptmill.runtime.schema.state_errors import explain
from promptmill.source.loader import load_text
from promptmill.source.schemacheck import check_document

SCHEMA = {
    "type": "object",
    "required": ["id", "goal"],
    "properties": {
        "id": {"type": "string"},
        "goal": {"type": "string"},
        "kind": {"oneOf": [{"type": "string"}, {"const": "x"}]},
        "size": {"oneOf": [{"type": "integer"}, {"type": "boolean"}]},
    },
    "dependentRequired": {"goal": ["owner"]},
}


def _reworded(instance: object) -> list[jsonschema.ValidationError]:
    errors = list(jsonschema.Draft202012Validator(SCHEMA).iter_errors(instance))
    assert errors
    for error in errors:
        error.message = "reworded by a future release"
        for sub in error.context or ():
            sub.message = "reworded too"
    return errors


def test_missing_names_come_from_the_instance():
    assert explain(_reworded({}), "state", ()) == [
        ("state.goal", "is required"),
        ("state.id", "is required"),
    ]


def test_dependent_required_comes_from_the_instance():
    assert explain(_reworded({"id": "a", "goal": "b"}), "state", ()) == [
        ("state.owner", "is required when 'goal' is present"),
    ]


def test_one_of_matching_several_or_none_comes_from_the_context():
    found = dict(explain(_reworded({"id": "a", "goal": "b", "owner": "c", "kind": "x", "size": "s"}), "state", ()))
    assert found["state.kind"] == "must match exactly one of the allowed schemas (matches several)"
    assert found["state.size"] == "must match exactly one of the allowed schemas (matches none)"


def test_template_missing_keys_are_each_named_once(monkeypatch):
    doc, diags = load_text("kind: output\n", "prompts/contracts/c.yaml")
    assert doc is not None and not diags
    plain = [(d.code, d.message) for d in check_document(doc)]
    assert plain and all(code == "PM204" for code, _ in plain)
    real = jsonschema.Draft202012Validator.iter_errors

    def reworded(self, *args, **kwargs):
        for error in real(self, *args, **kwargs):
            error.message = "reworded by a future release"
            yield error

    monkeypatch.setattr(jsonschema.Draft202012Validator, "iter_errors", reworded)
    assert [(d.code, d.message) for d in check_document(doc)] == plain
