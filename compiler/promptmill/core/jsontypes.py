"""Names for JSON-shaped data, so signatures say what they hold.

`JSON` is a JSON object as `json.loads` or a YAML mapping gives it: string keys,
values not yet checked. Code that has checked a value's shape returns the precise
type instead.
"""

from __future__ import annotations

from typing import Any, TypeAlias

JSON: TypeAlias = dict[str, Any]
