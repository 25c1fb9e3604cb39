#!/usr/bin/python3
"""Usage: validate-schema.py SCHEMA FILE...  Validates each JSON file against
the JSON Schema and prints one line per file; exits 1 if any is invalid."""
import json
import sys

import jsonschema

schema = json.load(open(sys.argv[1]))
jsonschema.Draft202012Validator.check_schema(schema)
validator = jsonschema.Draft202012Validator(schema)
failed = False
for path in sys.argv[2:]:
    errors = sorted(validator.iter_errors(json.load(open(path))), key=str)
    if errors:
        failed = True
        e = errors[0]
        print(f"{path}: invalid at /{'/'.join(map(str, e.absolute_path))}: {e.message}")
    else:
        print(f"{path}: valid")
sys.exit(1 if failed else 0)
