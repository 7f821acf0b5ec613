# A Gmail watch expires after 7 days; renew every mailbox's watch daily.

resource "google_cloud_scheduler_job" "renew_watch" {
  project          = var.project_id
  region           = var.region
  name             = "inboxflow-renew-watch"
  description      = "Renew Gmail users.watch for every connected mailbox"
  schedule         = var.renew_watch_schedule
  time_zone        = var.scheduler_time_zone
  attempt_deadline = "320s"

  retry_config {
    retry_count          = 3
    min_backoff_duration = "60s"
    max_backoff_duration = "600s"
  }

  http_target {
    http_method = "POST"
    uri         = module.renew_watch.function_uri

    oidc_token {
      service_account_email = google_service_account.scheduler_invoker.email
      audience              = module.renew_watch.function_uri
    }
  }

  depends_on = [module.renew_watch]
}

# Reviewer digests (shared/inboxflow/approvals/digests.py, docs/approvals.md#digests):
# the sweep sends the daily summaries and the digests a reviewer's interval held
# back. It calls the approval function as the deadline tasks do: an OIDC token of
# the tasks identity for the tasks' audience, which POST /digest verifies itself.
# Each digest is claimed in a Firestore transaction before it is sent, so a
# retried or overlapping run sends nothing twice.
resource "google_cloud_scheduler_job" "digest" {
  project          = var.project_id
  region           = var.region
  name             = "inboxflow-digest"
  description      = "Send the reviewers' inbox digests that are due"
  schedule         = var.digest_schedule
  time_zone        = "Etc/UTC" # each reviewer's daily hour is in their own zone (inboxflow.yaml)
  attempt_deadline = "320s"

  retry_config {
    retry_count          = 1
    min_backoff_duration = "30s"
    max_backoff_duration = "120s"
  }

  http_target {
    http_method = "POST"
    uri         = "${local.tasks_url}/digest"

    oidc_token {
      service_account_email = google_service_account.tasks_invoker.email
      audience              = local.tasks_url
    }
  }

  depends_on = [module.approve]
}
