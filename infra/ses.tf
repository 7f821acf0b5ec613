# Reviewers outside Google: inboxflow.yaml `reviewers:` entries with
# `channel: ses` are emailed through Amazon SES v2 (adapters/ses_notifier.py).
# The AWS access key lives in one Secret Manager secret, mounted as
# INBOXFLOW_SES_CREDENTIALS (JSON: aws_access_key_id, aws_secret_access_key)
# into the functions that notify reviewers, and no other: pausing nodes and
# nodes that declare `notifies` (escalation notices), and the approval
# function (escalations on timeout). Region and sender come from inboxflow.yaml.
#
# Off by default: a mounted secret must have a version. Add one out of band,
# then set ses_enabled = true:
#   printf '{"aws_access_key_id":"AKIA...","aws_secret_access_key":"..."}' |
#     gcloud secrets versions add INBOXFLOW_SES_CREDENTIALS --data-file=-
# Give the AWS key only ses:SendEmail (an IAM policy on the AWS side).

variable "ses_enabled" {
  type        = bool
  description = "Create the INBOXFLOW_SES_CREDENTIALS secret and mount it into the functions that notify reviewers (set after adding a version)."
  default     = false
}

locals {
  ses_secret_ids = var.ses_enabled ? ["INBOXFLOW_SES_CREDENTIALS"] : []

  # Environment variable => secret, like local.gmail_secret; empty when SES is off.
  ses_secret = {
    for id in local.ses_secret_ids : id => google_secret_manager_secret.ses[id].secret_id
  }

  # The approval function mails escalations: Gmail's credentials and SES's.
  approve_secrets = merge(local.gmail_secret, local.ses_secret)
}

resource "google_secret_manager_secret" "ses" {
  for_each = toset(local.ses_secret_ids)

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
