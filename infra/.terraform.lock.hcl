# Provider selections for infra/ (normally written by "terraform init").
#
# Written by hand on a machine without access to registry.terraform.io: the
# versions are pinned, but NO checksums are recorded, on purpose. Never add
# hashes by hand or copy them from another project: Terraform 1.11 refuses a
# package that matches none of the recorded hashes, with or without
# -lockfile=readonly, so one wrong hash stops every deploy; an entry without
# hashes is accepted. Until hashes are recorded, each `terraform init`
# (cloudbuild.yaml's included) installs the pinned version after checking the
# registry's signed SHA256SUMS, and writes hashes only into its own copy.
# To record them for every platform, run once with registry access and commit
# the result:
#   terraform providers lock -platform=linux_amd64 -platform=darwin_arm64 -platform=darwin_amd64
# After that, cloudbuild.yaml can init with -lockfile=readonly, so a build
# checks the packages against the committed hashes and never rewrites them.

provider "registry.terraform.io/hashicorp/google" {
  version     = "7.0.0"
  constraints = ">= 7.0.0, < 8.0.0"
}


provider "registry.terraform.io/hashicorp/time" {
  version     = "0.13.1"
  constraints = ">= 0.13.1, < 0.14.0"
}
