"""Checks tool arguments against the JSON Schema subset relmem's tools declare: type, properties, required,
additionalProperties, enum, minimum/maximum, minLength/maxLength, minItems/maxItems and items. Returns the first
problem as a sentence a model can act on, or None."""

_TYPES = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
}


def _type_name(value):
    for name in ("boolean", "integer", "number", "string", "array", "object", "null"):
        if _TYPES[name](value):
            return name
    return type(value).__name__


def problem(schema, value, where="arguments"):
    """The first way `value` breaks `schema`, or None when it conforms."""
    expected = schema.get("type")
    if expected is not None:
        allowed = expected if isinstance(expected, list) else [expected]
        if not any(_TYPES[t](value) for t in allowed):
            return f"{where} must be {' or '.join(allowed)}, not {_type_name(value)}"
    if "enum" in schema and value not in schema["enum"]:
        return f"{where} must be one of {', '.join(map(str, schema['enum']))}"
    if isinstance(value, dict):
        return _object_problem(schema, value, where)
    if isinstance(value, list):
        return _array_problem(schema, value, where)
    if isinstance(value, str):
        if len(value) < schema.get("minLength", 0):
            return f"{where} must have at least {schema['minLength']} character(s)"
        if "maxLength" in schema and len(value) > schema["maxLength"]:
            return f"{where} must have at most {schema['maxLength']} characters"
    if _TYPES["number"](value):
        if "minimum" in schema and value < schema["minimum"]:
            return f"{where} must be >= {schema['minimum']}"
        if "maximum" in schema and value > schema["maximum"]:
            return f"{where} must be <= {schema['maximum']}"
    return None


def _object_problem(schema, value, where):
    properties = schema.get("properties", {})
    for name in schema.get("required", []):
        if name not in value:
            return f"{where} is missing the required property '{name}'"
    for name, item in value.items():
        if name in properties:
            found = problem(properties[name], item, f"'{name}'")
            if found:
                return found
        elif schema.get("additionalProperties", True) is False:
            known = ", ".join(properties) or "none"
            return f"{where} has an unknown property '{name}' (known: {known})"
    return None


def _array_problem(schema, value, where):
    if len(value) < schema.get("minItems", 0):
        return f"{where} must have at least {schema['minItems']} item(s)"
    if "maxItems" in schema and len(value) > schema["maxItems"]:
        return f"{where} must have at most {schema['maxItems']} items"
    if "items" in schema:
        for i, item in enumerate(value):
            found = problem(schema["items"], item, f"{where}[{i}]")
            if found:
                return found
    return None
