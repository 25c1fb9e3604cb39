#!/usr/bin/python3
"""Usage: check-schema-tables.py SCHEMA OPS_DEF ATTRS_DEF
Checks that the JSON Schema names exactly the ops and attributes of the IR
tables (Ops.def, Attrs.def), so docs/graph.schema.json cannot go stale."""
import json
import re
import sys

schema = json.load(open(sys.argv[1]))
ops = set(re.findall(r'FUEL_OP\(\w+, "(\w+)"', open(sys.argv[2]).read()))
attrs = set(re.findall(r'FUEL_ATTR\(\w+, "(\w+)"', open(sys.argv[3]).read()))
schema_ops = set(schema["$defs"]["node"]["properties"]["op"]["enum"])
schema_attrs = set(schema["$defs"]["attrs"]["properties"])
problems = []
# Sources are sections of the file, not node ops.
for name in sorted((ops - {"input", "constant"}) ^ schema_ops):
    problems.append(f"op '{name}' is in {'Ops.def' if name in ops else 'the schema'} only")
for name in sorted(attrs ^ schema_attrs):
    problems.append(f"attribute '{name}' is in {'Attrs.def' if name in attrs else 'the schema'} only")
print("\n".join(problems) if problems else f"{len(schema_ops)} ops and {len(schema_attrs)} attributes match")
sys.exit(1 if problems else 0)
