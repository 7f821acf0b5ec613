# Function images. Every code change rebuilds every function (one image per
# function, 31 and more), and the gcf-artifacts repository Cloud Functions
# creates by itself keeps them all, forever. The functions push to this
# repository instead (build_config.docker_repository), whose cleanup policy
# keeps the artifact_keep_count most recent versions of each function's
# image (the live revision and a few to roll traffic back to: docs/deploy.md,
# Rolling back) and deletes the others once they are a day old.
# A gcf-artifacts repository left by an earlier deploy is no longer written
# to; delete it once (docs/deploy.md).

variable "artifact_keep_count" {
  type        = number
  description = "Versions of each function's image the Artifact Registry cleanup policy keeps (the newest); older ones are deleted once a day old. At least 2: the live revision and one to roll back to."
  default     = 5

  validation {
    condition     = var.artifact_keep_count >= 2
    error_message = "artifact_keep_count must be at least 2."
  }
}

resource "google_artifact_registry_repository" "functions" {
  #checkov:skip=CKV_GCP_84:Holds our own function images built from the repository's code, no customer data; Google-managed encryption is enough and avoids a KMS key per environment.
  project       = var.project_id
  location      = var.region
  repository_id = "inboxflow-functions"
  description   = "inboxflow function images (Cloud Functions builds); old versions are cleaned up."
  format        = "DOCKER"

  cleanup_policy_dry_run = false

  # Keep wins over delete: the newest versions of every package stay.
  cleanup_policies {
    id     = "keep-recent"
    action = "KEEP"
    most_recent_versions {
      keep_count = var.artifact_keep_count
    }
  }

  cleanup_policies {
    id     = "delete-older"
    action = "DELETE"
    condition {
      tag_state  = "ANY"
      older_than = "86400s"
    }
  }

  depends_on = [google_project_service.enabled]
}
