# -*- Python -*-
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import loom_lit_site

# `lit test/...` (a source path): test/loom_lit_site.py says why.
if loom_lit_site.load_build_site_config(lit_config, config, ""):
    raise SystemExit

import lit.formats
from lit.llvm import llvm_config

config.name = "Loom"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.excludes = ["lit.cfg.py", "lit.site.cfg.py", "CMakeLists.txt", "unit",
                   "Inputs", "lib"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.loom_obj_root, "test")

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%loom_src", config.loom_src_root))
config.substitutions.append(("%loom_obj", config.loom_obj_root))
# This lit, for tests that run lit themselves.
config.substitutions.append(
    ("%lit", "%s %s" % (sys.executable, os.path.abspath(sys.argv[0]))))
config.substitutions.append(("%torch_python", config.torch_python or "false"))
config.substitutions.append(("%python", shutil.which("python3") or "python3"))
# The runtime library, for tests that load an artifact with ctypes.
config.substitutions.append(
    ("%loom_runtime_lib",
     os.path.join(config.loom_obj_root, "runtime", "libLoomRuntime.so")))

llvm_config.with_system_environment(["HOME", "TMPDIR"])
llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.loom_tools_dir, append_path=True)
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
# Compiled tests are small: one BLAS thread keeps timings stable on 2 cores.
config.environment["OPENBLAS_NUM_THREADS"] = "1"

# scripts/sanitize.sh runs the tests with loom-run and loom-gradcheck from a
# runtime built with a sanitizer: --param loom_run_dir=DIR (its standalone
# build) --param sanitizer=address|thread, and the sanitizers' options (where
# each process writes its reports, suppressions) in the environment it sets.
runtime_tools = ["loom-run", "loom-gradcheck"]
sanitized_dir = lit_config.params.get("loom_run_dir")
if sanitized_dir:
    sanitized_dirs = [os.path.join(sanitized_dir, "tools", t) for t in runtime_tools]
    llvm_config.add_tool_substitutions(runtime_tools, sanitized_dirs)
    for d in sanitized_dirs:  # helper scripts that run loom-run by name
        llvm_config.with_environment("PATH", d, append_path=True)
    for var in ("ASAN_OPTIONS", "UBSAN_OPTIONS", "TSAN_OPTIONS"):
        if var in os.environ:
            config.environment[var] = os.environ[var]
    config.available_features.add(
        "sanitizer-" + lit_config.params.get("sanitizer", "address"))
else:
    llvm_config.add_tool_substitutions(runtime_tools, [config.loom_tools_dir])
llvm_config.add_tool_substitutions(["loom-opt", "loomc"], [config.loom_tools_dir])

# The ASan/UBSan fuzz targets of the runtime's file readers (runtime/fuzz,
# CMake option LOOM_RUNTIME_FUZZ), run from PATH.
if all(os.path.exists(os.path.join(config.loom_tools_dir, "loom-fuzz-" + r))
       for r in ("safetensors", "manifest", "data")):
    config.available_features.add("loom-fuzz")
# The compiler's fuzz target (tools/loom-fuzz-compile), built with them.
if os.path.exists(os.path.join(config.loom_tools_dir, "loom-fuzz-compile")):
    config.available_features.add("loom-fuzz-compile")

# The PyTorch peer (Debian's python3-torch) is optional.
def _has_torch():
    py = config.torch_python
    if not py or not os.path.exists(py):
        return False
    try:
        subprocess.run([py, "-c", "import torch"], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       timeout=120)
        return True
    except Exception:
        return False

if _has_torch():
    config.available_features.add("torch")

# The CUDA toolkit (ptxas, to turn PTX into cubins) compiles --target=cuda
# artifacts; CI machines have it without a GPU.
if os.path.exists("/usr/local/cuda/bin/ptxas"):
    config.available_features.add("cuda-toolkit")

# GPU tests run only where a CUDA device is visible.
if shutil.which("nvidia-smi"):
    try:
        if subprocess.run(["nvidia-smi", "-L"], stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL, timeout=30).returncode == 0:
            config.available_features.add("cuda-device")
    except Exception:
        pass

# Emulated hosts (bench/cluster.sh) need network namespaces: root + iproute2.
def _has_netns():
    probe = "loomprobe%d" % os.getpid()
    try:
        ok = subprocess.run(["ip", "netns", "add", probe], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, timeout=30).returncode == 0
        if ok:
            subprocess.run(["ip", "netns", "del", probe], timeout=30)
        return ok
    except Exception:
        return False

if _has_netns() and shutil.which("mpirun"):
    config.available_features.add("netns")
