# Approval deadlines and reminders: HTTP tasks named after the approval id,
# targeting the approval function's timeout endpoint with an OIDC token of
# the tasks identity. The handler is idempotent (it does nothing unless the
# approval is still pending), so retries are safe.

resource "google_cloud_tasks_queue" "approvals" {
  project  = var.project_id
  name     = var.tasks_queue
  location = var.region

  rate_limits {
    max_dispatches_per_second = var.tasks_max_dispatches_per_second
    max_concurrent_dispatches = 10
  }

  retry_config {
    max_attempts       = var.tasks_max_attempts
    max_retry_duration = var.tasks_max_retry_duration
    min_backoff        = var.tasks_min_backoff
    max_backoff        = var.tasks_max_backoff
    max_doublings      = 5
  }

  stackdriver_logging_config {
    sampling_ratio = 1.0
  }

  depends_on = [google_project_service.enabled]
}
