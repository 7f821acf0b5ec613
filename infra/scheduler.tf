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
