"""`pip install ./python` as a user runs it, without the network: the
package installed into a fresh virtual environment (from a copy of
python/, so that the build leaves nothing in the source tree) imports from
there and answers a lookup."""
import os
import shutil
import subprocess
import sys

import pytest

from conftest import ROOT, WORKLOADS, best_config


def test_pip_install(tmp_path, toy_db, librtdb):
    venv = tmp_path / "venv"
    r = subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    if r.returncode:
        pytest.skip("no venv module here (Debian: python3-venv): %s" % r.stdout.decode()[-300:])
    py = str(venv / "bin" / "python")
    r = subprocess.run([py, "-c", "import setuptools, wheel"], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT)
    if r.returncode:
        pytest.skip("setuptools and wheel are needed to build offline (Debian: "
                    "python3-setuptools python3-wheel): %s" % r.stdout.decode()[-300:])
    src = tmp_path / "src"
    shutil.copytree(os.path.join(ROOT, "python"), str(src),
                    ignore=shutil.ignore_patterns("__pycache__", "tests", "*.egg-info", "build"))
    r = subprocess.run([py, "-m", "pip", "install", "--no-index", "--no-build-isolation",
                        "--no-deps", "--disable-pip-version-check", str(src)],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    assert r.returncode == 0, r.stdout.decode()
    code = ("import rooftune, sys\n"
            "print(rooftune.__file__)\n"
            "with rooftune.Reader(sys.argv[1], library=sys.argv[2]) as r:\n"
            "    print(r.lookup('box', 'toy', {'N': 4096}).config)\n")
    r = subprocess.run([py, "-c", code, toy_db[0], librtdb], cwd=str(tmp_path),
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"})
    assert r.returncode == 0, r.stdout.decode()
    where, config = r.stdout.decode().splitlines()
    assert where.startswith(str(venv)), where
    assert config == str(best_config(WORKLOADS[4096]))
