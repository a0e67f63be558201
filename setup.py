"""Builds the binding's extension, redlock_quorum._native, with CMake.

The package's metadata is in pyproject.toml. The extension is the CMake
target redlock_quorum_native (python/CMakeLists.txt), built with the
library's sources in a tree of its own, build-python/ (apart from the test
suite's build*/ trees), against the libuv, hiredis, toml++, Nettle, OpenSSL
headers and pybind11 the system has, for the interpreter running this build.
CMAKE_BUILD_PARALLEL_LEVEL sets the build's jobs (default: every core).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent


def project_version() -> str:
    text = (ROOT / "CMakeLists.txt").read_text(encoding="utf-8")
    found = re.search(r"project\(redlock VERSION ([0-9][0-9.]*)", text)
    if not found:
        raise RuntimeError("CMakeLists.txt names no project(redlock VERSION ...)")
    return found.group(1)


class CMakeExtension(Extension):
    def __init__(self, name: str, target: str) -> None:
        super().__init__(name, sources=[])
        self.target = target


class CMakeBuild(build_ext):
    def build_extension(self, ext: Extension) -> None:
        if not isinstance(ext, CMakeExtension):
            super().build_extension(ext)
            return
        cmake = shutil.which("cmake")
        if cmake is None:
            raise RuntimeError("building redlock_quorum needs cmake (Debian: cmake)")
        tag = sysconfig.get_config_var("SOABI") or "python"
        tree = ROOT / "build-python" / tag
        configure = [
            cmake, "-S", str(ROOT), "-B", str(tree),
            "-DCMAKE_BUILD_TYPE=Release",
            "-DCMAKE_UNITY_BUILD=ON",
            "-DREDLOCK_BUILD_PYTHON=ON",
            "-DREDLOCK_BUILD_TESTS=OFF",
            "-DREDLOCK_BUILD_TOOLS=OFF",
            "-DREDLOCK_BUILD_BENCH=OFF",
            "-DREDLOCK_BUILD_EXAMPLES=OFF",
            "-DREDLOCK_INSTALL=OFF",
            # The interpreter this package is built for (a virtual
            # environment's included), not the distribution's default.
            f"-DPython3_EXECUTABLE={sys.executable}",
        ]
        subprocess.run(configure, check=True)
        jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL") or str(os.cpu_count() or 2)
        subprocess.run([cmake, "--build", str(tree), "--target", ext.target, "-j", jobs],
                       check=True)
        built = sorted((tree / "python" / "redlock_quorum").glob("_native*.so"))
        if len(built) != 1:
            raise RuntimeError(f"expected one _native module in {tree}, found {built}")
        destination = Path(self.get_ext_fullpath(ext.name))
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(built[0], destination)


# setuptools' egg_info writes only into a directory that exists.
(ROOT / "build-python").mkdir(exist_ok=True)

setup(
    version=project_version(),
    ext_modules=[CMakeExtension("redlock_quorum._native", "redlock_quorum_native")],
    cmdclass={"build_ext": CMakeBuild},
    # setuptools' own scratch trees go under build-python/ as well, never
    # into build/ (scripts/test's release tree).
    options={"build": {"build_base": "build-python/setuptools"},
             "egg_info": {"egg_base": "build-python"}},
)
