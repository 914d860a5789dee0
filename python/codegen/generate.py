"""Generates the typed clients `ostrakon.api` (sync) and `ostrakon.api_async` from the
schema (`schema/schema.graphql`) and the named operations in `queries/`, with
ariadne-codegen (pydantic v2 models, one method per operation). The examples of errors
(`queries/error_*.graphql`) are left out: they are operations the server refuses.

    python python/codegen/generate.py          # rewrite python/ostrakon/api*
    python python/codegen/generate.py --check  # fail if they differ from a fresh run
"""

from __future__ import annotations

import difflib
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "python" / "ostrakon"
HERE = Path(__file__).resolve().parent

# The version whose output is committed: another may write other code.
ARIADNE_CODEGEN = "0.19.0"

TARGETS = {
    "api": dict(async_client=False, client_name="Api", base="typed_base.py", base_name="TypedBase"),
    "api_async": dict(async_client=True, client_name="AsyncApi", base="typed_base_async.py", base_name="AsyncTypedBase"),
}


def config(target: str, queries: Path, out: Path) -> str:
    t = TARGETS[target]
    return f"""[tool.ariadne-codegen]
schema_path = "{(ROOT / 'schema' / 'schema.graphql').as_posix()}"
queries_path = "{queries.as_posix()}"
target_package_name = "{target}"
target_package_path = "{out.as_posix()}"
async_client = {str(t['async_client']).lower()}
client_name = "{t['client_name']}"
base_client_name = "{t['base_name']}"
base_client_file_path = "{(HERE / t['base']).as_posix()}"
include_comments = "none"
multipart_uploads = false

[tool.ariadne-codegen.scalars.DateTime]
type = "ostrakon._scalars.DateTime"
parse = "ostrakon._scalars.parse_datetime"
serialize = "ostrakon._scalars.serialize_datetime"

[tool.ariadne-codegen.scalars.JSON]
type = "typing.Any"
"""


def generate(out: Path) -> None:
    from importlib.metadata import version

    found = version("ariadne-codegen")
    if found != ARIADNE_CODEGEN:
        sys.exit(f"ariadne-codegen {ARIADNE_CODEGEN} writes the committed code; this is {found}")
    with tempfile.TemporaryDirectory() as tmp:
        queries = Path(tmp) / "queries"
        queries.mkdir()
        for f in sorted((ROOT / "queries").glob("*.graphql")):
            if not f.name.startswith("error_"):
                shutil.copy(f, queries / f.name)
        for target in TARGETS:
            toml = Path(tmp) / f"{target}.toml"
            toml.write_text(config(target, queries, out))
            command = [sys.executable, "-m", "ariadne_codegen", "--config", str(toml), "client"]
            done = subprocess.run(command, capture_output=True, text=True)
            if done.returncode != 0:
                sys.exit(f"ariadne-codegen failed for {target}:\n{done.stdout}\n{done.stderr}")


def files(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): p.read_text() for p in sorted(root.rglob("*.py"))}


def main() -> int:
    check = "--check" in sys.argv[1:]
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        generate(out)
        drift = []
        for target in TARGETS:
            fresh, committed = files(out / target), files(PACKAGE / target) if (PACKAGE / target).exists() else {}
            if fresh == committed:
                continue
            if check:
                for name in sorted(set(fresh) | set(committed)):
                    a, b = committed.get(name, "").splitlines(), fresh.get(name, "").splitlines()
                    drift.extend(difflib.unified_diff(a, b, f"committed/{target}/{name}", f"fresh/{target}/{name}", lineterm=""))
            else:
                shutil.rmtree(PACKAGE / target, ignore_errors=True)
                shutil.copytree(out / target, PACKAGE / target)
                print(f"wrote python/ostrakon/{target}")
        if drift:
            print("\n".join(drift[:200]))
            print("the typed clients differ from the schema and queries/: run python python/codegen/generate.py")
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
