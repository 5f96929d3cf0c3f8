#!/usr/bin/env python3
"""Writes the seed corpus: small BSON documents covering every BSON type (hand-encoded)."""
import os
import struct

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")


def cstr(s):
    return s.encode() + b"\x00"


def string(s):
    b = s if isinstance(s, bytes) else s.encode()
    return struct.pack("<i", len(b) + 1) + b + b"\x00"


def doc(elements):
    body = b"".join(elements) + b"\x00"
    return struct.pack("<i", len(body) + 4) + body


def el(t, key, payload):
    return bytes([t]) + cstr(key) + payload


def main():
    os.makedirs(OUT, exist_ok=True)
    oid = bytes.fromhex("65a1b2c3d4e5f60718293a4b")
    nested = doc([el(0x02, "lang", string("en")), el(0x10, "n", struct.pack("<i", 1))])
    arr = doc([el(0x02, "0", string("sql")), el(0x01, "1", struct.pack("<d", 2.5))])
    seeds = {
        "empty": doc([]),
        "scalars": doc([
            el(0x01, "d", struct.pack("<d", 1.5)),
            el(0x01, "nan", struct.pack("<d", float("nan"))),
            el(0x02, "s", string("h\u00e9llo")),
            el(0x08, "b", b"\x01"),
            el(0x0A, "null", b""),
            el(0x06, "undef", b""),
            el(0x10, "i32", struct.pack("<i", -7)),
            el(0x12, "i64", struct.pack("<q", 9007199254740993)),
            el(0xFF, "min", b""),
            el(0x7F, "max", b""),
        ]),
        "typed": doc([
            el(0x07, "_id", oid),
            el(0x09, "date", struct.pack("<q", 1705276800123)),
            el(0x09, "far", struct.pack("<q", -(2**63))),
            el(0x11, "ts", struct.pack("<II", 7, 1700000000)),
            el(0x13, "dec", bytes(15) + b"\x30"),
            el(0x05, "bin", struct.pack("<i", 3) + b"\x00" + b"\x01\x02\x03"),
            el(0x05, "uuid", struct.pack("<i", 16) + b"\x04" + bytes(range(16))),
            el(0x0B, "re", cstr("^a.*") + cstr("im")),
        ]),
        "code": doc([
            el(0x0D, "code", string("function(){return 1}")),
            el(0x0E, "sym", string("sym")),
            el(0x0C, "ptr", string("coll") + oid),
            el(0x0F, "cws", struct.pack("<i", 4 + len(string("return x")) + len(nested)) + string("return x") + nested),
        ]),
        "nested": doc([el(0x03, "meta", nested), el(0x04, "tags", arr), el(0x03, "dollar", doc([el(0x02, "$oid", string("x"))]))]),
        "dupes_and_bad_utf8": doc([el(0x10, "a", struct.pack("<i", 1)), el(0x10, "a", struct.pack("<i", 2)),
                                   el(0x02, "bad", string(b"\xff\xfe"))]),
        "vector": doc([el(0x04, "embedding", doc([el(0x01, str(i), struct.pack("<d", i / 10)) for i in range(16)]))]),
    }
    deep = doc([el(0x10, "x", struct.pack("<i", 1))])
    for _ in range(120):
        deep = doc([el(0x03, "d", deep)])
    seeds["deep"] = deep
    for name, data in seeds.items():
        with open(os.path.join(OUT, name + ".bson"), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
