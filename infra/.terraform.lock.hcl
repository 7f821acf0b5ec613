# Provider selections for infra/ (normally written by "terraform init").
#
# Written by hand on a machine without access to registry.terraform.io: the
# versions are pinned, but NO checksums are recorded yet. The first
# `terraform init` with registry access verifies each package against the
# registry's signed SHA256SUMS and adds its hashes. To record them for every
# platform, run once and commit the result:
#   terraform providers lock -platform=linux_amd64 -platform=darwin_arm64 -platform=darwin_amd64
# After that, cloudbuild.yaml can init with -lockfile=readonly.

provider "registry.terraform.io/hashicorp/google" {
  version     = "7.0.0"
  constraints = ">= 7.0.0, < 8.0.0"
}

