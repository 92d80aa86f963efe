"""Prints "step loss" for every step line of loom-run --metrics files, in
order, with the loss as JSON wrote it (17 significant digits), so two loss
curves are bitwise equal exactly when the outputs are equal text.

usage: losses.py METRICS...
"""
import json
import sys

for path in sys.argv[1:]:
    with open(path) as f:
        for line in f:
            record = json.loads(line)
            if "step" in record:
                print(record["step"], repr(record["loss"]))
