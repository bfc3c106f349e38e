"""A model's answer as data: the JSON it holds (`extract_json`, bounded `loads`), checked against
a pass's schema, a JSON-Schema subset (`validate`), and kept item by item (`salvage`).

Pure functions, no model and no files: `passes.model` asks and logs, this judges what came back.
"""

from __future__ import annotations

import json
import re
from typing import Any

MAX_DEPTH = 32  # nesting an answer may have; every pass's schema is a handful of levels deep

_LANG = re.compile(r"[A-Za-z0-9_+-]{0,20}")


def _fenced_blocks(body: str) -> list[str]:
    """The closed ``` / ~~~ blocks of `body`, in one pass over its lines."""
    blocks: list[str] = []
    current: list[str] | None = None
    marker = ""
    for line in body.split("\n"):
        bare = line.strip()
        if current is None:
            if bare[:3] in ("```", "~~~") and _LANG.fullmatch(bare[3:].strip()):
                current, marker = [], bare[:3]
        elif bare == marker:
            blocks.append("\n".join(current))
            current = None
        else:
            current.append(line)
    return blocks


def extract_json(text: str) -> Any:
    """The JSON an answer holds, by the conventions models answer in, and no other repair:

    the whole text; else the one fenced code block it holds (prose around it allowed); else
    everything after a first line of prose. Two fenced blocks, or JSON amid prose, is refused.
    """
    body = text.strip()
    try:
        return loads(body)
    except ValueError as exc:
        first_error = exc
    blocks = _fenced_blocks(body)
    if len(blocks) == 1:
        return loads(blocks[0].strip())
    if len(blocks) > 1:
        raise ValueError(f"{len(blocks)} fenced blocks; expected one JSON answer")
    head, sep, rest = body.partition("\n")
    if sep and not head.lstrip().startswith(("{", "[")) and rest.lstrip().startswith(("{", "[")):
        return loads(rest.strip())
    raise first_error


def loads(text: str, max_depth: int = MAX_DEPTH) -> Any:
    """JSON with bounded nesting: ValueError, never RecursionError, for 5,000 nested brackets."""
    try:
        value = json.loads(text)
    except RecursionError:
        raise ValueError("nested too deeply") from None
    if _deeper_than(value, max_depth):
        raise ValueError(f"nested more than {max_depth} levels deep")
    return value


