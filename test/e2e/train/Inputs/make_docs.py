"""Writes the same documents as a directory (one file each, sorted names) and
as a JSONL file (a "text" field each): lengths from 1 to 3*seq bytes of
lowercase text, so rows hold several documents and some span rows."""
import json
import os
import random
import sys

out, count, seq = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rng = random.Random(7)
os.makedirs(os.path.join(out, "dir"), exist_ok=True)
with open(os.path.join(out, "docs.jsonl"), "w") as jsonl:
    for i in range(count):
        text = "".join(rng.choice("abcdefgh ") for _ in range(rng.randint(1, 3 * seq)))
        with open(os.path.join(out, "dir", f"{i:04d}.txt"), "w") as f:
            f.write(text)
        jsonl.write(json.dumps({"text": text, "id": i}) + "\n")
