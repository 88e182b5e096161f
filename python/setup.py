"""Builds invariant_serve; the protobuf/gRPC stubs are generated from the repository's
proto/ (and client/proto/ for grpc.health.v1) by generate_stubs.py at build time.

    pip install ./python                          # with access to a package index
    pip install --no-build-isolation ./python     # offline, with Debian's python3-grpc-tools

The proto roots default to ../proto and ../client/proto next to this file;
INVARIANT_PROTO_ROOTS (os.pathsep-separated) overrides them.
"""

import os
import pathlib
import sys

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = pathlib.Path(__file__).resolve().parent


def proto_roots():
    if os.environ.get("INVARIANT_PROTO_ROOTS"):
        return [pathlib.Path(p) for p in os.environ["INVARIANT_PROTO_ROOTS"].split(os.pathsep)]
    return [HERE.parent / "proto", HERE.parent / "client" / "proto"]


class BuildWithStubs(build_py):
    """build_py that also writes invariant_serve/_proto/ into the build directory."""

    def run(self):
        super().run()
        sys.path.insert(0, str(HERE))
        import generate_stubs

        roots = [root for root in proto_roots() if root.is_dir()]
        if not roots:
            raise SystemExit("invariant_serve: proto/ not found next to python/; "
                             "set INVARIANT_PROTO_ROOTS")
        generate_stubs.generate(roots, pathlib.Path(self.build_lib) / "invariant_serve" / "_proto")


setup(cmdclass={"build_py": BuildWithStubs})