def _deeper_than(value: Any, limit: int) -> bool:
    """True when lists/objects nest more than `limit` levels; iterative, so any depth is safe."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, (dict, list)):
            if depth > limit:
                return True
            stack.extend((child, depth + 1) for child in (item.values() if isinstance(item, dict) else item))
    return False


def salvage(value: Any, schema: dict[str, Any]) -> tuple[Any, dict[str, list[tuple[int, Any]]], list[str]]:
    """(the answer without its invalid parts, the indexes of the top-level list items left out, the errors).

    One bad part costs only itself (issue 37: one alias over 80 characters lost that memory's
    three good ones): an invalid item of a list is left out, an invalid optional field is
    dropped, and an item keeps what is valid in it. An item whose required field is invalid, or
    that has a key the schema does not allow (never repaired: issue 16), is left out whole; a list
    whose every item is invalid fails what holds it. What is left must be valid by the schema, or
    the answer is refused as a whole, (None, {}, errors), so its pass keeps the work pending.
    """
    errors = validate(value, schema)
    if not errors:
        return value, {}, []
    if not isinstance(value, dict) or schema.get("type") != "object":
        return None, {}, errors
    kept, item_errors = dict(value), []
    left_out: dict[str, list[tuple[int, Any]]] = {}
    for key, sub in schema.get("properties", {}).items():
        items = value.get(key)
        if not (isinstance(items, list) and isinstance(sub.get("items"), dict)):
            continue
        good = []
        for i, item in enumerate(items):
            usable, pruned, bad = _prune(item, sub["items"], f"$.{key}[{i}]")
            item_errors += bad
            if usable:
                good.append(pruned)
            else:
                left_out.setdefault(key, []).append((i, item))
        kept[key] = good
        if items and not good:
            return None, {}, errors
    if validate(kept, schema):
        return None, {}, errors
    return kept, left_out, item_errors


def _prune(value: Any, schema: dict[str, Any], where: str) -> tuple[bool, Any, list[str]]:
    """(usable, `value` with its invalid list items and optional fields taken out, the errors)."""
    errors = validate(value, schema, where)
    if not errors:
        return True, value, []
    if isinstance(value, dict) and isinstance(schema.get("properties"), dict):
        props, required = schema["properties"], set(schema.get("required", []))
        out: dict[str, Any] = {}
        found: list[str] = []
        for key, sub in value.items():
            if key not in props:
                if schema.get("additionalProperties") is False:
                    return False, None, errors
                out[key] = sub
                continue
            usable, pruned, bad = _prune(sub, props[key], f"{where}.{key}")
            found += bad
            if usable:
                out[key] = pruned
            elif key in required:
                return False, None, errors
        return (True, out, found) if not validate(out, schema, where) else (False, None, errors)
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        good, found = [], []
        for i, item in enumerate(value):
            usable, pruned, bad = _prune(item, schema["items"], f"{where}[{i}]")
            found += bad
            if usable:
                good.append(pruned)
        if value and not good:
            return False, None, errors
        return (True, good, found) if not validate(good, schema, where) else (False, None, errors)
    return False, None, errors


_TYPES: dict[str, Any] = {"object": dict, "array": list, "string": str, "boolean": bool, "null": type(None)}


def _type_ok(value: Any, kind: str) -> bool:
    if kind == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    return isinstance(value, _TYPES[kind])


def validate(value: Any, schema: dict[str, Any], where: str = "$") -> list[str]:
    """Errors of `value` against a JSON-Schema subset: type, enum, properties, required,
    additionalProperties (false), items, minItems/maxItems, minLength/maxLength, minimum/maximum."""
    kinds = schema.get("type")
    if kinds is not None:
        kinds = kinds if isinstance(kinds, list) else [kinds]
        if not any(_type_ok(value, k) for k in kinds):
            return [f"{where}: expected {'/'.join(kinds)}, got {type(value).__name__}"]
    errors: list[str] = []
    if "enum" in schema and value not in schema["enum"]:
        errors.append(f"{where}: {value!r} is not one of {schema['enum']}")
    if isinstance(value, dict):
        errors += _validate_object(value, schema, where)
    if isinstance(value, list):
        errors += _validate_array(value, schema, where)
    if isinstance(value, str):
        if len(value) < schema.get("minLength", 0):
            errors.append(f"{where}: shorter than {schema['minLength']}")
        if "maxLength" in schema and len(value) > schema["maxLength"]:
            errors.append(f"{where}: longer than {schema['maxLength']}")
    if _type_ok(value, "number"):
        if "minimum" in schema and value < schema["minimum"]:
            errors.append(f"{where}: below {schema['minimum']}")
        if "maximum" in schema and value > schema["maximum"]:
            errors.append(f"{where}: above {schema['maximum']}")
    return errors


def _validate_object(value: dict[str, Any], schema: dict[str, Any], where: str) -> list[str]:
    errors = [f"{where}: missing {key!r}" for key in schema.get("required", []) if key not in value]
    props = schema.get("properties", {})
    for key, sub in value.items():
        if key in props:
            errors += validate(sub, props[key], f"{where}.{key}")
        elif schema.get("additionalProperties") is False:
            errors.append(f"{where}: unexpected key {key!r}")
    return errors


def _validate_array(value: list[Any], schema: dict[str, Any], where: str) -> list[str]:
    errors = []
    if len(value) < schema.get("minItems", 0):
        errors.append(f"{where}: fewer than {schema['minItems']} items")
    if "maxItems" in schema and len(value) > schema["maxItems"]:
        errors.append(f"{where}: more than {schema['maxItems']} items")
    if "items" in schema:
        for i, item in enumerate(value):
            errors += validate(item, schema["items"], f"{where}[{i}]")
    return errors
