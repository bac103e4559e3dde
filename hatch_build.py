"""Build hook: put what the harness needs at run time inside the harness package.

The repository keeps these folders at the top level (they stay the source of
truth); a regular wheel gets a copy of each inside the package:

- ``adapters/`` -> ``harness/adapters`` (the benchmark adapters);
- ``tasks/`` -> ``harness/suite_data`` (the suites, ``--suite NAME``);
- ``results/reference/`` -> ``harness/reference_data`` (published tables,
  ``--with-reference NAME``).

An editable install gets none of the copies: the source checkout's package
already reaches the top-level folders (harness/adapters/__init__.py,
harness/config/suites.py, harness/results/reference.py), and a copy of ``adapters`` in
site-packages would shadow the editable ``harness`` package with a half-empty one.
"""

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

PACKAGE_DATA = {
    "adapters": "harness/adapters",
    "tasks": "harness/suite_data",
    "results/reference": "harness/reference_data",
}


class AdaptersIntoHarness(BuildHookInterface):
    def initialize(self, version: str, build_data: dict) -> None:
        if self.target_name == "wheel" and version == "standard":
            build_data["force_include"].update(PACKAGE_DATA)
