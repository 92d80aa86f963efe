# -*- Python -*-
# Runs every GoogleTest binary (name ending in "Tests") under test/unit.
import os
import sys

import lit.formats

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import loom_lit_site

# `lit test/unit` (the source path): test/loom_lit_site.py says why.
if loom_lit_site.load_build_site_config(lit_config, config, "unit"):
    raise SystemExit

config.name = "Loom-Unit"
config.suffixes = []
config.test_exec_root = os.path.join(config.loom_obj_root, "test", "unit")
config.test_source_root = config.test_exec_root
config.test_format = lit.formats.GoogleTest(".", "Tests")
config.environment["OPENBLAS_NUM_THREADS"] = "1"
