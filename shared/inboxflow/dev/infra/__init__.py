"""Deployment tooling kept out of the deployed package: the Terraform export
(``export``) and the source archive (``archive``)."""

from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[4]
"""The repository checkout (``shared/inboxflow/dev/infra/`` is four levels down)."""
