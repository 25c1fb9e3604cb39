# lit configuration for the fuelc regression tests.
import glob
import json
import os

import lit.formats

config.name = "fuelc"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".test"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(os.path.dirname(config.fuel_tools_dir), "test", "lit")
config.excludes = ["lit.cfg.py", "lit.site.cfg.py.in", "validate-schema.py", "check-schema-tables.py", "expect-exit.sh",
                   "with-task-limit.py",
                   "check-ops.py", "check-mlp.py", "check-graphs.py", "check-onnx.py",
                   "make-invalid.py", "make-mlp.py"]

# The ASan/UBSan build (its runtime needs file descriptors of its own).
if config.fuel_sanitizers.upper() in ("ON", "1", "TRUE", "YES"):
    config.available_features.add("sanitizers")

config.environment["PATH"] = os.pathsep.join(
    [config.llvm_tools_dir, config.environment.get("PATH", "/usr/bin:/bin")])

config.substitutions.append(("%fuelc", os.path.join(config.fuel_tools_dir, "fuelc", "fuelc")))
config.substitutions.append(("%fuel-ref", os.path.join(config.fuel_tools_dir, "fuel-ref", "fuel-ref")))
config.substitutions.append(("%fuel-run", os.path.join(config.fuel_tools_dir, "fuel-run", "fuel-run")))
config.substitutions.append(("%build", os.path.dirname(config.fuel_tools_dir)))
# Debian's python3 has numpy (the one first on PATH may not).
config.substitutions.append(("%python", "/usr/bin/python3"))
config.substitutions.append(("%examples", os.path.join(config.fuel_src_root, "examples")))
config.substitutions.append(("%src", config.fuel_src_root))
config.substitutions.append(("%docs", os.path.join(config.fuel_src_root, "docs")))
config.substitutions.append(
    ("%validate-schema", "/usr/bin/python3 " + os.path.join(config.test_source_root, "validate-schema.py")))
# `%with-task-limit N cmd...` runs cmd under a task limit of N.
config.substitutions.append(
    ("%with-task-limit", "/usr/bin/python3 " + os.path.join(config.test_source_root, "with-task-limit.py")))
# `%expect-exit N cmd...` runs cmd and fails unless it exits with exactly N.
config.substitutions.append(
    ("%expect-exit", os.path.join(config.test_source_root, "expect-exit.sh")))

# lit runs one test per CPU at once, so each run takes one CPU thread and
# one lavapipe thread (tests of threading pass --threads): per-process
# defaults of one thread per CPU would start CPUs^2 threads, which a
# runner's task limit refuses (EAGAIN) and which starve each other.
config.environment["FUEL_NUM_THREADS"] = "1"
config.environment["LP_NUM_THREADS"] = "1"

# Vulkan runs keep Mesa lavapipe loaded until exit (LD_PRELOAD): the driver
# leaks a little when the loader unloads it, which LeakSanitizer would report
# in the sanitizer build from an unknown module. `%vk-env cmd...`, and
# FUEL_VULKAN_PRELOAD for the scripts, which set it for fuel-run only.
preload = ""
for manifest in sorted(glob.glob("/usr/share/vulkan/icd.d/lvp_icd*.json")):
    preload = json.load(open(manifest))["ICD"]["library_path"]
config.environment["FUEL_VULKAN_PRELOAD"] = preload
config.substitutions.append(("%vk-env", "env LD_PRELOAD=" + preload if preload else "env"))
