# The secrets exist here; their values never pass through Terraform (or its
# state). Add a version out of band before the first full apply, see
# docs/deploy.md:
#   gcloud secrets versions add GMAIL_CREDENTIALS --data-file=gmail-credentials.json
#   gcloud secrets versions add GEMINI_API_KEY --data-file=-   # llm = "gemini_api" only
#
# Replication: automatic by default (Secret Manager stores the secret as
# `global`). An organization whose constraints/gcp.resourceLocations does not
# allow `global` refuses that; list the regions the secrets may live in
# (secret_replication_locations) and they are user-managed there instead.
# Replication cannot change after creation (the provider replaces the
# secret, versions included): choose before the first apply.

variable "secret_replication_locations" {
  type        = list(string)
  description = "Where every secret inboxflow creates (secret_ids, INBOXFLOW_SES_CREDENTIALS) is replicated. Empty: automatic replication (stored as global; refused where constraints/gcp.resourceLocations excludes global). Else user-managed replication in exactly these regions, e.g. [\"europe-west1\"]. Cannot change once the secrets exist."
  default     = []

  validation {
    condition     = alltrue([for location in var.secret_replication_locations : can(regex("^[a-z]+-[a-z]+[0-9]+$", location))])
    error_message = "secret_replication_locations must list regions such as europe-west1 (not global or a multi-region)."
  }
}

locals {
  secret_user_managed = length(var.secret_replication_locations) > 0
}

locals {
  # secret_ids, and the Gemini key when the nodes call the Gemini API with it.
  runtime_secret_ids = toset(concat(var.secret_ids, var.llm == "gemini_api" ? ["GEMINI_API_KEY"] : []))
}

resource "google_secret_manager_secret" "runtime" {
  for_each = local.runtime_secret_ids

  project   = var.project_id
  secret_id = each.value

  # secret_replication_locations (secrets.tf): automatic, or only where listed.
  replication {
    dynamic "auto" {
      for_each = local.secret_user_managed ? [] : [1]
      content {}
    }
    dynamic "user_managed" {
      for_each = local.secret_user_managed ? [1] : []
      content {
        dynamic "replicas" {
          for_each = toset(var.secret_replication_locations)
          content {
            location = replicas.value
          }
        }
      }
    }
  }

  depends_on = [google_project_service.enabled]
}
