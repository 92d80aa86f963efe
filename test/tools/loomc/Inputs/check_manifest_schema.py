#!/usr/bin/env python3
"""Checks manifests that loomc wrote against ManifestSchema.def.

The list of manifest.json's keys that loomc's writer and the runtime's
reader share (runtime/include/loom/runtime/ManifestSchema.def): every key of
every manifest given must be in it, for the kind of object that has it,
with a value of the type it says; and between them the manifests must have
every key it lists (except those named by --may-lack), so that a key the
schema keeps (and the runtime may read) but loomc stopped writing is found.

Usage: check_manifest_schema.py SCHEMA.def MANIFEST.json... [--may-lack
OBJECT.KEY,...]
"""
import argparse
import json
import re
import sys

ENTRY = re.compile(r"^LOOM_MANIFEST_KEY\((\w+),\s*(\w+),\s*([\w()]+),\s*(\w+)\)",
                   re.M)
NESTED = re.compile(r"^(Object|List|Map)\((\w+)\)$")


def read_schema(path):
    schema = {}
    for obj, key, typ, use in ENTRY.findall(open(path).read()):
        if use not in ("Read", "Info"):
            sys.exit(f"{path}: {obj}.{key}: unknown use {use}")
        schema.setdefault(obj, {})[key] = typ
    return schema


def is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def is_number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


SCALARS = {
    "Integer": is_int,
    "Number": is_number,
    "String": lambda v: isinstance(v, str),
    "Bool": lambda v: isinstance(v, bool),
    "NumberOrNull": lambda v: v is None or is_number(v),
    "Integers": lambda v: isinstance(v, list) and all(map(is_int, v)),
    "Strings": lambda v: isinstance(v, list) and
    all(isinstance(s, str) for s in v),
}


class Checker:
    def __init__(self, schema):
        self.schema = schema
        self.seen = set()
        self.errors = []

    def fail(self, where, what):
        self.errors.append(f"{where}: {what}")

    def walk(self, value, obj, where):
        if not isinstance(value, dict):
            return self.fail(where, f"expected a {obj} object")
        for key, field in value.items():
            at = f"{where}.{key}" if where else key
            typ = self.schema.get(obj, {}).get(key)
            if typ is None:
                self.fail(at, f"'{key}' is not a key of {obj} in "
                          "ManifestSchema.def")
                continue
            self.seen.add(f"{obj}.{key}")
            self.check(field, typ, at)

    def check(self, value, typ, at):
        nested = NESTED.match(typ)
        if not nested:
            if typ not in SCALARS:
                return self.fail(at, f"unknown schema type {typ}")
            if not SCALARS[typ](value):
                self.fail(at, f"expected {typ}, got {json.dumps(value)[:40]}")
            return
        shape, inner = nested.groups()
        if shape == "Object":
            return self.walk(value, inner, at)
        if shape == "List" and isinstance(value, list):
            for i, item in enumerate(value):
                self.walk(item, inner, f"{at}[{i}]")
        elif shape == "Map" and isinstance(value, dict):
            for name, item in value.items():
                self.walk(item, inner, f"{at}.{name}")
        else:
            self.fail(at, f"expected {typ}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("schema")
    parser.add_argument("manifests", nargs="+")
    parser.add_argument("--may-lack", default="")
    args = parser.parse_args()
    schema = read_schema(args.schema)
    checker = Checker(schema)
    for path in args.manifests:
        before = len(checker.errors)
        checker.walk(json.load(open(path)), "root", "")
        checker.errors[before:] = [f"{path}: {e}" for e in
                                   checker.errors[before:]]
    may_lack = set(filter(None, args.may_lack.split(",")))
    listed = {f"{obj}.{key}" for obj, keys in schema.items() for key in keys}
    for key in sorted(listed - checker.seen - may_lack):
        checker.errors.append(f"no manifest has {key}, which "
                              "ManifestSchema.def lists")
    for error in checker.errors:
        print("error:", error)
    if checker.errors:
        sys.exit(1)
    print(f"{len(args.manifests)} manifests: {len(checker.seen)} of the "
          f"schema's {len(listed)} keys, and only those")


if __name__ == "__main__":
    main()
