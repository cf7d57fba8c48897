"""`pip install --no-build-isolation .` (pyproject.toml + setup.py): into a fresh venv, the
package imports from site-packages and the `crew` console script runs the packaged command
(`crew --help`, `crew plot`). The CMake step reuses the build tree that ctest runs from (its
targets are up to date), so this checks the packaging, not a full rebuild; CREW_TEST_PIP_FRESH=1
builds into a fresh CMake folder instead (minutes)."""
import importlib.util
import json
import os
import subprocess
import sys
import venv

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_pip_install_from_a_checkout(tmp_path):
    if importlib.util.find_spec("pip") is None or importlib.util.find_spec("setuptools") is None:
        pytest.skip("needs pip and setuptools (python3-pip, python3-setuptools)")
    bin_dir = os.environ.get("CREW_BIN_DIR")
    if not bin_dir or not os.path.exists(os.path.join(bin_dir, "crew")):
        pytest.skip("needs CREW_BIN_DIR (ctest sets it) with the built crew command")
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)  # the venv must find crew in its own site-packages
    if os.environ.get("CREW_TEST_PIP_FRESH") == "1":
        env["CREW_CMAKE_BUILD_DIR"] = str(tmp_path / "cmake")
    else:
        env["CREW_CMAKE_BUILD_DIR"] = os.path.dirname(os.path.abspath(bin_dir))
    env.pop("CREW_BIN_DIR", None)
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(system_site_packages=True, with_pip=False).create(env_dir)
    python = str(env_dir / "bin" / "python")
    # Debian's pip from the system site-packages; no index, no build isolation: no network.
    r = subprocess.run([python, "-m", "pip", "install", "--no-build-isolation", "--no-deps", "--no-index", ROOT],
                       env=env, capture_output=True, text=True, timeout=1800)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]

    r = subprocess.run([python, "-c", "import crew, json; print(json.dumps([crew.__file__, crew.__version__]))"],
                       env=env, capture_output=True, text=True, timeout=60, cwd=str(tmp_path))
    assert r.returncode == 0, r.stderr
    path, version = json.loads(r.stdout)
    assert path.startswith(str(env_dir)) and version

    crew = str(env_dir / "bin" / "crew")
    r = subprocess.run([crew, "--help"], env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and "launch" in r.stdout and "plot" in r.stdout, r.stdout + r.stderr
    metrics = tmp_path / "m.jsonl"
    metrics.write_text(json.dumps({"type": "step", "epoch": 0, "step": 0, "loss": 1.0}) + "\n"
                       + json.dumps({"type": "step", "epoch": 0, "step": 1, "loss": 0.5}) + "\n")
    r = subprocess.run([crew, "plot", str(metrics), "-o", str(tmp_path / "c.png")], env=env, capture_output=True,
                       text=True, timeout=120)
    if "No module named 'matplotlib'" in r.stderr:
        pytest.skip("matplotlib is not installed")
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "c.png").read_bytes()[:4] == b"\x89PNG"


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q"]))
