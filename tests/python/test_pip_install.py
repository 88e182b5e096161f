"""`pip install ./python` works: the build generates the stubs, and the installed package calls
the real server (in a fresh venv that sees only the system's grpcio, protobuf and numpy)."""

import os
import pathlib
import shutil
import subprocess
import sys
import textwrap

import numpy as np

SCRIPT = textwrap.dedent("""
    import importlib.util, sys
    import numpy as np
    import invariant_serve
    from invariant_serve import Client
    assert invariant_serve.__file__.startswith(sys.prefix), invariant_serve.__file__
    # The stubs live inside the package: no top-level modules of their own.
    assert importlib.util.find_spec("inference") is None
    from invariant_serve._proto.inference import grpc_service_pb2
    assert grpc_service_pb2.DESCRIPTOR.package == "inference"
    X = np.frombuffer(open(sys.argv[2], "rb").read(), dtype="<f4").reshape(-1, 16)
    with Client(sys.argv[1]) as client:
        sys.stdout.buffer.write(client.featurize("rf", X).tobytes())
""")


def test_pip_install_into_a_venv_and_call_the_server(server, cpp_client, rows, tmp_path):
    # A copy of the three directories the build reads, so that the build
    # writes nothing into the repository.
    source = pathlib.Path(os.environ["INVARIANT_SOURCE_DIR"])
    tree = tmp_path / "tree"
    shutil.copytree(source / "python", tree / "python",
                    ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__", "_proto"))
    shutil.copytree(source / "proto", tree / "proto")
    shutil.copytree(source / "client" / "proto", tree / "client" / "proto")

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)],
                   check=True)
    python = venv / "bin" / "python"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PIP_INDEX_URL")}
    install = subprocess.run(
        [str(python), "-m", "pip", "install", "--no-build-isolation", "--no-index",
         "--disable-pip-version-check", str(tree / "python")],
        env=env, capture_output=True, text=True)
    assert install.returncode == 0, install.stdout + install.stderr

    X = rows(12, seed=21)
    (tmp_path / "x.f32").write_bytes(X.tobytes())
    (tmp_path / "check.py").write_text(SCRIPT)
    run = subprocess.run([str(python), str(tmp_path / "check.py"), server.target,
                          str(tmp_path / "x.f32")], env=env, capture_output=True,
                         cwd=tmp_path)
    assert run.returncode == 0, run.stderr.decode()
    features = np.frombuffer(run.stdout, dtype="<f4").reshape(12, 16)
    assert features.tobytes() == cpp_client("featurize", "rf", X).tobytes()
