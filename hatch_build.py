"""Build hook: place the top-level adapters/ folder inside the harness package.

Only a regular wheel gets the copy. An editable install leaves it out, because
the source checkout's ``harness.adapters`` already reaches ``adapters/`` (see
harness/adapters/__init__.py), and a copy in site-packages would shadow the
editable ``harness`` package with a half-empty one.
"""

from hatchling.builders.hooks.plugin.interface import BuildHookInterface


class AdaptersIntoHarness(BuildHookInterface):
    def initialize(self, version: str, build_data: dict) -> None:
        if self.target_name == "wheel" and version == "standard":
            build_data["force_include"]["adapters"] = "harness/adapters"
