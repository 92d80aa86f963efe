# -*- Python -*-
# Runs every GoogleTest binary (name ending in "Tests") under test/unit.
import os
import lit.formats

config.name = "Loom-Unit"
config.suffixes = []
config.test_exec_root = os.path.join(config.loom_obj_root, "test", "unit")
config.test_source_root = config.test_exec_root
config.test_format = lit.formats.GoogleTest(".", "Tests")
config.environment["OPENBLAS_NUM_THREADS"] = "1"
