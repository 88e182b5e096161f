"""Generates the gRPC/protobuf stubs of invariant_serve from the repository's .proto files.

Used by setup.py (pip install ./python) and by the CMake build (python/CMakeLists.txt):

    python3 generate_stubs.py --out PACKAGE_DIR/_proto PROTO_ROOT...

Every PROTO_ROOT is searched for invariant/v1/*.proto, inference/*.proto and
grpc/health/v1/health.proto; the stubs are written under OUT with the same
directory layout, and their imports are rewritten to live inside the package
(`invariant_serve._proto.invariant.v1...`), so the installed package adds no
top-level `invariant` or `inference` module.
"""

import argparse
import pathlib
import re
import subprocess
import sys

PROTO_GLOBS = ("invariant/v1/*.proto", "inference/*.proto", "grpc/health/v1/health.proto")
PACKAGE = "invariant_serve._proto"
_IMPORT = re.compile(r"^(from|import) (invariant|inference|grpc\.health)\b", re.MULTILINE)


def find_protos(roots):
    """(root, relative path) of every .proto to compile, first root winning."""
    found = {}
    for root in roots:
        root = pathlib.Path(root)
        for pattern in PROTO_GLOBS:
            for path in sorted(root.glob(pattern)):
                found.setdefault(path.relative_to(root).as_posix(), root)
    return sorted(found.items())


def generate(roots, out):
    """Compiles the protos under `roots` into `out`; returns the generated files."""
    out = pathlib.Path(out)
    protos = find_protos(roots)
    if not protos:
        raise SystemExit(f"generate_stubs: no .proto files under {', '.join(map(str, roots))}")
    out.mkdir(parents=True, exist_ok=True)
    command = [sys.executable, "-m", "grpc_tools.protoc", f"--python_out={out}",
               f"--grpc_python_out={out}"]
    command += [f"-I{root}" for root in roots]
    command += [relative for relative, _ in protos]
    subprocess.run(command, check=True)
    generated = sorted(out.rglob("*_pb2*.py"))
    for path in generated:
        text = path.read_text()
        path.write_text(_IMPORT.sub(lambda m: f"{m.group(1)} {PACKAGE}.{m.group(2)}", text))
    for directory in [out, *[p for p in out.rglob("*") if p.is_dir()]]:
        (directory / "__init__.py").touch()
    return generated


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="the package's _proto directory")
    parser.add_argument("roots", nargs="+", help="directories holding the .proto files")
    args = parser.parse_args()
    generate(args.roots, args.out)


if __name__ == "__main__":
    main()
