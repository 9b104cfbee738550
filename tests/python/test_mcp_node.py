"""`relmem serve` driven by the official MCP TypeScript SDK (tests/mcp_client/check_server.mjs) over stdio and over
Streamable HTTP. Skipped where node or the SDK (installed by `make setup`) is absent."""
import json
import pathlib
import shutil
import subprocess
import sys
import threading

import pytest
from mcp_support import SERVE, build_demo_memory

CLIENT = pathlib.Path(__file__).resolve().parents[1] / "mcp_client"
NODE = shutil.which("node")

pytestmark = pytest.mark.skipif(
    NODE is None or not (CLIENT / "node_modules" / "@modelcontextprotocol" / "sdk" / "package.json").exists(),
    reason="node or @modelcontextprotocol/sdk is absent (scripts/install_mcp_client.sh installs the SDK)")


@pytest.fixture(scope="module")
def memory_dir(demo_dir, tmp_path_factory):
    return build_demo_memory(demo_dir, tmp_path_factory.mktemp("memory"))


def check(*args):
    done = subprocess.run([NODE, "check_server.mjs", *args], cwd=CLIENT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr[-4000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["ok"] and report["checks"]["tools"] == 8 and report["checks"]["invalid_calls"] >= 9
    assert "plan" in report["checks"]["sampling"]["stages"]
    return report


def test_sdk_client_over_stdio(demo_dir, memory_dir):
    check("stdio", sys.executable, str(demo_dir), str(memory_dir))


def test_sdk_client_over_streamable_http(demo_dir, memory_dir):
    server = subprocess.Popen(SERVE + ["--dbs", str(demo_dir), "--memory", str(memory_dir), "--timeout", "2",
                                       "--http", "0"], stderr=subprocess.PIPE, text=True)
    try:
        line = server.stderr.readline()
        assert "http://127.0.0.1:" in line, line
        threading.Thread(target=server.stderr.read, daemon=True).start()  # keeps the log pipe from filling
        check("http", line.split(" at ")[-1].strip())
        assert server.poll() is None
    finally:
        server.terminate()
        server.wait(timeout=30)
