"""Rewrites route 0's program section of an artifact with a Python statement
over `p` (the parsed JSON) and writes a new artifact whose hashes are all
valid again: what a hostile or careless edit looks like to the runtime.
Usage: edit-program.py IN OUT STATEMENT"""
import hashlib
import json
import struct
import sys

src, dst, statement = sys.argv[1:4]
data = open(src, "rb").read()
count = struct.unpack_from("<I", data, 12)[0]
sections = []
for i in range(count):
    entry = data[64 + 64 * i: 128 + 64 * i]
    name = entry[:16].split(b"\0")[0].decode()
    offset, size = struct.unpack_from("<QQ", entry, 16)
    sections.append([name, data[offset:offset + size]])
for s in sections:
    if s[0] == "program":
        p = json.loads(s[1])
        exec(statement)
        s[1] = json.dumps(p).encode()

align = lambda n: (n + 63) // 64 * 64
offset = 64 + 64 * count
table, body = b"", b""
for i, (name, payload) in enumerate(sections):
    table += name.encode().ljust(16, b"\0") + struct.pack("<QQ", offset, len(payload))
    table += hashlib.sha256(payload).digest()
    last = i == len(sections) - 1  # The file ends with the last section's data.
    padded = len(payload) if last else align(len(payload))
    body += payload.ljust(padded, b"\0")
    offset += padded
header = b"FUELPLAN" + struct.pack("<IIQ", 2, count, 64 + len(table) + len(body))
header += hashlib.sha256(table).digest() + b"\0" * 8
open(dst, "wb").write(header + table + body)
