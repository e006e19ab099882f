# SPDX-License-Identifier: Apache-2.0
"""The quickstarts copied into docs/clients.md are the example files (which each client's
test.sh compiles and runs against a daemon), byte for byte."""
import os
import shutil
import subprocess
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SCRIPT = os.path.join(ROOT, "scripts", "check-doc-examples.py")


def test_doc_code_blocks_equal_the_example_files():
    r = subprocess.run([sys.executable, SCRIPT, ROOT], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def test_the_check_sees_a_difference(tmp_path):
    shutil.copytree(os.path.join(ROOT, "docs"), tmp_path / "docs")
    shutil.copytree(os.path.join(ROOT, "examples"), tmp_path / "examples",
                    ignore=shutil.ignore_patterns("node_modules", "dist"))
    p = tmp_path / "examples" / "python" / "quickstart.py"
    p.write_text(p.read_text() + "# changed\n")
    r = subprocess.run([sys.executable, SCRIPT, str(tmp_path)], capture_output=True, text=True)
    assert r.returncode == 1
    assert "examples/python/quickstart.py" in r.stdout
