"""The CMake build behind `pip install .` (pyproject.toml): builds crew._C and the `crew`
command with CMake, then packages python/crew, the extension and the command (as
crew/bin/crew, which the `crew` console script and crew.distributed.launch run).

Environment: CREW_CMAKE_BUILD_DIR, the CMake build folder to use (default build/pip; an
existing one such as build/release is reused as it is configured); CREW_CMAKE_ARGS, more
-D options; CREW_BUILD_JOBS, the parallel build jobs (default: the CPUs). ccache is used
when it is on PATH.
"""
import os
import re
import shlex
import shutil
import subprocess
import sys

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py

ROOT = os.path.dirname(os.path.abspath(__file__))


def project_version():
    with open(os.path.join(ROOT, "CMakeLists.txt"), encoding="utf-8") as f:
        m = re.search(r"project\(crew VERSION ([0-9.]+)", f.read())
    return m.group(1) if m else "0.0.0"


def cmake_build():
    """Configures (once) and builds the extension and the command; returns the build folder."""
    build_dir = os.path.abspath(os.environ.get("CREW_CMAKE_BUILD_DIR", os.path.join(ROOT, "build", "pip")))
    if not os.path.exists(os.path.join(build_dir, "CMakeCache.txt")):
        args = ["cmake", "-S", ROOT, "-B", build_dir, "-G", "Ninja" if shutil.which("ninja") else "Unix Makefiles",
                "-DCMAKE_BUILD_TYPE=Release", "-DCMAKE_CXX_FLAGS=-O3 -march=x86-64-v3",
                "-DCREW_BUILD_TESTS=OFF", "-DCREW_BUILD_BENCH=OFF", "-DCREW_BUILD_EXAMPLES=OFF",
                "-DCREW_BUILD_PYTHON=ON", f"-DPython3_EXECUTABLE={sys.executable}"]
        if shutil.which("ccache"):
            args += ["-DCMAKE_CXX_COMPILER_LAUNCHER=ccache", "-DCMAKE_C_COMPILER_LAUNCHER=ccache"]
        args += shlex.split(os.environ.get("CREW_CMAKE_ARGS", ""))
        subprocess.check_call(args)
    jobs = os.environ.get("CREW_BUILD_JOBS", str(os.cpu_count() or 1))
    subprocess.check_call(["cmake", "--build", build_dir, "-j", jobs, "--target", "crew_python", "crew_cli"])
    return build_dir


class CMakeBuildPy(build_py):
    """build_py that takes the package from the CMake build: python/crew as the build copied
    it, crew/_C*.so, and bin/crew as crew/bin/crew."""

    def run(self):
        build_dir = cmake_build()
        target = os.path.join(self.build_lib, "crew")
        if os.path.exists(target):
            shutil.rmtree(target)
        shutil.copytree(os.path.join(build_dir, "python", "crew"), target,
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        os.makedirs(os.path.join(target, "bin"), exist_ok=True)
        shutil.copy2(os.path.join(build_dir, "bin", "crew"), os.path.join(target, "bin", "crew"))


class BinaryDistribution(Distribution):
    """The wheel holds a compiled extension: tagged for this Python and platform."""

    def has_ext_modules(self):
        return True


setup(
    version=project_version(),
    packages=["crew"],
    package_dir={"": "python"},
    cmdclass={"build_py": CMakeBuildPy},
    distclass=BinaryDistribution,
    zip_safe=False,
)
