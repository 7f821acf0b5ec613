"""The source archive every function deploys: a deterministic zip of the deployable code.

Its hash names the object Terraform uploads, so it changes only when the code
does. ``inboxflow/dev/`` (this tooling, the CLI, the emulated cloud, the API
doubles) is never in it.
"""

from __future__ import annotations

import argparse
import hashlib
import zipfile
from pathlib import Path

from . import REPO_ROOT

_ZIP_EPOCH = (1980, 1, 1, 0, 0, 0)
_SKIP_PARTS = {"__pycache__", ".mypy_cache", ".pytest_cache", ".ruff_cache"}
_DEV_ONLY = {"dev"}
"""Top-level folders of the package that are never deployed."""


def source_archive_members(root: Path = REPO_ROOT) -> list[tuple[str, Path]]:
    """``(name in archive, file on disk)`` for the deployable source, sorted.

    The archive root holds ``main.py`` (from ``functions/``), the
    ``inboxflow`` package without its development tooling (``inboxflow/dev/``:
    the CLI, the emulated cloud, the API doubles), ``requirements.txt`` (the layout Cloud Functions'
    Python buildpack expects) and ``inboxflow.yaml`` (the routing rules,
    found next to the package).
    """
    members = [
        ("main.py", root / "functions" / "main.py"),
        ("requirements.txt", root / "requirements.txt"),
        ("inboxflow.yaml", root / "inboxflow.yaml"),
    ]
    package = root / "shared" / "inboxflow"
    for path in sorted(package.rglob("*")):
        relative = path.relative_to(package)
        skipped = (
            _SKIP_PARTS.intersection(path.parts)
            or path.suffix in {".pyc", ".pyo"}
            or relative.parts[0] in _DEV_ONLY
        )
        if path.is_file() and not skipped:
            members.append((f"inboxflow/{relative.as_posix()}", path))
    for name, path in members:
        if not path.is_file():
            raise FileNotFoundError(f"source archive member {name} is missing: {path}")
    return sorted(members)


def build_source_archive(out: str | Path, root: Path = REPO_ROOT) -> Path:
    """Write a byte-for-byte reproducible zip of the function source to ``out``.

    Beside ``inboxflow.yaml`` goes its compiled form (``config.compile_config``):
    the functions then read JSON at start-up instead of importing a YAML parser.
    """
    from ...config import COMPILED_SUFFIX, CONFIG_NAME, compile_config

    target = Path(out)
    target.parent.mkdir(parents=True, exist_ok=True)
    entries = [(name, path.read_bytes()) for name, path in source_archive_members(root)]
    config = dict(entries).get(CONFIG_NAME)
    compiled = compile_config(config.decode("utf-8"), root / CONFIG_NAME) if config else None
    if compiled is not None:
        entries.append((CONFIG_NAME + COMPILED_SUFFIX, compiled.encode("utf-8")))
    with zipfile.ZipFile(target, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, data in sorted(entries):
            info = zipfile.ZipInfo(name, date_time=_ZIP_EPOCH)
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, data)
    return target


def main(argv: list[str] | None = None) -> int:
    """``python -m inboxflow.dev.infra.archive [--out PATH]`` (used by cloudbuild.yaml)."""
    parser = argparse.ArgumentParser(
        prog="python -m inboxflow.dev.infra.archive", description="build the function source zip"
    )
    parser.add_argument("--out", default="dist/source.zip")
    args = parser.parse_args(argv)
    path = build_source_archive(args.out)
    print(f"{path} sha256={hashlib.sha256(path.read_bytes()).hexdigest()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
