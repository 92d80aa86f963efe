"""Lets lit run tests named by their path in the source tree
(`lit test/passes/GPU/x.mlir`), not only by their path in the build tree.

Given a build path, lit finds the build's lit.site.cfg.py (which says where
the build and its tools are) and that loads test/lit.cfg.py. Given a
source path, lit finds test/lit.cfg.py (or test/unit/lit.cfg.py) first,
with none of that set. LLVM's own llvm-lit maps source paths to the build
with a generated table; here the build is located instead: --param
loom_build_dir=DIR, else $LOOM_BUILD_DIR, else <source>/build."""
import os

source_root = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))


def load_build_site_config(lit_config, config, suite):
    """Returns False where `config` comes through the build's site config.
    Otherwise loads BUILD/test/<suite>/lit.site.cfg.py, which runs the
    calling lit.cfg.py again, and returns True: the caller then stops with
    `raise SystemExit` (lit's way to end a config file early)."""
    if hasattr(config, "loom_obj_root"):
        return False
    build = os.path.abspath(lit_config.params.get("loom_build_dir")
                            or os.environ.get("LOOM_BUILD_DIR")
                            or os.path.join(source_root, "build"))
    site = os.path.join(build, "test", suite, "lit.site.cfg.py")
    if not os.path.isfile(site):
        lit_config.fatal(
            f"no Loom build at {build} (no {site}): a test named by its "
            f"source path runs with the build that --param loom_build_dir=DIR "
            f"or LOOM_BUILD_DIR=DIR names, by default <source>/build; build "
            f"it first (scripts/build.sh) or name the test by its path in "
            f"the build (lit BUILD/test/...)")
    lit_config.load_config(config, site)
    if os.path.realpath(config.loom_src_root) != os.path.realpath(source_root):
        lit_config.fatal(f"the build at {build} is configured from "
                         f"{config.loom_src_root}, not from {source_root}")
    return True
