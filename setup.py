"""The wheel carries the data files the tool reads at run time (generator.kernel.paths.DATA_FILES:
the version pins, the JSON Schemas, the example specs and their scenarios, the load
generator's locustfile) under generator/_data/, at the same relative paths they have
in this repository, which keeps them where its own `make` targets and tests use them.
Everything else is in setup.cfg."""
import glob
import os
import re

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))


def _data_files() -> list[str]:
    # Read from generator/kernel/paths.py without importing the package (its imports need the dependencies).
    with open(os.path.join(HERE, "generator", "kernel", "paths.py")) as f:
        source = f.read()
    block = re.search(r"DATA_FILES = \(([^)]*)\)", source)
    assert block, "generator/kernel/paths.py: DATA_FILES"
    patterns = re.findall(r'"([^"]+)"', block.group(1))
    return sorted({f for p in patterns for f in glob.glob(p, root_dir=HERE, recursive=True)})


class BuildWithData(build_py):
    def run(self):
        super().run()
        for rel in _data_files():
            target = os.path.join(self.build_lib, "generator", "_data", rel)
            self.mkpath(os.path.dirname(target))
            self.copy_file(os.path.join(HERE, rel), target)


setup(cmdclass={"build_py": BuildWithData})
